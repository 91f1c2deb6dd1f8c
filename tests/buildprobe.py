"""Whether this machine can build sqsemu's compiled hot path: mypyc imports and a C compiler builds against
``Python.h`` (the same two conditions ``setup.py`` checks before compiling; see sqsemu/compiled.py)."""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sysconfig
import tempfile


def can_compile() -> str:
    """``""`` when mypyc and a C compiler are there; else what is missing."""
    if importlib.util.find_spec("mypyc") is None:
        return "mypyc is not installed"
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    include = sysconfig.get_paths()["include"]
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.c")
        with open(probe, "w") as f:
            f.write("#include <Python.h>\nint main(void) { return 0; }\n")
        try:
            result = subprocess.run(
                [*shlex.split(cc), "-fsyntax-only", f"-I{include}", probe], capture_output=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"no C compiler ({cc}: {error})"
    return "" if result.returncode == 0 else f"{cc} cannot build against Python.h"
