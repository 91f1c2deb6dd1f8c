"""The ``sqsemu`` command line: one option per :class:`~sqsemu.config.Config` option field, nothing more.

The options are not written out here: :func:`_options` makes each ``@click.option`` from its Config field and the
field's :class:`~sqsemu.options.OptionSpec` (flag, help, click type, metavar, environment variable). To add an
option, or to convert a hand-written ``@click.option`` (say ``--metrics/--no-metrics`` or ``--log-format``), give
its Config field ``metadata=option(help=..., choices=...)`` and delete the ``@click.option`` (see
:mod:`sqsemu.options`). A plain string option is checked by Config's own rules (``_check``), a choice or an
integer range by its click type; an option whose flag must do more (read a file) has an entry in ``_CALLBACKS``.

Every option can also be given as an environment variable ``SQSEMU_<FIELD>`` (e.g. ``SQSEMU_PORT=9325``) and
as a key of the ``[server]`` table of the configuration file (``--config``, see :mod:`sqsemu.declare`). Precedence:
command-line flag > environment variable > configuration file > default (click's ``default_map``, filled from the
file by the eager ``--config`` option before the other options are read). A bad value that came from the file is
reported against ``--config``, naming the file and the key, not against the flag it fills.

Commands: ``sqsemu state save FILE`` and ``sqsemu state load FILE`` are clients of a running server (its
``/_sqsemu/state`` routes, :mod:`sqsemu.state.client`); ``sqsemu`` with options and no command serves.

Exit statuses, one rule (:data:`EXIT_STATUSES`, also in ``--help`` and docs/configuration.md, "Options"):

- 0: stopped by Ctrl-C or SIGTERM (``docker stop``), after a clean shutdown;
- 1: could not start with valid settings: the address cannot be listened on (port in use, a host that is not this
  machine's), the data folder cannot be used (in use by another sqsemu, not writable, corrupt), the local CA's
  folder of ``--tls`` cannot be used, a declared queue conflicts with a restored one, or the ``--load-state`` file
  cannot be loaded;
- 2: usage error: an invalid option value (an ``--init-dir`` that does not exist included, a ``--tls-cert`` or
  ``--tls-key`` that cannot be read or does not match), or a configuration file that cannot be read or holds a bad
  key or declaration (reported by click);
- 3: the durable store failed while serving (a full disk, an I/O error), after one log line saying why: restart,
  and the server starts from what is on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from sqsemu import __version__
from sqsemu.config import Config, config_options
from sqsemu.optionspec import Option

_LOADED = "sqsemu.config_file"  # ctx.meta key of the LoadedFile read by --config
EXIT_STATUSES = (
    "Exit status: 0 when stopped by Ctrl-C or SIGTERM; 1 when it cannot start (the address cannot be listened on, "
    "the data folder or the --tls CA folder cannot be used, a declared queue conflicts with a restored one, the "
    "--load-state file cannot be loaded); 2 for an invalid option (a --tls-cert that cannot be served included) or "
    "configuration file; 3 when the durable store fails while serving."
)
"""The exit-status rule, as ``--help`` shows it."""
_F = TypeVar("_F", bound=Callable[..., Any])


def _check(field: str) -> Any:
    """An option callback validating one field with Config's own rules (so the CLI repeats no logic)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        try:
            Config(**{field: value})
        except ValueError as exc:
            raise _bad_value(ctx, param, str(exc)) from None
        return value

    return callback


def _bad_value(ctx: click.Context, param: click.Parameter, message: str) -> click.BadParameter:
    """The usage error for ``param``'s value; a value that came from the ``--config`` file's ``[server]`` table is
    reported against ``--config``, naming the file and the key (the flag and its variable were not used)."""
    loaded = ctx.meta.get(_LOADED)
    if loaded is not None and param.name and ctx.get_parameter_source(param.name) is ParameterSource.DEFAULT_MAP:
        config_param = next(p for p in ctx.command.params if p.name == "config")
        about = message if message.startswith(f"{param.name} ") else f"{param.name}: {message}"
        return click.BadParameter(f"config file {loaded.path!r}: [server] {about}", ctx=ctx, param=config_param)
    return click.BadParameter(message, ctx=ctx, param=param)


class _Integer(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.2; 8.1 is allowed
    """An int option's click type: the value as an integer within the option's bounds, refused with the message
    Config and the configuration file give (``port must be an integer from 0 to 65535, got 'foo'``)."""

    name = "integer"

    def __init__(self, item: Option) -> None:
        self.item = item

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(str(value).strip(), 10)
            except ValueError:
                self.fail(self.item.bad_integer(value), param, ctx)
        bounds = self.item.spec.bounds
        if bounds is not None and not bounds[0] <= number <= bounds[1]:
            self.fail(self.item.bad_integer(number), param, ctx)
        return number


class _Formatter(click.HelpFormatter):
    """``--help``'s formatter: an option's help is wrapped between words only, never inside one (a URL, a
    hyphenated value such as ``us-east-1``): a word longer than the column runs past it instead."""

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        import textwrap

        rows = list(rows)
        first = min(max((len(term) for term, _ in rows), default=0), col_max) + col_spacing
        width = max(self.width - first - self.current_indent, 10)
        for term, text in rows:
            self.write(f"{'':>{self.current_indent}}{term}")
            lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]
            if len(term) + self.current_indent > first - col_spacing:
                self.write("\n")
                pad = first + self.current_indent
                lines_out = [f"{'':>{pad}}{line}" for line in lines]
            else:
                lines_out = [f"{'':>{first - len(term)}}{lines[0]}"]
                lines_out += [f"{'':>{first + self.current_indent}}{line}" for line in lines[1:]]
            self.write("\n".join(lines_out) + "\n")


class _Context(click.Context):
    formatter_class = _Formatter


class _Group(click.Group):
    """``sqsemu``: the server's options, and the commands (``sqsemu state``) listed as click lists them."""

    context_class = _Context

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, command.get_short_help_str(80)) for name, command in self.commands.items()]
        if rows:
            with formatter.section("Commands"):
                click.HelpFormatter.write_dl(formatter, rows)


class _ConfigOption(click.Option):
    """A Config option's ``click.Option``: its usage error names the environment variable only when the value came
    from it (not when the flag was given), and its help ends with one ``[env var: ...; default: ...]`` in the same
    order for every option, the default in words (``default_text``) included."""

    def __init__(self, *args: Any, default_text: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default_text = default_text

    def get_error_hint(self, ctx: click.Context | None) -> str:
        hint = " / ".join(f"'{name}'" for name in self.opts)
        if ctx is not None and self.name and ctx.get_parameter_source(self.name) is ParameterSource.ENVIRONMENT:
            hint += f" (env var: '{self.envvar}')"
        return hint

    def get_help_extra(self, ctx: click.Context) -> Any:
        extra = super().get_help_extra(ctx)
        if self.default_text:
            extra["default"] = self.default_text
        return extra


def _check_faults(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Refuse a faults file that cannot be read or holds a bad rule, before the server starts."""
    if value:
        from sqsemu.admin.faults import FaultFileError, FaultInjector

        try:
            FaultInjector().load_file(value)
        except FaultFileError as exc:
            raise _bad_value(ctx, param, str(exc)) from None
    return value


def _load_config(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Read the ``--config`` file first (eager) and make its ``[server]`` values the defaults of the other options."""
    if value:
        from sqsemu.declare import ConfigFileError, load_file

        try:
            loaded = load_file(value)
        except ConfigFileError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
        ctx.meta[_LOADED] = loaded
        ctx.default_map = {**(ctx.default_map or {}), **loaded.server}
    return value


_Callback = Callable[[click.Context, click.Parameter, Any], Any]
_CALLBACKS: dict[str, tuple[_Callback, bool]] = {
    "faults": (_check_faults, False),
    "config": (_load_config, True),  # eager: its [server] values become the other options' defaults
}
"""The options whose flag does more than Config checks: ``{field: (click callback, is_eager)}``."""


def _security_config(options: dict[str, Any], **declarations: Any) -> Config:
    """``Config(**options, **declarations)``; what only the whole configuration can check (``--auth sigv4`` needs
    credentials, and botocore) is a usage error (exit status 2) naming the field where it was set (the flag, its
    variable, or the ``--config`` file's ``[server]`` key)."""
    try:
        config = Config(**options, **declarations)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if config.auth in ("sigv4", "iam"):
        from sqsemu.security.sigv4 import botocore_missing

        missing = botocore_missing(config.auth)
        if missing:
            ctx = click.get_current_context()
            raise _bad_value(ctx, next(p for p in ctx.command.params if p.name == "auth"), missing)
    return config


LOCALSTACK_PORT = 4566
"""The port of ``--compat localstack`` when neither ``--port``, ``SQSEMU_PORT`` nor the file names one."""


def _config(options: dict[str, Any]) -> Config:
    """The Config of the parsed options plus the declarations of the ``--config`` file, checked (exit 2 if bad)."""
    ctx = click.get_current_context()
    if options.get("compat") == "localstack" and ctx.get_parameter_source("port") is ParameterSource.DEFAULT:
        options = {**options, "port": LOCALSTACK_PORT}  # LocalStack's one port (sqsemu.compat.localstack)
    loaded = ctx.meta.get(_LOADED)
    if loaded is None:
        return _check_tls(_check_init_dir(_security_config(options)))
    from sqsemu.declare import DeclarationError, check_declarations

    config = _security_config(
        options,
        queues=loaded.queues,
        topics=loaded.topics,
        fault_rules=loaded.fault_rules,
        credentials=loaded.credentials,
        file_warnings=loaded.warnings,  # logged by run() once it has set up logging
    )
    try:
        check_declarations(config)
    except DeclarationError as exc:
        ctx = click.get_current_context()
        param = next(p for p in ctx.command.params if p.name == "config")
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return _check_tls(_check_init_dir(config))


def _check_tls(config: Config) -> Config:
    """``config``, unless ``--tls-cert``/``--tls-key`` name files that cannot be served (unreadable, not PEM, an
    encrypted key, a key that is not the certificate's): a usage error (exit status 2) naming the option where it
    was set. The local CA's folder is used only once the server starts (exit status 1 when it cannot be)."""
    if not (config.tls and config.tls_cert):
        return config
    from sqsemu.security.tls import TLSError, check_certificate

    try:
        check_certificate(config.tls_cert, config.tls_key or None)
    except TLSError as exc:
        ctx = click.get_current_context()
        name = "tls_key" if str(exc).startswith("tls_key") else "tls_cert"
        message = str(exc).split(": ", 1)[1] if str(exc).startswith(f"{name}: ") else str(exc)
        raise _bad_value(ctx, next(p for p in ctx.command.params if p.name == name), message) from None
    return config


def _check_init_dir(config: Config) -> Config:
    """``config``, unless it runs LocalStack's init scripts (``--compat localstack``) from an ``--init-dir`` that
    was given but cannot be what was meant: a folder that does not exist, or one holding scripts but no ``ready.d``
    (:func:`sqsemu.compat.initscripts.init_dir_problem`). That is a usage error (exit status 2) naming where it was
    set, instead of a server that runs no script and says ``Ready.``."""
    if config.compat != "localstack" or not config.init_dir:
        return config
    from sqsemu.compat.initscripts import init_dir_problem

    problem = init_dir_problem(config.init_dir)
    if problem is not None:
        ctx = click.get_current_context()
        raise _bad_value(ctx, next(p for p in ctx.command.params if p.name == "init_dir"), problem)
    return config


def _click_option(item: Option) -> Callable[[_F], _F]:
    """The ``@click.option`` of one Config option, made from its field and :class:`~sqsemu.options.OptionSpec`."""
    spec = item.spec
    kwargs: dict[str, Any] = {
        "default": item.default,
        # an empty default means nothing to click's "[default: ...]" (default_text, in the help, says what it does)
        "show_default": item.default != "" and not spec.default_text,
        "default_text": item.cli_default_text,
        "envvar": item.envvar,
        "show_envvar": True,
        "help": item.cli_help,
        "cls": _ConfigOption,
    }
    if spec.metavar:
        kwargs["metavar"] = spec.metavar
    if spec.choices:
        kwargs["type"] = click.Choice(spec.choices, case_sensitive=spec.case_sensitive)
    elif item.type is int:
        kwargs["type"] = _Integer(item)
        kwargs["metavar"] = spec.metavar or ("INTEGER" if spec.bounds is None else "{}..{}".format(*spec.bounds))
    special = _CALLBACKS.get(item.name)
    if special is not None:
        kwargs["callback"], kwargs["is_eager"] = special
    elif item.type is str and not spec.choices:
        kwargs["callback"] = _check(item.name)  # what the metadata cannot say (a pattern): Config's own rules
    return click.option(item.flag, item.name, **kwargs)


def _options(command: _F) -> _F:
    """Add one ``@click.option`` per Config option, in the fields' order."""
    for item in reversed(config_options()):  # click lists the options of stacked decorators bottom-up
        command = _click_option(item)(command)
    return command


@click.group(
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    epilog=EXIT_STATUSES,
    invoke_without_command=True,
)
@_options
@click.version_option(__version__, "--version", "-V", prog_name="sqsemu")
def main(**options: Any) -> None:
    """Run a local Amazon SQS-compatible server (AWS JSON 1.0 and AWS Query protocols). Its state is kept in memory,
    or on disk with --data-dir (durable mode). With a command (sqsemu state ...), run that instead."""
    if click.get_current_context().invoked_subcommand is not None:
        return  # ``sqsemu state ...``: a client of a running server, not a server
    from sqsemu import gcpause

    gcpause.pause()  # while the server's modules are imported (sqsemu.gcpause): run() resumes it
    try:
        _serve(_config(options))
    finally:
        gcpause.resume()  # (run() has done it, unless it was not reached)


def _serve(config: Config) -> None:
    """Serve ``config`` until stopped; a failure to start or of the store is a ``ClickException`` or the exit
    status (see the module docstring)."""
    from sqsemu.declare import DeclarationError
    from sqsemu.persistence import StoreError
    from sqsemu.security.tls import TLSError
    from sqsemu.server import STARTUP_FAILED_EXIT_STATUS, run
    from sqsemu.state.form import StateError

    try:
        status = run(config)
    except StoreError as exc:  # the data folder cannot be used (exit status 1)
        raise click.ClickException(f"cannot start: {exc}") from None
    except TLSError as exc:
        if exc.usage:  # the operator's certificate, changed since it was checked (exit status 2)
            raise click.UsageError(str(exc)) from None
        raise click.ClickException(f"cannot start: {exc}") from None  # the local CA's folder (exit status 1)
    except StateError as exc:  # the --load-state file cannot be loaded (1)
        raise click.ClickException(f"cannot start: {exc.message}") from None
    except DeclarationError as exc:  # e.g. a restored queue with another value for a declared attribute (1)
        raise click.ClickException(str(exc)) from None
    if status == STARTUP_FAILED_EXIT_STATUS:  # uvicorn logged why (the address): say it once more, last
        address = f"{config.host}:{config.port}"
        click.echo(
            f"Error: cannot start: cannot listen on {address} (see the error logged above). Another port: --port N"
            " (or SQSEMU_PORT=N; 0 picks a free one)",
            err=True,
        )
    if status:  # 1: could not start; 3: the durable store failed while serving, and logged why
        click.get_current_context().exit(status)


@main.group(name="state", context_settings={"help_option_names": ["-h", "--help"]})
def state_command() -> None:
    """Save a running server's whole state to a file, or load one into it (docs/state.md). Exit status: 0 when
    done; 1 when the server cannot be reached or refuses (the reason is printed)."""


def _client_options(command: _F) -> _F:
    """The options of ``sqsemu state save`` and ``load``: ``--endpoint``, ``--admin-token``, ``--timeout``."""
    command = click.option(
        "--timeout", default=300, show_default=True, type=click.IntRange(1), metavar="SECONDS", help="Give up after."
    )(command)
    command = click.option(
        "--admin-token",
        default="",
        envvar="SQSEMU_ADMIN_TOKEN",
        show_envvar=True,
        metavar="TOKEN",
        help="The server's --admin-token, when it has one.",
    )(command)
    return click.option(
        "--endpoint",
        default="http://127.0.0.1:9324",
        show_default=True,
        envvar="SQSEMU_ENDPOINT",
        show_envvar=True,
        metavar="URL",
        help="The running server's address.",
    )(command)


@state_command.command(name="save")
@click.argument("file", metavar="FILE")
@_client_options
def state_save(file: str, endpoint: str, admin_token: str, timeout: int) -> None:
    """Save the server's state to FILE (- for standard output), as GET /_sqsemu/state writes it."""
    from sqsemu.state.client import ClientError, save_state

    try:
        saved = save_state(endpoint, file, admin_token, timeout)
    except ClientError as exc:
        raise click.ClickException(str(exc)) from None
    if file != "-":
        click.echo(f"saved {saved['records']} records ({saved['bytes']} bytes) from {endpoint} to {file}", err=True)


@state_command.command(name="load")
@click.argument("file", metavar="FILE")
@_client_options
def state_load(file: str, endpoint: str, admin_token: str, timeout: int) -> None:
    """Replace the server's whole state by FILE's (- for standard input), as POST /_sqsemu/state does."""
    from sqsemu.state.client import ClientError, load_state

    try:
        answer = load_state(endpoint, file, admin_token, timeout)
    except ClientError as exc:
        raise click.ClickException(str(exc)) from None
    counts = ", ".join(f"{count} {table}" for table, count in answer.get("loaded", {}).items())
    click.echo(f"loaded {file} into {endpoint}: {counts}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="sqsemu")
