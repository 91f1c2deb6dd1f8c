"""The ``sqsemu`` command line: one option per :class:`~sqsemu.config.Config` field, nothing more.

Every option can also be given as an environment variable ``SQSEMU_<FIELD>`` (e.g. ``SQSEMU_PORT=9325``);
a flag on the command line wins over the variable. Invalid values are reported by click (exit status 2).
"""

from __future__ import annotations

from typing import Any

import click

from sqsemu import __version__
from sqsemu.config import CLOCKS, FIDELITIES, Config

_DEFAULTS = Config()
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


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
    help="Log every request (costs throughput).",
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
@click.version_option(__version__, "--version", "-V", prog_name="sqsemu")
def main(**options: Any) -> None:
    """Run a local Amazon SQS-compatible server (AWS JSON 1.0 and AWS Query protocols), in memory."""
    config = Config(**options)
    from sqsemu.server import run

    run(config)


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="sqsemu")
