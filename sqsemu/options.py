"""Server options, declared once: each is a :class:`~sqsemu.config.Config` field carrying an :class:`OptionSpec`.

A Config field is an *option* when its metadata holds an :class:`OptionSpec` (made by :func:`option`); the
declarations (``queues``, ``fault_rules``, ``credentials``) have none. Everything else follows from the field:

- the ``sqsemu`` flag (``--field-name``; ``--field-name/--no-field-name`` for a ``bool``), its help text, its
  click type (``click.Choice`` from ``choices``, ``click.IntRange`` from ``bounds``) and metavar (:mod:`sqsemu.cli`);
- the environment variable ``SQSEMU_<FIELD>``;
- the key of the configuration file's ``[server]`` table (:mod:`sqsemu.declare`; not for ``in_file=False``);
- Config's own checks of ``choices`` and ``bounds`` (:meth:`sqsemu.config.Config.__post_init__`);
- the README's options table, between the ``<!-- options-table -->`` markers
  (``python -m sqsemu.options --readme-table`` prints it, ``--update-readme`` writes it into README.md;
  ``tests/unit/test_options.py`` fails when the README differs).

Adding an option (or converting a hand-written ``@click.option`` of another branch): add the field to ``Config``
with ``metadata=option(help=..., choices=..., ...)``, delete the ``@click.option`` from ``cli.py``, run
``python -m sqsemu.options --update-readme``. The flag's spelling, the variable, the key, the click type and the
README row need nothing more; a field added without the metadata fails ``tests/unit/test_options.py`` (only the
declarations may lack it). For example::

    console: bool = field(default=False, metadata=option(help="Show a live console of the queues."))
    log_format: str = field(default="text", metadata=option(help="Log lines as `text` or `json`.",
                                                          choices=LOG_FORMATS))

Only a value that Config cannot check from the metadata needs code: a check in ``Config.__post_init__`` (it
also guards the CLI: every plain string option is validated by building a ``Config``), or, for a check that
only the command line makes (reading a file), an entry of ``cli._CALLBACKS``.

Texts are written once for both audiences: ``help`` (and ``default_text``) may use Markdown code spans (a name
between backquotes), which ``--help`` shows without the backquotes; ``readme`` adds sentences (links, details) that
only the README shows, after ``help``. A choice option whose texts do not name every choice in backticks gets
"One of `a`, `b`." appended in the README (``--help`` lists the choices itself).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import MISSING, Field, dataclass, fields
from pathlib import Path
from typing import Any

__all__ = [
    "OPTION_KEY",
    "Option",
    "OptionSpec",
    "README_END",
    "README_START",
    "config_options",
    "option",
    "options_of",
    "readme_table",
    "replace_readme_table",
]

OPTION_KEY = "sqsemu.option"
"""The key of a field's metadata that holds its :class:`OptionSpec`."""
README_START = "<!-- options-table: generated from Config's fields by python -m sqsemu.options --update-readme -->"
README_END = "<!-- /options-table -->"
_TYPES: dict[str, type] = {"str": str, "int": int, "bool": bool}
_RESOLVED: dict[type, tuple[Option, ...]] = {}  # options_of's answers: a class's fields do not change


@dataclass(frozen=True)
class OptionSpec:
    """What the command line, the environment, the configuration file and the README need to know of an option
    besides its field's name, type and default.

    - ``help``: one or two sentences, for ``--help`` and the README (Markdown code spans allowed, no ``|``).
    - ``readme``: more sentences only the README shows, after ``help`` (e.g. a link to a section).
    - ``choices``: the values a ``str`` option takes (``click.Choice``; Config refuses others).
    - ``case_sensitive``: ``False`` accepts the choices in any case; Config stores them in lower case.
    - ``bounds``: ``(lowest, highest)`` of an ``int`` option, both included (``click.IntRange``; Config checks).
    - ``unit``: the unit of an int option, said in Config's message for a value out of ``bounds`` ("seconds").
    - ``metavar``: the placeholder ``--help`` shows for the value (``PATH``); default: click's (``TEXT``...).
    - ``default_text``: the default in words, when the value says nothing (an empty string): ``--help`` shows
      ``[default: <default_text>]`` and the README's Default column this text.
    - ``flag``: the flag when not derived from the field name (``--name``, ``--name/--no-name`` for a bool).
    - ``in_file``: ``False`` when the ``[server]`` table may not hold it (``config`` itself).
    - ``path``: a file or folder path; in ``[server]``, a relative one starts at the configuration file's folder.
    """

    help: str
    readme: str = ""
    choices: tuple[str, ...] = ()
    case_sensitive: bool = True
    bounds: tuple[int, int] | None = None
    unit: str = ""
    metavar: str = ""
    default_text: str = ""
    flag: str = ""
    in_file: bool = True
    path: bool = False


def option(
    help: str,
    *,
    readme: str = "",
    choices: Sequence[str] = (),
    case_sensitive: bool = True,
    bounds: tuple[int, int] | None = None,
    unit: str = "",
    metavar: str = "",
    default_text: str = "",
    flag: str = "",
    in_file: bool = True,
    path: bool = False,
) -> dict[str, OptionSpec]:
    """The metadata of a Config field that is an option: ``field(default=..., metadata=option(help=...))``.

    The parameters are :class:`OptionSpec`'s.
    """
    spec = OptionSpec(
        help=help,
        readme=readme,
        choices=tuple(choices),
        case_sensitive=case_sensitive,
        bounds=bounds,
        unit=unit,
        metavar=metavar,
        default_text=default_text,
        flag=flag,
        in_file=in_file,
        path=path,
    )
    return {OPTION_KEY: spec}


def _plain(text: str) -> str:
    """``text`` as ``--help`` shows it: Markdown code spans without their backticks."""
    return text.replace("`", "")


@dataclass(frozen=True)
class Option:
    """An option field, resolved: its name, type (``str``, ``int`` or ``bool``), default and :class:`OptionSpec`."""

    name: str
    type: type
    default: Any
    spec: OptionSpec

    @property
    def flag(self) -> str:
        """The command-line flag: ``--host``; ``--admin/--no-admin`` for a bool."""
        if self.spec.flag:
            return self.spec.flag
        dashed = self.name.replace("_", "-")
        return f"--{dashed}/--no-{dashed}" if self.type is bool else f"--{dashed}"

    @property
    def envvar(self) -> str:
        """The environment variable: ``SQSEMU_<FIELD>``."""
        return f"SQSEMU_{self.name.upper()}"

    @property
    def cli_help(self) -> str:
        """The help ``--help`` shows (click adds the variable, the default and the range)."""
        text = _plain(self.spec.help)
        if self.spec.default_text:
            text += f"  [default: {_plain(self.spec.default_text)}]"
        return text

    @property
    def readme_default(self) -> str:
        """The README's Default cell: the value in a code span, ``on``/``off``, or ``default_text``."""
        if self.spec.default_text:
            return self.spec.default_text
        if self.type is bool:
            return "on" if self.default else "off"
        if self.default == "":
            return "*(empty)*"
        return f"`{self.default}`"

    @property
    def readme_meaning(self) -> str:
        """The README's Meaning cell: ``help``, the choices unless the texts name them all, then ``readme``."""
        parts = [self.spec.help]
        texts = " ".join((self.spec.help, self.spec.readme))
        if self.spec.choices and not all(f"`{choice}`" in texts for choice in self.spec.choices):
            parts.append("One of " + ", ".join(f"`{choice}`" for choice in self.spec.choices) + ".")
        if self.spec.readme:
            parts.append(self.spec.readme)
        return " ".join(parts)


def spec_of(spec_field: Field[Any]) -> OptionSpec | None:
    """The :class:`OptionSpec` of a dataclass field, or ``None`` when the field is not an option."""
    spec = spec_field.metadata.get(OPTION_KEY)
    return spec if isinstance(spec, OptionSpec) else None


def options_of(cls: type) -> tuple[Option, ...]:
    """The option fields of the dataclass ``cls`` (Config), in declaration order.

    Raises ``TypeError`` for an option field whose type is not ``str``, ``int`` or ``bool`` or that has no plain
    default: an option must fit a flag, an environment variable and a TOML value.
    """
    cached = _RESOLVED.get(cls)
    if cached is not None:
        return cached
    found: list[Option] = []
    for spec_field in fields(cls):
        spec = spec_of(spec_field)
        if spec is None:
            continue
        annotation = spec_field.type
        kind = _TYPES.get(annotation if isinstance(annotation, str) else getattr(annotation, "__name__", ""))
        if kind is None or spec_field.default is MISSING:
            raise TypeError(f"option {spec_field.name} must be a str, int or bool field with a default")
        found.append(Option(spec_field.name, kind, spec_field.default, spec))
    resolved = _RESOLVED[cls] = tuple(found)
    return resolved


def config_options() -> tuple[Option, ...]:
    """The options of :class:`~sqsemu.config.Config`, in declaration order."""
    from sqsemu.config import Config

    return options_of(Config)


def _cell(text: str) -> str:
    if "|" in text or "\n" in text:
        raise ValueError(f"a README table cell cannot hold '|' or a line break: {text!r}")
    return text


def readme_table(options: Sequence[Option] | None = None) -> str:
    """The README's options table (Markdown, one row per option, ending with a newline)."""
    rows = ["| Flag | Environment variable | Default | Meaning |", "|---|---|---|---|"]
    for item in config_options() if options is None else options:
        cells = (f"`{item.flag}`", f"`{item.envvar}`", item.readme_default, item.readme_meaning)
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def _split_readme(text: str) -> tuple[str, str, str]:
    """``(before, table, after)`` of a README's text around the generated table (markers included in before and
    after); ``ValueError`` when the markers are missing or out of order."""
    start = text.find(README_START)
    end = text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"the README has no {README_START!r} ... {README_END!r} section")
    head = start + len(README_START) + 1  # the marker's line break
    return text[:head], text[head:end], text[end:]


def readme_section(text: str) -> str:
    """The options table as written in a README's text (between the markers)."""
    return _split_readme(text)[1]


def replace_readme_table(text: str, table: str | None = None) -> str:
    """A README's text with the generated table (or ``table``) between the markers."""
    before, _, after = _split_readme(text)
    return before + (readme_table() if table is None else table) + after


def _readme_path() -> Path:
    return Path(__file__).resolve().parent.parent / "README.md"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sqsemu.options --readme-table`` prints the README's options table; ``--update-readme [PATH]``
    writes it into the README (default: the source tree's README.md)."""
    import argparse  # this tool's own: not among the server's start-up imports

    parser = argparse.ArgumentParser(prog="python -m sqsemu.options", description=main.__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--readme-table", action="store_true", help="print the README's options table")
    group.add_argument(
        "--update-readme", nargs="?", const=str(_readme_path()), metavar="PATH", help="write it into the README"
    )
    args = parser.parse_args(argv)
    if args.readme_table:
        sys.stdout.write(readme_table())
        return 0
    path = Path(args.update_readme)
    text = path.read_text(encoding="utf-8")
    updated = replace_readme_table(text)
    if updated != text:
        path.write_text(updated, encoding="utf-8")
    print(f"{path}: options table {'updated' if updated != text else 'already up to date'}")
    return 0


if __name__ == "__main__":
    # Run as a script this module is __main__, whose OptionSpec is not the class Config's metadata holds: use the
    # imported module's functions.
    from sqsemu.options import main as _main

    sys.exit(_main())
