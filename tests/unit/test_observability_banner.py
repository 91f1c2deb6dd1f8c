"""The start-up banner: its lines and fields for the configurations that change them."""

from __future__ import annotations

import logging

import pytest

from sqsemu import compiled
from sqsemu.config import Config, Credential, QueueDeclaration
from sqsemu.observability import banner as banner_module
from sqsemu.observability.banner import Banner, endpoint_url, start_warnings


def test_banner_of_the_defaults() -> None:
    banner = Banner.of(Config(), "1.2.3", 9324, restored=0)
    assert banner.lines() == [
        "sqsemu 1.2.3 serving SQS at http://127.0.0.1:9324 (region us-east-1, default account 000000000000)",
        "clock system, fidelity relaxed, data in memory, auth none (any credentials)",
        "queues: 0 restored, 0 declared",
        "metrics at http://127.0.0.1:9324/metrics; console at http://127.0.0.1:9324/_sqsemu/ui/",
        f"build: {compiled.status()}",
    ]


def test_banner_of_a_durable_server_with_declared_queues() -> None:
    config = Config(
        region="eu-west-1",
        account_id="123456789012",
        clock="manual",
        fidelity="strict",
        data_dir="/data",
        fsync="full",
        queues=(QueueDeclaration("a"), QueueDeclaration("b")),
    )
    banner = Banner.of(config, "1.2.3", 9999, restored=5, data_dir="/srv/data")
    assert banner.lines() == [
        "sqsemu 1.2.3 serving SQS at http://127.0.0.1:9999 (region eu-west-1, default account 123456789012)",
        "clock manual, fidelity strict, data durable in /srv/data (fsync full), auth none (any credentials)",
        "queues: 5 restored, 2 declared",
        "metrics at http://127.0.0.1:9999/metrics; console at http://127.0.0.1:9999/_sqsemu/ui/",
        f"build: {compiled.status()}",
    ]
    assert banner.fields() == {
        "version": "1.2.3",
        "listen": "http://127.0.0.1:9999",
        "endpoint": "http://127.0.0.1:9999",
        "region": "eu-west-1",
        "account": "123456789012",
        "clock": "manual",
        "fidelity": "strict",
        "data_dir": "/srv/data",
        "fsync": "full",
        "queues_restored": 5,
        "queues_declared": 2,
        "metrics_url": "http://127.0.0.1:9999/metrics",
        "console_url": "http://127.0.0.1:9999/_sqsemu/ui/",
        "build": compiled.status(),
        "auth": "none",
        "identities": 0,
    }


def test_banner_without_metrics_and_with_a_base_url() -> None:
    banner = Banner.of(Config(metrics=False, base_url="https://sqs.example.com"), "1", 9324, restored=0)
    assert banner.endpoint == "https://sqs.example.com"
    assert banner.lines()[0] == (
        "sqsemu 1 serving SQS at http://127.0.0.1:9324 (region us-east-1, default account 000000000000); "
        "queue URLs name https://sqs.example.com"
    )  # the address listened on comes first: the base URL is what queue URLs name, not where the server listens
    assert banner.lines()[3] == "metrics off (--no-metrics); console at https://sqs.example.com/_sqsemu/ui/"
    assert banner.fields()["metrics_url"] is None


def test_banner_names_the_console_when_built_and_the_admin_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(banner_module, "console_installed", lambda: True)
    banner = Banner.of(Config(admin_token="secret"), "1", 9324, restored=0)
    assert banner.lines()[3] == (
        "metrics at http://127.0.0.1:9324/metrics (admin token required); "
        "console at http://127.0.0.1:9324/_sqsemu/ui/ (admin token required)"
    )
    off = Banner.of(Config(admin=False), "1", 9324, restored=0)
    assert off.lines()[3] == "metrics at http://127.0.0.1:9324/metrics; console off"
    assert off.console_url is None


def test_banner_states_the_auth_mode_and_the_number_of_identities() -> None:
    keys = tuple(Credential(f"AKIDBANNER{n}", "secret", "111111111111") for n in range(3))
    sigv4 = Banner.of(Config(auth="sigv4", credentials=keys), "1", 9324, restored=0)
    assert sigv4.lines()[1] == "clock system, fidelity relaxed, data in memory, auth sigv4 (3 credentials)"
    assert (sigv4.fields()["auth"], sigv4.fields()["identities"]) == ("sigv4", 3)
    iam = Banner.of(Config(auth="iam", credentials=keys[:1]), "1", 9324, restored=0)
    assert iam.lines()[1] == "clock system, fidelity relaxed, data in memory, auth iam (1 identity)"
    assert (iam.fields()["auth"], iam.fields()["identities"]) == ("iam", 1)


def test_endpoint_url_of_an_ipv6_host() -> None:
    assert endpoint_url(Config(host="::1"), 9324) == "http://[::1]:9324"


@pytest.mark.parametrize(("host", "listen"), [("0.0.0.0", "http://0.0.0.0:9324"), ("::", "http://[::]:9324")])
def test_banner_of_a_wildcard_address_names_it_and_how_to_reach_it(host: str, listen: str) -> None:
    banner = Banner.of(Config(host=host), "1", 9324, restored=0)
    assert banner.lines()[0] == (
        f"sqsemu 1 serving SQS at {listen} (region us-east-1, default account 000000000000); "
        "every interface: http://localhost:9324 from this machine"
    )
    assert (banner.fields()["listen"], banner.fields()["endpoint"]) == (listen, "http://localhost:9324")
    assert banner.lines()[3].startswith("metrics at http://localhost:9324/metrics;")


def test_banner_of_an_elasticmq_node_address_on_a_wildcard_address() -> None:
    banner = Banner.of(Config(host="0.0.0.0", base_url="http://localhost:9324"), "1", 9400, restored=0)
    assert banner.lines()[0] == (
        "sqsemu 1 serving SQS at http://0.0.0.0:9400 (region us-east-1, default account 000000000000); "
        "every interface: http://localhost:9400 from this machine; queue URLs name http://localhost:9324"
    )


def test_banner_is_logged_at_info_with_the_facts_on_its_first_line(caplog: pytest.LogCaptureFixture) -> None:
    banner = Banner.of(Config(), "1.2.3", 9324, restored=1)
    with caplog.at_level(logging.INFO, logger="sqsemu.banner"):
        banner.log()
    records = [r for r in caplog.records if r.name == "sqsemu.banner"]
    assert [r.getMessage() for r in records] == banner.lines()
    assert all(r.levelno == logging.INFO for r in records)
    assert records[0].__dict__["fields"] == banner.fields()
    assert "fields" not in records[1].__dict__


def test_the_start_warnings_name_what_the_settings_leave_open_or_unused(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 47, finding 13: ``--auth iam`` (or sigv4) without ``--admin-token`` leaves the operator's routes open,
    and ``--init-dir`` without ``--compat localstack`` runs nothing: each said once at start, at WARNING, after the
    banner's lines. The defaults warn of nothing."""
    keys = (Credential("AKIDWARN", "secret", "111111111111"),)
    assert start_warnings(Config()) == []
    (open_routes,) = start_warnings(Config(auth="iam", credentials=keys))
    assert open_routes.startswith("--auth iam checks every SQS call, but the operator's routes are open to anyone")
    assert "/_sqsemu/*" in open_routes and "/metrics" in open_routes and "set --admin-token" in open_routes
    assert "--auth sigv4 checks" in start_warnings(Config(auth="sigv4", credentials=keys))[0]
    assert start_warnings(Config(auth="iam", credentials=keys, admin_token="tok-12345")) == []
    assert start_warnings(Config(auth="iam", credentials=keys, admin=False)) == []
    assert start_warnings(Config(init_dir="/srv/init")) == [
        "--init-dir /srv/init is set, but init scripts run only with --compat localstack: none run"
    ]
    assert start_warnings(Config(init_dir="/srv/init", compat="localstack")) == []
    banner = Banner.of(Config(auth="iam", credentials=keys), "1", 9324, restored=0)
    with caplog.at_level(logging.INFO, logger="sqsemu.banner"):
        banner.log()
    records = [r for r in caplog.records if r.name == "sqsemu.banner"]
    assert [r.getMessage() for r in records] == [*banner.lines(), open_routes]
    assert records[-1].levelno == logging.WARNING
    assert "warnings" not in banner.fields()
