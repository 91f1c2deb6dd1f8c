"""A fake asyncio transport for the HTTP protocol's unit tests (test_http_sqsprotocol.py, test_http_guards.py)."""

from __future__ import annotations

import asyncio
from typing import Any


class FakeTransport:
    """Just enough of an asyncio transport for sqsemu's and uvicorn's protocols; keeps every write apart. Like a socket
    transport it hands received bytes over in reads of at most 64 KiB, and none while reading is paused (they
    wait, and follow when it resumes): a protocol that pauses reading and waits for more bytes never gets them."""

    READ_SIZE = 64 * 1024

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.reading = True
        self.incoming = b""
        self.protocol: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def receive(self, data: bytes) -> None:
        """Bytes from the client: handed to the protocol from the loop, read by read."""
        self.incoming += data
        assert self.loop is not None
        self.loop.call_soon(self._pump)

    def _pump(self) -> None:
        while self.reading and self.incoming and not self.closed:
            chunk, self.incoming = self.incoming[: self.READ_SIZE], self.incoming[self.READ_SIZE :]
            self.protocol.data_received(chunk)

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.writes.append(data)

    @property
    def written(self) -> bytes:
        """Everything written so far, in one piece."""
        return b"".join(self.writes)

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0  # every write is taken at once

    def can_write_eof(self) -> bool:
        return False  # a graceful close closes at once here (the lingering close is tested over real sockets)

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True
        if self.incoming and self.loop is not None:
            self.loop.call_soon(self._pump)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 9324)}.get(name, default)
