"""The Spark data source's lean JSON 1.0 client (sqsemu.spark.jsonclient) answers exactly as boto3 does for the
calls it makes, raises the same ``ClientError`` codes, and retries what botocore retries. Against a real server in
a thread; needs boto3 (the spark extra) but no JVM."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("boto3")

from botocore.exceptions import ClientError  # noqa: E402

from sqsemu.spark.client import get_json_client  # noqa: E402
from sqsemu.spark.options import parse_options  # noqa: E402
from sqsemu.testing import SQSServer, new_account  # noqa: E402


@pytest.fixture(scope="module")
def server() -> Iterator[SQSServer]:
    with SQSServer(clock="system") as srv:
        yield srv


def _clients(server: SQSServer) -> tuple[Any, Any, str]:
    account = new_account()
    boto = server.client(account=account)
    options = parse_options(
        {
            "queueName": "lean",
            "endpointUrl": server.endpoint_url,
            "region": server.region,
            "accessKeyId": account,
            "secretAccessKey": "sqsemu-test-secret",
        }
    )
    url = str(boto.create_queue(QueueName="lean")["QueueUrl"])
    return boto, get_json_client(options.connection, url), url


def test_send_receive_renew_delete_match_boto3(server: SQSServer) -> None:
    boto, lean, url = _clients(server)
    attributes = {
        "kind": {"DataType": "String", "StringValue": "order"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x00\xffraw"},
        "n": {"DataType": "Number", "StringValue": "42"},
    }
    entries = [{"Id": str(i), "MessageBody": f"body-{i}", "MessageAttributes": attributes} for i in range(4)]
    sent = lean.send_message_batch(QueueUrl=url, Entries=entries)
    assert sorted(e["Id"] for e in sent["Successful"]) == ["0", "1", "2", "3"] and not sent.get("Failed")
    expected = {
        e["Id"]: boto.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=attributes) for e in entries
    }
    assert {e["MD5OfMessageAttributes"] for e in sent["Successful"]} == {
        e["MD5OfMessageAttributes"] for e in expected.values()
    }

    params: dict[str, Any] = {
        "QueueUrl": url,
        "MaxNumberOfMessages": 10,
        "VisibilityTimeout": 0,
        "MessageSystemAttributeNames": ["All"],
        "MessageAttributeNames": ["All"],
    }
    by_lean = lean.receive_message(**params)["Messages"]
    by_boto = boto.receive_message(**params)["Messages"]
    assert len(by_lean) == len(by_boto) == 8
    # Same shapes and values (binary attribute values as bytes), apart from what differs per receive.
    skip = {"ReceiptHandle", "Attributes"}
    assert sorted(({k: v for k, v in m.items() if k not in skip} for m in by_lean), key=str) == sorted(
        ({k: v for k, v in m.items() if k not in skip} for m in by_boto), key=str
    )
    assert by_lean[0]["MessageAttributes"]["blob"]["BinaryValue"] == b"\x00\xffraw"

    handles = [m["ReceiptHandle"] for m in lean.receive_message(**{**params, "VisibilityTimeout": 30})["Messages"]]
    renewed = lean.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[{"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": 60} for i, h in enumerate(handles)],
    )
    assert len(renewed["Successful"]) == len(handles)
    deleted = lean.delete_message_batch(
        QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": h} for i, h in enumerate(handles)]
    )
    assert len(deleted["Successful"]) == len(handles) and not deleted.get("Failed")
    bad = lean.delete_message_batch(QueueUrl=url, Entries=[{"Id": "x", "ReceiptHandle": "not-a-handle"}])
    assert [f["Code"] for f in bad["Failed"]] == [
        f["Code"]
        for f in boto.delete_message_batch(QueueUrl=url, Entries=[{"Id": "x", "ReceiptHandle": "not-a-handle"}])[
            "Failed"
        ]
    ]
    count = lean.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    assert (
        count["Attributes"]
        == boto.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    )


def test_errors_carry_the_code_boto3_reports(server: SQSServer) -> None:
    boto, lean, url = _clients(server)
    missing = url + "-gone"
    with pytest.raises(ClientError) as by_boto:
        boto.receive_message(QueueUrl=missing)
    with pytest.raises(ClientError) as by_lean:
        lean.receive_message(QueueUrl=missing)
    assert by_lean.value.response["Error"]["Code"] == by_boto.value.response["Error"]["Code"]
    assert by_lean.value.response["Error"]["Message"] == by_boto.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as invalid:
        lean.receive_message(QueueUrl=url, MaxNumberOfMessages=11)
    assert invalid.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_server_errors_and_throttling_are_retried_client_errors_are_not(server: SQSServer) -> None:
    _, lean, url = _clients(server)
    name = url.rsplit("/", 1)[-1]
    server.inject(action="GetQueueAttributes", queue=name, error="ServiceUnavailable", count=2)
    assert "Attributes" in lean.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
    server.inject(action="GetQueueAttributes", queue=name, error="ThrottlingException", count=1)
    assert "Attributes" in lean.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
    rule = server.inject(
        action="GetQueueAttributes", queue=name, error={"code": "AccessDenied", "status": 403}, count=1
    )
    with pytest.raises(ClientError, match="AccessDenied"):
        lean.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
    assert [r["fired"] for r in server._admin("GET", "/_sqsemu/faults")["faults"] if r["id"] == rule] == [1]
    server.inject(action="GetQueueAttributes", queue=name, drop=True, count=1)  # a lost connection: tried again
    assert "Attributes" in lean.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
    server.clear_faults()


def test_threads_share_the_keep_alive_connections(server: SQSServer) -> None:
    """Calls made one after another from short-lived threads (as the data source's pools make them) reuse one
    connection instead of opening one per thread."""
    import threading

    _, lean, url = _clients(server)
    lean.close()
    for _ in range(8):
        thread = threading.Thread(target=lean.receive_message, kwargs={"QueueUrl": url})
        thread.start()
        thread.join()
    ports = {connection.sock.getsockname()[1] for connection in lean._idle}
    assert len(lean._idle) == 1 and len(ports) == 1


def test_without_keys_in_the_options_the_default_chain_signs(
    server: SQSServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a known endpoint the lean client is built without boto3; credentials left out of the options come
    from botocore's default chain (here the environment), read at the first call."""
    boto, _, url = _clients(server)
    account = url.rstrip("/").split("/")[-2]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", account)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "from-the-environment")
    options = parse_options({"queueUrl": url, "endpointUrl": server.endpoint_url, "region": server.region})
    lean = get_json_client(options.connection, url, max_attempts=2)
    boto.send_message(QueueUrl=url, MessageBody="chain")
    assert [m["Body"] for m in lean.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]] == ["chain"]


def test_an_idle_connection_the_server_closed_is_replaced_without_an_error() -> None:
    """A pooled keep-alive connection that the server closed while it was idle (its keep-alive timeout) costs the
    call nothing: the request goes again at once on a new connection."""
    import socket
    import threading

    from sqsemu.spark.jsonclient import SQSJsonClient

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    connections: list[int] = []

    def serve() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            connections.append(1)
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                while len(body) < length:
                    body += conn.recv(65536)
                answer = b'{"Attributes":{"VisibilityTimeout":"30"}}'
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(answer), answer))
            # the connection is closed after one answer although the answer kept it alive

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    class Credentials:
        def get_frozen_credentials(self) -> Any:
            from botocore.credentials import ReadOnlyCredentials

            return ReadOnlyCredentials("AKID", "secret", None)

    client = SQSJsonClient(f"http://127.0.0.1:{port}", "us-east-1", lambda: Credentials(), max_attempts=1)
    url = f"http://127.0.0.1:{port}/000000000000/q"
    for _ in range(2):
        got = client.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
        assert got["Attributes"] == {"VisibilityTimeout": "30"}
    thread.join(5)
    listener.close()
    assert len(connections) == 2
