"""``python -m sqsemu``: the same command line as the ``sqsemu`` console script."""

from __future__ import annotations

if __name__ == "__main__":
    from sqsemu import gcpause

    gcpause.pause()  # before the command line's imports: the server resumes it once its modules are imported
    from sqsemu.cli import main

    main(prog_name="sqsemu")
