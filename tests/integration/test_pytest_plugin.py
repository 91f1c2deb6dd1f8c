"""The pytest plugin (sqsemu.testing.plugin) as a user meets it: test files with no imports from this repository,
run by pytester in a fresh pytest process where the installed ``pytest11`` entry point provides the fixtures.

The documentation's examples are read from where users read them and run as they stand: the README's "visibility
timeout" test and the "crashing consumer" of docs/testing.md (its wall time is printed).
"""

from __future__ import annotations

import json
import os
import re
import time
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {
    "crashing-consumer": ROOT / "docs" / "testing.md",
    "sns-fanout": ROOT / "docs" / "testing.md",
    "visibility-timeout": ROOT / "README.md",
}
"""Each example's name (its ``<!-- readme-example: NAME -->`` marker, above a python code block) and its page."""

# Records each test's call-phase duration (seconds) in durations.json: harness only, the test files stay a user's.
DURATIONS_CONFTEST = """
import json
from pathlib import Path

_durations = {}


def pytest_runtest_logreport(report):
    if report.when == "call":
        _durations[report.nodeid] = report.duration
        Path(__file__).with_name("durations.json").write_text(json.dumps(_durations))
"""


def plugin_args() -> list[str]:
    """``-p sqsemu.testing.plugin`` only when the entry point would not load it (not installed, or autoload off):
    passing it as well as the entry point would register the plugin twice."""
    installed = any(ep.value == "sqsemu.testing.plugin" for ep in entry_points(group="pytest11"))
    if installed and not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return []
    return ["-p", "sqsemu.testing.plugin"]


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *plugin_args(), *args, timeout=120)


def documented_example(name: str) -> str:
    """The code block under ``<!-- readme-example: name -->`` in its page."""
    page = EXAMPLES[name]
    text = page.read_text()
    marker = f"<!-- readme-example: {name} -->"
    assert marker in text, f"{page.relative_to(ROOT)} lost its {name} example"
    match = re.search(r"```python\n(.*?)```", text[text.index(marker) :], re.S)
    assert match is not None
    return match.group(1)


def test_the_readme_example_runs_under_the_plugin(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_readme_example=documented_example("visibility-timeout"))
    run(pytester, "-q").assert_outcomes(passed=1)


def test_the_crashing_consumer_example_runs_under_the_plugin(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(DURATIONS_CONFTEST)
    pytester.makepyfile(test_readme_example=documented_example("crashing-consumer"))
    started = time.perf_counter()
    result = run(pytester, "-q")
    wall = time.perf_counter() - started
    result.assert_outcomes(passed=1)
    durations = json.loads((pytester.path / "durations.json").read_text())
    [call_s] = durations.values()
    print(f"\ndocs/testing.md crashing-consumer example: test call {call_s * 1000:.1f} ms; pytest process {wall:.2f} s")


def test_the_sns_fanout_example_runs_under_the_plugin(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sns_example=documented_example("sns-fanout"))
    run(pytester, "-q").assert_outcomes(passed=1)


def test_fixtures_isolate_tests_by_account(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_isolation="""
        import re

        seen = {}


        def test_first(sqs, sqs_account, sqs_server):
            url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
            sqs.send_message(QueueUrl=url, MessageBody="first")
            other = sqs_server.client(sqs_server.new_account())  # a test running at the same time
            assert other.list_queues().get("QueueUrls", []) == []
            other_url = other.create_queue(QueueName="jobs")["QueueUrl"]
            assert other_url != url
            assert sqs_server.peek(other_url) == []
            seen["first"] = sqs_account
            assert f"/{sqs_account}/jobs" in url


        def test_second(sqs, sqs_account, sqs_server):
            assert re.fullmatch(r"[0-9]{12}", sqs_account) and sqs_account != "000000000000"
            assert sqs_account != seen["first"]
            assert sqs.list_queues().get("QueueUrls", []) == []
            url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
            sqs.send_message(QueueUrl=url, MessageBody="second")
            bodies = [m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]]
            assert bodies == ["second"]
            # the first test's queues went with its account
            assert not [q for q in sqs_server.queues() if q["account"] == seen["first"]]
        """
    )
    run(pytester, "-q", "-p", "no:randomly").assert_outcomes(passed=2)


def test_sns_fixtures_publish_into_queues_and_go_with_the_account(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_fanout="""
        import json

        seen = {}


        def test_fanout(sqs, sns, sns_topic, sqs_account, sqs_server):
            assert sns_topic == f"arn:aws:sns:us-east-1:{sqs_account}:test_fanout"
            url = sqs.create_queue(QueueName="billing")["QueueUrl"]
            arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            sns.subscribe(TopicArn=sns_topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})
            sns.publish(TopicArn=sns_topic, Message="order 1")
            sqs_server.sns_settle()
            assert [m["body"] for m in sqs_server.peek(url)] == ["order 1"]
            seen["account"] = sqs_account


        def test_topics_went_with_the_account(sqs_server):
            assert sqs_server.sns_client(seen["account"]).list_topics()["Topics"] == []
        """
    )
    run(pytester, "-q", "-p", "no:randomly").assert_outcomes(passed=2)


def test_clock_fixture_and_session_server(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_clock="""
        servers = []


        def test_manual_clock(sqs, sqs_clock, sqs_server):
            servers.append(sqs_server)
            assert sqs_server.clock.mode == "manual"
            start = sqs_clock.now_ms()
            assert sqs_clock.advance(2.5) == start + 2500 == sqs_clock.now_ms()
            url = sqs.create_queue(QueueName="q")["QueueUrl"]
            sqs.send_message(QueueUrl=url, MessageBody="x", DelaySeconds=10)
            assert "Messages" not in sqs.receive_message(QueueUrl=url)
            sqs_clock.advance(10)
            assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "x"


        def test_same_server(sqs_server):
            assert servers == [sqs_server]
        """
    )
    run(pytester, "-q").assert_outcomes(passed=2)


def test_system_clock_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_system="""
        import pytest
        from sqsemu.testing import AdminAPIError


        def test_system_clock(sqs_clock):
            with pytest.raises(AdminAPIError) as info:
                sqs_clock.advance(1)
            assert info.value.status == 400
        """
    )
    run(pytester, "-q", "--sqsemu-clock=system").assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nsqsemu_clock = system\n")
    run(pytester, "-q").assert_outcomes(passed=1)


def test_fixtures_are_listed(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--fixtures")
    assert result.ret == pytest.ExitCode.OK
    text = result.stdout.str()
    for name in ("sqs_server [session scope]", "sqs_account", "sqs", "sqs_clock", "sns", "sns_topic"):
        assert re.search(rf"^{re.escape(name)} -- .*sqsemu/testing/plugin.py", text, re.M), name


def test_realism_marker_turns_realism_on_for_one_test_and_repeats_run_to_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_realism="""
        import json
        from pathlib import Path

        import pytest


        def deliveries(sqs):
            url = sqs.create_queue(QueueName="ledger")["QueueUrl"]
            for n in range(40):
                sqs.send_message(QueueUrl=url, MessageBody=str(n))
            seen = []
            while True:
                got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"])
                if "Messages" not in got:
                    return seen
                for message in got["Messages"]:
                    seen.append([message["Body"], message["Attributes"]["ApproximateReceiveCount"]])
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


        @pytest.mark.sqs_realism("duplicates=0.2,reorder=0.2", seed=7)
        def test_marked(sqs, sqs_server):
            assert sqs_server.realism()["spec"] == "duplicates=0.2,reorder=0.2"
            seen = deliveries(sqs)
            assert len(seen) > 40  # some came twice
            Path("deliveries.json").write_text(json.dumps(seen))


        def test_unmarked(sqs, sqs_server):
            assert sqs_server.realism()["spec"] == "off"
            assert deliveries(sqs) == [[str(n), "1"] for n in range(40)]
        """
    )
    runs = []
    for _ in range(2):
        run(pytester, "-q", "-p", "no:randomly").assert_outcomes(passed=2)
        runs.append(json.loads((pytester.path / "deliveries.json").read_text()))
    assert runs[0] == runs[1]
