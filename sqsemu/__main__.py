"""``python -m sqsemu``: the same command line as the ``sqsemu`` console script."""

from __future__ import annotations

from sqsemu.cli import main

if __name__ == "__main__":
    main(prog_name="sqsemu")
