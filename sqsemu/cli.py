"""The ``sqsemu`` command line: one option per :class:`~sqsemu.config.Config` field, nothing more.

Every option can also be given as an environment variable ``SQSEMU_<FIELD>`` (e.g. ``SQSEMU_PORT=9325``) and
as a key of the ``[server]`` table of the configuration file (``--config``, see :mod:`sqsemu.declare`). Precedence:
command-line flag > environment variable > configuration file > default (click's ``default_map``, filled from the
file by the eager ``--config`` option before the other options are read). Invalid values, and a configuration file
that cannot be read or holds a bad key or declaration, are reported by click (exit status 2); a declaration that
conflicts with existing state (a restored queue with another attribute value) stops the start-up with exit status 1.
"""

from __future__ import annotations

from typing import Any

import click

from sqsemu import __version__
from sqsemu.config import AUTH_MODES, CLOCKS, FIDELITIES, FSYNC_LEVELS, LOG_FORMATS, LOG_LEVELS, Config

_DEFAULTS = Config()
_LOADED = "sqsemu.config_file"  # ctx.meta key of the LoadedFile read by --config


def _env(field: str) -> str:
    return f"SQSEMU_{field.upper()}"


def _check(field: str) -> Any:
    """An option callback validating one field with Config's own rules (so the CLI repeats no logic)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        try:
            Config(**{field: value})
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
        return value

    return callback


def _check_faults(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Refuse a faults file that cannot be read or holds a bad rule, before the server starts."""
    if value:
        from sqsemu.admin.faults import FaultFileError, FaultInjector

        try:
            FaultInjector().load_file(value)
        except FaultFileError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
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


def _usage_error(option: str, message: str) -> click.BadParameter:
    ctx = click.get_current_context()
    param = next(p for p in ctx.command.params if p.name == option)
    return click.BadParameter(message, ctx=ctx, param=param)


def _security_config(options: dict[str, Any], **declarations: Any) -> Config:
    """``Config(**options, **declarations)``; what only the whole configuration can check (``--auth sigv4`` needs
    credentials, and botocore) is a usage error (exit status 2) naming the field."""
    try:
        config = Config(**options, **declarations)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if config.auth == "sigv4":
        from sqsemu.security.sigv4 import botocore_missing

        missing = botocore_missing()
        if missing:
            raise _usage_error("auth", missing)
    return config


def _config(options: dict[str, Any]) -> Config:
    """The Config of the parsed options plus the declarations of the ``--config`` file, checked (exit 2 if bad)."""
    loaded = click.get_current_context().meta.get(_LOADED)
    if loaded is None:
        return _security_config(options)
    from sqsemu.declare import DeclarationError, check_declarations

    for key, value in loaded.server.items():
        options.setdefault(key, value)  # a [server] key that has no flag of its own
    config = _security_config(
        options, queues=loaded.queues, fault_rules=loaded.fault_rules, credentials=loaded.credentials
    )
    try:
        check_declarations(config)
    except DeclarationError as exc:
        ctx = click.get_current_context()
        param = next(p for p in ctx.command.params if p.name == "config")
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return config


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option(
    "--host",
    default=_DEFAULTS.host,
    show_default=True,
    envvar=_env("host"),
    show_envvar=True,
    help="Interface to listen on (0.0.0.0 for all, as in the Docker image).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=_DEFAULTS.port,
    show_default=True,
    envvar=_env("port"),
    show_envvar=True,
    help="TCP port (0 picks a free one).",
)
@click.option(
    "--region",
    default=_DEFAULTS.region,
    show_default=True,
    envvar=_env("region"),
    show_envvar=True,
    help="Region of the default namespace and of queue ARNs.",
)
@click.option(
    "--account-id",
    "account_id",
    default=_DEFAULTS.account_id,
    show_default=True,
    envvar=_env("account_id"),
    show_envvar=True,
    callback=_check("account_id"),
    help="12-digit account used when a request's access key id is not itself 12 digits.",
)
@click.option(
    "--base-url",
    "base_url",
    default=_DEFAULTS.base_url,
    envvar=_env("base_url"),
    show_envvar=True,
    callback=_check("base_url"),
    help="Fixed scheme://host:port for queue URLs  [default: from the request's Host header]",
)
@click.option(
    "--clock",
    type=click.Choice(CLOCKS),
    default=_DEFAULTS.clock,
    show_default=True,
    envvar=_env("clock"),
    show_envvar=True,
    help="system: real time; manual: time moves only via POST /_sqsemu/clock/advance.",
)
@click.option(
    "--log-level",
    "log_level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default=_DEFAULTS.log_level,
    show_default=True,
    envvar=_env("log_level"),
    show_envvar=True,
    help="Server log level.",
)
@click.option(
    "--access-log/--no-access-log",
    "access_log",
    default=_DEFAULTS.access_log,
    show_default=True,
    envvar=_env("access_log"),
    show_envvar=True,
    help="Log one line per SQS call (action, queue, protocol, status, error code, messages, latency, request id) "
    "and per admin call, at INFO (costs throughput).",
)
@click.option(
    "--log-format",
    "log_format",
    type=click.Choice(LOG_FORMATS),
    default=_DEFAULTS.log_format,
    show_default=True,
    envvar=_env("log_format"),
    show_envvar=True,
    help="text: '<time> <LEVEL> <logger> <message>' lines; json: one JSON object per line (for log collectors).",
)
@click.option(
    "--fidelity",
    "fidelity",
    type=click.Choice(FIDELITIES),
    default=_DEFAULTS.fidelity,
    show_default=True,
    envvar=_env("fidelity"),
    show_envvar=True,
    help="strict: also enforce AWS's 60-second rules (QueueDeletedRecently, PurgeQueueInProgress).",
)
@click.option(
    "--faults",
    "faults",
    default=_DEFAULTS.faults,
    metavar="PATH",
    envvar=_env("faults"),
    show_envvar=True,
    callback=_check_faults,
    help="JSON file with a list of fault-injection rules (as POST /_sqsemu/faults takes), loaded at start-up.",
)
@click.option(
    "--data-dir",
    "data_dir",
    default=_DEFAULTS.data_dir,
    envvar=_env("data_dir"),
    show_envvar=True,
    help="Durable mode: keep all state in SQLite in this folder (default: in memory).",
)
@click.option(
    "--fsync",
    "fsync",
    type=click.Choice(FSYNC_LEVELS),
    default=_DEFAULTS.fsync,
    show_default=True,
    envvar=_env("fsync"),
    show_envvar=True,
    help="Durable mode: normal survives a process crash; full also a power loss (an fsync per group commit).",
)
@click.option(
    "--cors-origins",
    "cors_origins",
    default=_DEFAULTS.cors_origins,
    metavar="ORIGINS",
    envvar=_env("cors_origins"),
    show_envvar=True,
    callback=_check("cors_origins"),
    help="Comma-separated browser origins allowed to call sqsemu cross-site, with CORS answers "
    "(https://app.example.com,http://localhost:3000; * for any)  [default: none: browsers' cross-site requests "
    "are refused]",
)
@click.option(
    "--auth",
    "auth",
    type=click.Choice(AUTH_MODES),
    default=_DEFAULTS.auth,
    show_default=True,
    envvar=_env("auth"),
    show_envvar=True,
    help="sigv4: every SQS request must be signed (Signature Version 4) with a key of the config file's "
    "[[credentials]]; none: any credentials are accepted.",
)
@click.option(
    "--admin-token",
    "admin_token",
    default=_DEFAULTS.admin_token,
    metavar="TOKEN",
    envvar=_env("admin_token"),
    show_envvar=True,
    callback=_check("admin_token"),
    help="Require this token in the X-Sqsemu-Admin-Token header of the /_sqsemu/* admin routes  [default: none: "
    "the admin routes are open]",
)
@click.option(
    "--admin/--no-admin",
    "admin",
    default=_DEFAULTS.admin,
    show_default=True,
    envvar=_env("admin"),
    show_envvar=True,
    help="Serve the /_sqsemu/* admin routes (clock, peek, reset, faults); --no-admin answers them 404. /health "
    "and /metrics stay.",
)
@click.option(
    "--metrics/--no-metrics",
    "metrics",
    default=_DEFAULTS.metrics,
    show_default=True,
    envvar=_env("metrics"),
    show_envvar=True,
    help="Serve Prometheus metrics at GET /metrics (guarded by --admin-token like the admin routes); --no-metrics "
    "answers it 404.",
)
@click.option(
    "--config",
    "config",
    default=_DEFAULTS.config,
    metavar="PATH",
    envvar=_env("config"),
    show_envvar=True,
    is_eager=True,
    callback=_load_config,
    help="TOML file with [server] options, [[queues]] to create, [[faults]] rules and [[credentials]] (README, "
    "'Configuration file'); flags and SQSEMU_* variables win over its [server] values.",
)
@click.version_option(__version__, "--version", "-V", prog_name="sqsemu")
def main(**options: Any) -> None:
    """Run a local Amazon SQS-compatible server (AWS JSON 1.0 and AWS Query protocols), in memory."""
    config = _config(options)
    from sqsemu.declare import DeclarationError
    from sqsemu.persistence import StoreError
    from sqsemu.server import run

    try:
        run(config)
    except StoreError as exc:
        raise click.ClickException(f"cannot start: {exc}") from None
    except DeclarationError as exc:  # e.g. a restored queue with another value for a declared attribute
        raise click.ClickException(str(exc)) from None


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="sqsemu")
