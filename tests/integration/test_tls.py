"""``--tls`` over real sockets: the port serves HTTPS only, with a certificate from the local CA that real clients
verify when told to trust ``ca.pem`` (or the Java truststore), and the operator's own certificate with
``--tls-cert``/``--tls-key`` (docs/tls.md).

- **Clients**: current boto3 (AWS JSON 1.0) and boto3 1.28.64 (AWS Query) with ``verify=<ca.pem>``; the AWS CLI with
  ``AWS_CA_BUNDLE``; the AWS SDK for JavaScript v3 with ``NODE_EXTRA_CA_CERTS``; the JDK's HTTP client with
  ``-Djavax.net.ssl.trustStore=<truststore.p12>``; Python's strict verification (``VERIFY_X509_STRICT``, Python 3.13's
  default) by ``localhost`` and by ``127.0.0.1``. A client that does not trust the CA is refused by its own check. A
  client that is missing is skipped, saying which.
- **What TLS changes for a call**: queue URLs read ``https://``; ``aws:SecureTransport`` is ``true`` under
  ``--auth iam`` (docs/security.md's "Deny without TLS" example allows over HTTPS what it denies over plain HTTP,
  and a Deny on ``true`` denies over HTTPS).
- **What it does not change**: the HTTP rules of sqsemu's one protocol hold through TLS (requests pipelined in one
  TLS write answered in order, half a head answered 408 at the read deadline, a head over the cap answered 431).
- **The image**: the Dockerfile's health check asks over HTTPS when ``SQSEMU_TLS`` is set.
- **The edges**: a plain-HTTP request to the TLS port gets no HTTP answer and its connection closed, without a
  traceback, and the server goes on; the CA is made once in the per-user folder and reused; an operator's key that
  is not the certificate's exits 2, a CA folder that cannot be used exits 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.exceptions import ClientError, SSLError
from harness import ServerProcess, client_for, json_client
from harness.node import run_js_check
from harness.sockets import recv_until_closed

from sqsemu.config import Config
from sqsemu.security.localca import ensure
from sqsemu.server import ServerThread
from tests.integration.test_docker import dockerfile_instructions, healthcheck_argv, local_program
from tests.integration.test_fast_lane import json_call, read_answer
from tests.integration.test_request_context import A, doc_policy, iam_config, queue_with_policy, root_client

pytestmark = pytest.mark.integration


class TLSServer:
    """A ``--tls`` server process and the files its clients trust."""

    def __init__(self, srv: ServerProcess, folder: Path) -> None:
        self.srv = srv
        self.folder = folder
        self.ca = folder / "ca.pem"
        self.truststore = folder / "truststore.p12"

    @property
    def url(self) -> str:
        return self.srv.endpoint_url


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TLSServer]:
    folder = tmp_path_factory.mktemp("tls") / "ca"
    srv = ServerProcess(["--tls", "--tls-dir", str(folder)]).start()
    yield TLSServer(srv, folder)
    assert srv.stop() == 0, srv.log_tail()


def strict_context(ca: Path) -> ssl.SSLContext:
    """Python's default client context trusting ``ca`` only, with Python 3.13's strict checks on any Python."""
    context = ssl.create_default_context(cafile=str(ca))
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    return context


def test_the_endpoint_serves_https(tls: TLSServer) -> None:
    assert tls.url.startswith("https://127.0.0.1:")
    log = tls.srv.log_tail(100_000)
    assert f"serving SQS at {tls.url} " in log
    assert f"AWS_CA_BUNDLE={tls.ca}; Node NODE_EXTRA_CA_CERTS={tls.ca}" in log
    assert f"Java -Djavax.net.ssl.trustStore={tls.truststore} (PKCS#12, no password)" in log


def test_boto3_sends_and_receives_over_https_with_https_queue_urls(tls: TLSServer, protocol: str) -> None:
    sqs = client_for(tls.url, protocol, verify=str(tls.ca))
    try:
        url = sqs.create_queue(QueueName=f"tls-{protocol}-{uuid.uuid4().hex[:8]}")["QueueUrl"]
        assert url.startswith(f"{tls.url}/000000000000/"), url
        assert sqs.get_queue_url(QueueName=url.rsplit("/", 1)[1])["QueueUrl"] == url
        sent = sqs.send_message(QueueUrl=url, MessageBody="over TLS")
        assert sent["MD5OfMessageBody"] == hashlib.md5(b"over TLS").hexdigest()
        (message,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
        assert message["Body"] == "over TLS"
        assert url in sqs.list_queues(QueueNamePrefix="tls-")["QueueUrls"]
        sqs.delete_queue(QueueUrl=url)
    finally:
        sqs.close()


def test_a_client_that_does_not_trust_the_ca_is_refused_by_its_own_check(
    tls: TLSServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)
    sqs = json_client(tls.url)  # botocore's own trust: the public CAs, not the local one
    try:
        with pytest.raises(SSLError, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
            sqs.list_queues()
    finally:
        sqs.close()


def aws_cli() -> str:
    beside = Path(sys.executable).with_name("aws")
    found = str(beside) if os.access(beside, os.X_OK) else shutil.which("aws")
    if found is None:
        pytest.skip("the AWS CLI (aws) is not installed (the test extra installs awscli)")
    return found


def run_cli(tls: TLSServer, *args: str, bundle: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION="us-east-1")
    env.update(AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull)
    if bundle is not None:
        env["AWS_CA_BUNDLE"] = str(bundle)
    command = [aws_cli(), "sqs", *args, "--endpoint-url", tls.url, "--output", "json"]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


def test_the_aws_cli_trusts_the_ca_through_aws_ca_bundle(tls: TLSServer) -> None:
    name = f"tls-cli-{uuid.uuid4().hex[:8]}"
    made = run_cli(tls, "create-queue", "--queue-name", name, bundle=tls.ca)
    assert made.returncode == 0, made.stderr
    url = json.loads(made.stdout)["QueueUrl"]
    assert url == f"{tls.url}/000000000000/{name}"
    sent = run_cli(tls, "send-message", "--queue-url", url, "--message-body", "from the CLI", bundle=tls.ca)
    assert sent.returncode == 0, sent.stderr
    assert json.loads(sent.stdout)["MD5OfMessageBody"] == hashlib.md5(b"from the CLI").hexdigest()
    refused = run_cli(tls, "list-queues", bundle=None)
    assert refused.returncode != 0 and "SSL validation failed" in refused.stderr, refused.stderr


def test_the_javascript_sdk_v3_trusts_the_ca_through_node_extra_ca_certs(tls: TLSServer) -> None:
    summary = run_js_check("sdk_check.mjs", tls.url, env={"NODE_EXTRA_CA_CERTS": str(tls.ca)})
    assert summary["ok"] is True
    assert summary["queueUrl"].startswith(f"{tls.url}/")


JAVA_CHECK = """
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

public class TlsCheck {
    public static void main(String[] args) throws Exception {
        HttpResponse<String> answer = HttpClient.newHttpClient().send(
            HttpRequest.newBuilder(URI.create(args[0] + "/health")).build(), HttpResponse.BodyHandlers.ofString());
        System.out.println(answer.statusCode() + " " + answer.body());
    }
}
"""


def test_java_trusts_the_ca_through_the_pkcs12_truststore(tls: TLSServer, tmp_path: Path) -> None:
    java = shutil.which("java")
    if java is None:
        pytest.skip("no Java (java) on the PATH: the truststore check needs a JDK 11 or later")
    source = tmp_path / "TlsCheck.java"
    source.write_text(JAVA_CHECK)
    trusted = [java, f"-Djavax.net.ssl.trustStore={tls.truststore}", str(source), tls.url]
    done = subprocess.run(trusted, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    status, _, body = done.stdout.strip().partition(" ")
    assert status == "200" and json.loads(body)["status"] == "ok"
    untrusted = subprocess.run([java, str(source), tls.url], capture_output=True, text=True, timeout=120)
    assert untrusted.returncode != 0 and "PKIX path building failed" in untrusted.stderr, untrusted.stderr


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1"])
def test_pythons_strict_verification_accepts_the_server_by_name_and_address(tls: TLSServer, name: str) -> None:
    context = strict_context(tls.ca)
    assert context.verify_flags & ssl.VERIFY_X509_STRICT
    with socket.create_connection(("127.0.0.1", tls.srv.port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=name) as sock:
            assert sock.version() in ("TLSv1.2", "TLSv1.3")
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            status, _, body = read_answer(sock, bytearray())
    assert status == 200 and json.loads(body)["status"] == "ok"


def test_a_plain_http_request_to_the_tls_port_is_refused_cleanly(tls: TLSServer) -> None:
    with socket.create_connection(("127.0.0.1", tls.srv.port), timeout=10) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data, _, closed = recv_until_closed(sock, 10)
    assert closed, "the connection stayed open"
    assert not data.startswith(b"HTTP/"), data  # no plain-text answer: this port speaks TLS only
    log = tls.srv.log_tail(100_000)
    assert "Traceback" not in log and " ERROR " not in log, log
    with socket.create_connection(("127.0.0.1", tls.srv.port), timeout=10) as raw:  # and the server goes on
        with strict_context(tls.ca).wrap_socket(raw, server_hostname="localhost") as secure:
            secure.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            assert read_answer(secure, bytearray())[0] == 200


def test_the_images_health_check_asks_over_https_with_sqsemu_tls(tls: TLSServer) -> None:
    """The Dockerfile's HEALTHCHECK command, run here: with ``SQSEMU_TLS`` set (as ``docker run -e SQSEMU_TLS=1``
    sets it) it passes against a ``--tls`` server; without it, it asks in plain HTTP and fails."""
    health = local_program(healthcheck_argv(dockerfile_instructions()))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SQSEMU_")}
    env["SQSEMU_PORT"] = str(tls.srv.port)
    secure = subprocess.run(health, capture_output=True, text=True, timeout=30, env={**env, "SQSEMU_TLS": "true"})
    assert secure.returncode == 0, secure.stderr
    plain = subprocess.run(health, capture_output=True, text=True, timeout=30, env=env)
    assert plain.returncode != 0


# --- the HTTP rules through TLS (sqsemu's one protocol reads the decrypted bytes) -----------------------------------


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """An in-process ``--tls`` server with a 1-second request timeout."""
    folder = tmp_path_factory.mktemp("tls-rules")
    with ServerThread(Config(host="127.0.0.1", tls=True, tls_dir=str(folder), request_timeout=1)) as server:
        yield server


def secure_socket(server: ServerThread) -> ssl.SSLSocket:
    assert server.tls is not None and server.tls.ca_file is not None
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return strict_context(Path(server.tls.ca_file)).wrap_socket(raw, server_hostname="127.0.0.1")


def test_requests_pipelined_in_one_tls_write_are_answered_in_order(guarded: ServerThread) -> None:
    assert guarded.endpoint_url.startswith("https://")
    with secure_socket(guarded) as sock:
        sock.sendall(json_call("CreateQueue", {"QueueName": "pipelined"}))
        status, _, body = read_answer(sock, bytearray())
        url = json.loads(body)["QueueUrl"]
        assert status == 200 and url.startswith("https://127.0.0.1:")
        sends = [json_call("SendMessage", {"QueueUrl": url, "MessageBody": f"p{i}"}) for i in range(3)]
        health = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        sock.sendall(b"".join(sends) + health)  # one write: one TLS record stream, parsed request by request
        buffer = bytearray()
        answers = [read_answer(sock, buffer) for _ in range(4)]
    for i, (status, _, body) in enumerate(answers[:3]):
        assert status == 200 and json.loads(body)["MD5OfMessageBody"] == hashlib.md5(f"p{i}".encode()).hexdigest()
    assert answers[3][0] == 200 and json.loads(answers[3][2])["status"] == "ok"


def test_half_a_head_over_tls_is_answered_408_at_the_read_deadline(guarded: ServerThread) -> None:
    with secure_socket(guarded) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        data, seconds, closed = recv_until_closed(sock, 5)
    assert closed and data.startswith(b"HTTP/1.1 408 "), data
    assert 0.9 <= seconds < 4, seconds


def test_a_head_over_the_cap_over_tls_is_answered_431(guarded: ServerThread) -> None:
    with secure_socket(guarded) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n")
        data, _, closed = recv_until_closed(sock, 5)
    assert closed and data.startswith(b"HTTP/1.1 431 "), data


# --- aws:SecureTransport under --auth iam ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def iam_tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    with ServerThread(iam_config(tls=True, tls_dir=str(tmp_path_factory.mktemp("tls-iam")))) as server:
        yield server


def send_as_root(server: ServerThread, url: str) -> tuple[str, str]:
    """SendMessage by account A's root user: ``("allowed", "")`` or ``("denied", code)``."""
    client = root_client(server)
    try:
        client.send_message(QueueUrl=url, MessageBody="hello")
    except ClientError as exc:
        return "denied", str(exc.response["Error"]["Code"])
    finally:
        client.close()
    return "allowed", ""


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch, iam_tls: ServerThread) -> None:
    """boto3 clients made by the iam helpers trust the iam server's CA (``AWS_CA_BUNDLE``, as a user sets it)."""
    assert iam_tls.tls is not None and iam_tls.tls.ca_file is not None
    monkeypatch.setenv("AWS_CA_BUNDLE", iam_tls.tls.ca_file)


def test_the_deny_without_tls_example_allows_over_https_what_it_denies_over_http(
    iam_tls: ServerThread, trusting: None
) -> None:
    name, url = queue_with_policy(iam_tls, "payments", doc_policy("tls-only"))
    assert url.startswith(f"https://127.0.0.1:{iam_tls.port}/{A}/")
    assert send_as_root(iam_tls, url) == ("allowed", "")
    with ServerThread(iam_config()) as plain:
        _, plain_url = queue_with_policy(plain, "payments", doc_policy("tls-only"))
        assert send_as_root(plain, plain_url) == ("denied", "AccessDenied")


def test_a_deny_on_secure_transport_true_denies_over_https(iam_tls: ServerThread, trusting: None) -> None:
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:SendMessage",
                "Resource": f"arn:aws:sqs:us-east-1:{A}:{{name}}",
                "Condition": {"Bool": {"aws:SecureTransport": "true"}},
            }
        ],
    }
    _, url = queue_with_policy(iam_tls, "secure-denied", json.dumps(policy))
    assert send_as_root(iam_tls, url) == ("denied", "AccessDenied")


# --- the CA's folder, the operator's certificate, start-up failures -------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the per-user folder checked is Linux's (XDG)")
def test_the_ca_is_made_once_in_the_per_user_folder_and_reused(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    ca = tmp_path / "xdg" / "sqsemu" / "tls" / "ca.pem"
    with ServerProcess(["--tls"], env=env) as first:
        assert f"local CA {ca} (made now: clients trust it from now on)" in first.log_tail()
        pem = ca.read_bytes()
        sqs = json_client(first.endpoint_url, verify=str(ca))
        assert sqs.list_queues()["ResponseMetadata"]["HTTPStatusCode"] == 200
        sqs.close()
    with ServerProcess(["--tls"], env=env) as second:
        assert f"local CA {ca} (reused)" in second.log_tail()
        sqs = json_client(second.endpoint_url, verify=str(ca))
        assert sqs.list_queues()["ResponseMetadata"]["HTTPStatusCode"] == 200
        sqs.close()
    assert ca.read_bytes() == pem


def operator_files(folder: Path) -> tuple[Path, Path, Path]:
    """An operator's certificate and key (two files) and the CA that issued them."""
    made = ensure(folder / "their-ca", [])
    key, _, cert = made.server_file.read_text().partition("-----END PRIVATE KEY-----\n")
    (folder / "cert.pem").write_text(cert)
    (folder / "key.pem").write_text(key + "-----END PRIVATE KEY-----\n")
    return folder / "cert.pem", folder / "key.pem", made.ca_file


def test_the_operators_own_certificate_is_served_and_no_ca_is_made(tmp_path: Path) -> None:
    cert, key, their_ca = operator_files(tmp_path)
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    with ServerProcess(["--tls", "--tls-cert", str(cert), "--tls-key", str(key)], env=env) as srv:
        assert f"TLS: HTTPS only, with the operator's certificate {cert}" in srv.log_tail()
        sqs = json_client(srv.endpoint_url, verify=str(their_ca))
        url = sqs.create_queue(QueueName="own-cert")["QueueUrl"]
        assert url.startswith("https://127.0.0.1:")
        sqs.close()
    assert not (tmp_path / "xdg").exists()


def run_sqsemu(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sqsemu", "--port", "0", *args], capture_output=True, text=True, timeout=60
    )


def test_a_key_that_is_not_the_certificates_exits_2(tmp_path: Path) -> None:
    cert, _, _ = operator_files(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    _, wrong, _ = operator_files(other)
    result = run_sqsemu("--tls", "--tls-cert", str(cert), "--tls-key", str(wrong))
    assert result.returncode == 2, result.stderr
    assert "Invalid value for '--tls-key'" in result.stderr and "is not the key of the certificate" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_ca_folder_that_cannot_be_used_exits_1(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = run_sqsemu("--tls", "--tls-dir", str(blocker / "tls"))
    assert result.returncode == 1, result.stderr
    assert f"Error: cannot start: the TLS folder {blocker / 'tls'} cannot be used" in result.stderr
    assert "Traceback" not in result.stderr and "Application startup complete" not in result.stderr
