"""Examples read from the documentation: the code block under an HTML comment ``<!-- docs-example: NAME -->``.

The "Coming from ..." pages mark their examples this way; tests read each from its page and run it as written, so
the page and the test cannot drift apart (tests/integration/test_doc_examples.py checks every marked block is read
by some test).
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[3] / "docs"
_FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)


def example(page: str, marker: str) -> str:
    """The code of the block under ``<!-- docs-example: marker -->`` in ``docs/<page>`` (without its fences).

    Raises AssertionError when the page has lost the marker or the block."""
    text = (DOCS / page).read_text(encoding="utf-8")
    tag = f"<!-- docs-example: {marker} -->"
    assert tag in text, f"{page} lost its {marker} example"
    match = _FENCE.search(text, text.index(tag))
    assert match is not None, f"{page}: no code block under its {marker} marker"
    return match.group(1)
