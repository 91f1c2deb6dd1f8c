"""Server options, declared once, and the documentation's options table generated from them.

Each option is a :class:`~sqsemu.config.Config` field carrying an :class:`~sqsemu.optionspec.OptionSpec` (the
declarations live in :mod:`sqsemu.optionspec`, below the configuration; this module, which reads ``Config``, sits
above it and is re-exported names plus the table's generator).

A Config field is an *option* when its metadata holds an :class:`OptionSpec` (made by :func:`option`); the
declarations (``queues``, ``fault_rules``, ``credentials``) have none. Everything else follows from the field:

- the ``sqsemu`` flag (``--field-name``; ``--field-name/--no-field-name`` for a ``bool``), its help text, its
  click type (``click.Choice`` from ``choices``, ``click.IntRange`` from ``bounds``) and metavar (:mod:`sqsemu.cli`);
- the environment variable ``SQSEMU_<FIELD>``;
- the key of the configuration file's ``[server]`` table (:mod:`sqsemu.declare`; not for ``in_file=False``);
- Config's own checks of ``choices`` and ``bounds`` (:meth:`sqsemu.config.Config.__post_init__`);
- the options table of the documentation site's configuration page (``docs/configuration.md``), between the
  ``<!-- options-table -->`` markers (``python -m sqsemu.options --table`` prints it, ``--update-docs`` writes it
  there; ``tests/unit/test_options.py`` fails when the page differs). ``--readme-table`` and ``--update-readme`` are
  the older spellings of the same two commands.

Adding an option (or converting a hand-written ``@click.option`` of another branch): add the field to ``Config``
with ``metadata=option(help=..., choices=..., ...)``, delete the ``@click.option`` from ``cli.py``, run
``python -m sqsemu.options --update-docs``. The flag's spelling, the variable, the key, the click type and the
table's row need nothing more; a field added without the metadata fails ``tests/unit/test_options.py`` (only the
declarations may lack it). For example::

    console: bool = field(default=False, metadata=option(help="Show a live console of the queues."))
    log_format: str = field(default="text", metadata=option(help="Log lines as `text` or `json`.",
                                                          choices=LOG_FORMATS))

Only a value that Config cannot check from the metadata needs code: a check in ``Config.__post_init__`` (it
also guards the CLI: every plain string option is validated by building a ``Config``), or, for a check that
only the command line makes (reading a file), an entry of ``cli._CALLBACKS``.

Texts are written once for both audiences: ``help`` (and ``default_text``) may use Markdown code spans (a name
between backquotes), which ``--help`` shows without the backquotes; ``readme`` adds sentences (links, details) that
only the documentation's table shows, after ``help`` (a link is relative to ``docs/configuration.md``: ``See
[Durable mode](durable.md).``). A choice option whose texts do not name every choice in backticks gets "One of `a`,
`b`." appended in the table (``--help`` lists the choices itself).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from sqsemu.config import config_options
from sqsemu.optionspec import OPTION_KEY, Option, OptionSpec, option, options_of, spec_of

__all__ = [
    "OPTION_KEY",
    "TABLE_END",
    "TABLE_START",
    "Option",
    "OptionSpec",
    "config_options",
    "option",
    "options_of",
    "options_table",
    "replace_options_table",
    "spec_of",
    "table_section",
]

TABLE_START = "<!-- options-table: generated from Config's fields by python -m sqsemu.options --update-docs -->"
TABLE_END = "<!-- /options-table -->"
DOCS_PAGE = Path("docs") / "configuration.md"
"""The page that holds the table, relative to the source tree's root."""


def _cell(text: str) -> str:
    if "|" in text or "\n" in text:
        raise ValueError(f"an options table cell cannot hold '|' or a line break: {text!r}")
    return text


def options_table(options: Sequence[Option] | None = None) -> str:
    """The options table (Markdown, one row per option, ending with a newline)."""
    rows = ["| Flag | Environment variable | Default | Meaning |", "|---|---|---|---|"]
    for item in config_options() if options is None else options:
        cells = (f"`{item.flag}`", f"`{item.envvar}`", item.readme_default, item.readme_meaning)
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def _split(text: str) -> tuple[str, str, str]:
    """``(before, table, after)`` of a page's text around the generated table (markers included in before and
    after); ``ValueError`` when the markers are missing or out of order."""
    start = text.find(TABLE_START)
    end = text.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no {TABLE_START!r} ... {TABLE_END!r} section")
    head = start + len(TABLE_START) + 1  # the marker's line break
    return text[:head], text[head:end], text[end:]


def table_section(text: str) -> str:
    """The options table as written in a page's text (between the markers)."""
    return _split(text)[1]


def replace_options_table(text: str, table: str | None = None) -> str:
    """A page's text with the generated table (or ``table``) between the markers."""
    before, _, after = _split(text)
    return before + (options_table() if table is None else table) + after


def _docs_path() -> Path:
    return Path(__file__).resolve().parent.parent / DOCS_PAGE


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sqsemu.options --table`` prints the options table; ``--update-docs [PATH]`` writes it into the
    configuration page (default: the source tree's docs/configuration.md)."""
    import argparse  # this tool's own: not among the server's start-up imports

    parser = argparse.ArgumentParser(prog="python -m sqsemu.options", description=main.__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--table", "--readme-table", action="store_true", help="print the options table")
    group.add_argument(
        "--update-docs",
        "--update-readme",
        nargs="?",
        const=str(_docs_path()),
        metavar="PATH",
        help=f"write it into {DOCS_PAGE}",
    )
    args = parser.parse_args(argv)
    if args.table:
        sys.stdout.write(options_table())
        return 0
    path = Path(args.update_docs)
    text = path.read_text(encoding="utf-8")
    updated = replace_options_table(text)
    if updated != text:
        path.write_text(updated, encoding="utf-8")
    print(f"{path}: options table {'updated' if updated != text else 'already up to date'}")
    return 0


if __name__ == "__main__":
    # Run as a script this module is __main__: use the imported module's functions.
    from sqsemu.options import main as _main

    sys.exit(_main())
