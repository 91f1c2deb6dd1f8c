"""The console of a running server keeps working when an install moves its package folder (issue 47, finding 11).

``pip install -e .`` over a regular install removes the installed ``sqsemu/`` folder while a server started from it
may still run: its console answered 500 (``TemplateNotFound``, "StaticFiles directory ... does not exist"). The
server now reads the templates and static files into memory when it starts (docs/console.md). Here a copy of the
package, run with ``PYTHONPATH``, stands for the installed one; its folders are moved away under the running
server, as an install would.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import ServerProcess, json_client
from harness.pages import Pages

import sqsemu

UI = "/_sqsemu/ui"
MARK = "/* the copy's stylesheet */"
STATIC = {
    "console.css": "text/css; charset=utf-8",
    "console.js": "text/javascript; charset=utf-8",
    "icon.svg": "image/svg+xml",
}


def _copy_package(folder: Path) -> Path:
    """A copy of the package sqsemu runs from, in ``folder`` (its compiled modules included); its folder."""
    package = Path(sqsemu.__file__).resolve().parent
    copy = folder / "sqsemu"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for shared in package.parent.glob("*__mypyc*.so"):  # mypyc's shared library, beside the package
        shutil.copy2(shared, folder / shared.name)
    css = copy / "console" / "static" / "console.css"
    css.write_text(css.read_text() + "\n" + MARK + "\n")  # tells the copy's files from the original's
    return copy


@pytest.fixture
def copied(tmp_path: Path) -> Iterator[tuple[ServerProcess, Path]]:
    """A server running from a copy of the package (``-P``: the copy on ``PYTHONPATH`` comes first); the copy."""
    copy = _copy_package(tmp_path)
    with ServerProcess(command=[sys.executable, "-P", "-m", "sqsemu"], env={"PYTHONPATH": str(tmp_path)}) as srv:
        yield srv, copy


def _check_console(srv: ServerProcess, queue_url: str) -> None:
    """Every console page and static file answers 200 with its content (and an ETag that revalidates)."""
    pages = Pages(srv.endpoint_url)
    name = queue_url.rsplit("/", 1)[1]
    for path, shows in (
        (UI + "/", "Queues"),
        (f"{UI}/queues/000000000000/us-east-1/{name}", name),
        (UI + "/server", "Fault rules"),
        (UI + "/?live=1", '"queues"'),
    ):
        page = pages.get(path)
        assert page.status == 200, (path, page.status, page.text[:300], srv.log_tail())
        assert shows in page.text, (path, page.text[:300])
    for file, content_type in STATIC.items():
        page = pages.get(f"{UI}/static/{file}")
        assert page.status == 200, (file, page.status, page.text[:300], srv.log_tail())
        assert page.headers["content-type"] == content_type and page.body
        etag = page.headers["etag"]
        again = pages.get(f"{UI}/static/{file}", {"If-None-Match": etag})
        assert again.status == 304 and again.headers["etag"] == etag and not again.body
        head = pages.request("HEAD", f"{UI}/static/{file}")
        assert head.status == 200 and int(head.headers["content-length"]) == len(page.body) and not head.body
    assert MARK in pages.get(UI + "/static/console.css").text  # the copy's files: the server runs from the copy
    assert pages.get(UI + "/static/no-such-file.css").status == 404
    assert "Traceback" not in srv.log_tail(20_000)


def test_the_console_answers_after_its_templates_and_static_folders_are_moved_away(
    copied: tuple[ServerProcess, Path],
) -> None:
    srv, copy = copied
    sqs = json_client(srv.endpoint_url)
    url = sqs.create_queue(QueueName="moved-under-me")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="still shown")
    # no console page was asked for yet: the server read its files at start
    for folder in ("templates", "static"):
        (copy / "console" / folder).rename(copy / "console" / f"{folder}.moved")
    _check_console(srv, url)
    page = Pages(srv.endpoint_url).get(f"{UI}/queues/000000000000/us-east-1/moved-under-me")
    assert "still shown" in page.text


def test_the_console_answers_after_the_whole_package_folder_is_moved_away(
    copied: tuple[ServerProcess, Path],
) -> None:
    """The README's order: the console opened, then ``pip install -e .`` replaces the installed package."""
    srv, copy = copied
    sqs = json_client(srv.endpoint_url)
    url = sqs.create_queue(QueueName="package-gone")["QueueUrl"]
    _check_console(srv, url)  # the console as a user has it open
    shutil.rmtree(copy)
    _check_console(srv, url)
    sqs.send_message(QueueUrl=url, MessageBody="the API too")
    assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "the API too"
