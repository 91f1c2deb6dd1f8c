"""moto's server-mode reset, ``POST /moto-api/reset``, called through ``requests`` as moto's documentation shows
(``requests.post("http://localhost:5000/moto-api/reset")`` between tests; docs/coming-from-moto.md), against a
server of its own (a reset wipes every queue of the server, so the shared session server is not used).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from botocore.exceptions import ClientError
from harness import ServerProcess, client_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def own_server() -> Iterator[ServerProcess]:
    with ServerProcess() as srv:
        yield srv


def test_reset_wipes_every_queue_and_message_like_motos_server(own_server: ServerProcess, protocol: str) -> None:
    sqs = client_for(own_server.endpoint_url, protocol)
    other = client_for(own_server.endpoint_url, protocol, access_key_id="123456789012")
    url = sqs.create_queue(QueueName=f"moto-{protocol}")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="left over from the last test")
    other.create_queue(QueueName=f"moto-other-{protocol}")

    response = requests.post(f"{own_server.endpoint_url}/moto-api/reset", timeout=10)

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert sqs.list_queues().get("QueueUrls", []) == []
    assert other.list_queues().get("QueueUrls", []) == []
    with pytest.raises(ClientError) as caught:
        sqs.receive_message(QueueUrl=url)
    assert "NonExistentQueue" in str(caught.value) or "QueueDoesNotExist" in str(caught.value)
    # and the server goes on: the next test creates its queues again
    url = sqs.create_queue(QueueName=f"moto-{protocol}")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="fresh")
    assert [m["Body"] for m in sqs.receive_message(QueueUrl=url)["Messages"]] == ["fresh"]


def test_reset_takes_only_post_as_motos_server_does(own_server: ServerProcess) -> None:
    response = requests.get(f"{own_server.endpoint_url}/moto-api/reset", timeout=10)
    assert response.status_code == 400
    assert response.json() == {"Error": "Need to POST to reset Moto"}


def test_reset_is_guarded_by_the_admin_token() -> None:
    with ServerProcess(["--admin-token", "s3cret-token"]) as srv:
        url = f"{srv.endpoint_url}/moto-api/reset"
        assert requests.post(url, timeout=10).status_code == 401
        assert requests.post(url, headers={"X-Sqsemu-Admin-Token": "wrong"}, timeout=10).status_code == 403
        response = requests.post(url, headers={"X-Sqsemu-Admin-Token": "s3cret-token"}, timeout=10)
        assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_reset_is_off_with_no_admin() -> None:
    with ServerProcess(["--no-admin"]) as srv:
        response = requests.post(f"{srv.endpoint_url}/moto-api/reset", timeout=10)
        assert response.status_code == 404
        assert "--no-admin" in response.json()["error"]
