"""``Config`` checks every field itself, whoever fills it: code, the CLI, the environment or the file."""

from __future__ import annotations

from typing import Any

import pytest

from sqsemu.config import Config
from sqsemu.testing import SQSServer


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"log_level": "x"}, "log_level must be one of critical, error, warning, info, debug, trace, got 'x'"),
        ({"port": "9324"}, "port must be an integer from 0 to 65535, got '9324'"),
        ({"port": True}, "port must be an integer from 0 to 65535, got True"),
        ({"port": 70000}, "port must be an integer from 0 to 65535, got 70000"),
        ({"access_log": "yes"}, "access_log must be a bool, got 'yes'"),
        ({"data_dir": None}, "data_dir must be a str, got None"),
        ({"host": ""}, "host must not be empty"),
        ({"region": "US East"}, "region must be lower-case letters and digits joined by hyphens"),
        ({"account_id": "123"}, "account_id must be 12 digits, got '123'"),
        ({"clock": "fast"}, "clock must be one of system, manual, got 'fast'"),
        ({"request_timeout": 0}, "request_timeout must be an integer from 1 to 3600 (seconds), got 0"),
        ({"max_connections": 0}, "max_connections must be an integer from 1 to 1000000, got 0"),
    ],
)
def test_a_bad_value_is_refused_when_the_config_is_made(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as exc:
        Config(**values)
    assert str(exc.value).startswith(message)


def test_good_values_are_kept_and_the_log_level_is_lower_cased() -> None:
    config = Config(log_level="DEBUG", region="eu-central-1", port=0, access_log=True)
    assert (config.log_level, config.region, config.port, config.access_log) == ("debug", "eu-central-1", 0, True)
    assert Config(region="local").region == "local"


def test_sqsserver_refuses_a_bad_log_level_before_starting_anything() -> None:
    with pytest.raises(ValueError, match="log_level must be one of"):
        SQSServer(log_level="loud")
