"""An option declared once: a :class:`~sqsemu.config.Config` field whose metadata holds an :class:`OptionSpec`.

This module is the ground floor of the configuration: it imports nothing of sqsemu, and :mod:`sqsemu.config`
declares its fields with :func:`option`. What follows from a field (the flag, the ``SQSEMU_*`` variable, the
``[server]`` key, the documentation's options table) is explained in :mod:`sqsemu.options`, the table's generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING, Field, dataclass, fields
from typing import Any

__all__ = ["OPTION_KEY", "Option", "OptionSpec", "option", "options_of", "spec_of"]

OPTION_KEY = "sqsemu.option"
"""The key of a field's metadata that holds its :class:`OptionSpec`."""
_TYPES: dict[str, type] = {"str": str, "int": int, "bool": bool}
_RESOLVED: dict[type, tuple[Option, ...]] = {}  # options_of's answers: a class's fields do not change


@dataclass(frozen=True)
class OptionSpec:
    """What the command line, the environment, the configuration file and the options table need to know of an option
    besides its field's name, type and default.

    - ``help``: one or two sentences, for ``--help`` and the options table (Markdown code spans allowed, no ``|``).
    - ``readme``: more sentences only the options table shows, after ``help`` (e.g. a link to a section).
    - ``choices``: the values a ``str`` option takes (``click.Choice``; Config refuses others).
    - ``case_sensitive``: ``False`` accepts the choices in any case; Config stores them in lower case.
    - ``bounds``: ``(lowest, highest)`` of an ``int`` option, both included (``click.IntRange``; Config checks).
    - ``unit``: the unit of an int option, said in Config's message for a value out of ``bounds`` ("seconds").
    - ``metavar``: the placeholder ``--help`` shows for the value (``PATH``); default: click's (``TEXT``...).
    - ``default_text``: the default in words, when the value says nothing (an empty string): ``--help`` shows
      ``[default: <default_text>]`` and the options table's Default column this text.
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

    def bad_integer(self, value: object) -> str:
        """The one message for a value of an int option that is not an integer or out of its ``bounds``, as Config,
        the command line and the configuration file all say it: ``port must be an integer from 0 to 65535, got
        70000`` (the unit, when there is one, after the range)."""
        if self.spec.bounds is None:
            return f"{self.name} must be an integer, got {value!r}"
        low, high = self.spec.bounds
        unit = f" ({self.spec.unit})" if self.spec.unit else ""
        return f"{self.name} must be an integer from {low} to {high}{unit}, got {value!r}"

    @property
    def envvar(self) -> str:
        """The environment variable: ``SQSEMU_<FIELD>``."""
        return f"SQSEMU_{self.name.upper()}"

    @property
    def cli_help(self) -> str:
        """The help ``--help`` shows (the command line adds the variable and the default)."""
        return _plain(self.spec.help)

    @property
    def cli_default_text(self) -> str:
        """The default as ``--help`` says it in words (``default_text`` without Markdown), or ``""``."""
        return _plain(self.spec.default_text)

    @property
    def readme_default(self) -> str:
        """The options table's Default cell: the value in a code span, ``on``/``off``, or ``default_text``."""
        if self.spec.default_text:
            return self.spec.default_text
        if self.type is bool:
            return "on" if self.default else "off"
        if self.default == "":
            return "*(empty)*"
        return f"`{self.default}`"

    @property
    def readme_meaning(self) -> str:
        """The options table's Meaning cell: ``help``, the choices unless the texts name them all, then ``readme``."""
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
