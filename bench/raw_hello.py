"""The raw-protocol floor: HTTP/1.1 keep-alive answered by an ``asyncio.Protocol`` over httptools on uvloop, no
uvicorn and no ASGI, with the same fixed JSON body as ``hello_asgi.py``. What one keep-alive request costs in Python
at the least; ``compare.py`` runs it as the second ceiling (issue 32), beside ``hello_asgi.py`` under uvicorn.

    python raw_hello.py PORT
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httptools
import uvloop

BODY = b'{"MessageId":"00000000-0000-0000-0000-000000000000"}'
ANSWER = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\ncontent-length: "
    + str(len(BODY)).encode()
    + b"\r\n\r\n"
    + BODY
)


class Hello(asyncio.Protocol):
    """Answers every request with :data:`ANSWER`, once it has been read whole."""

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.parser = httptools.HttpRequestParser(self)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.transport.close()

    def on_message_complete(self) -> None:
        self.transport.write(ANSWER)


async def main(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(Hello, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1])))
