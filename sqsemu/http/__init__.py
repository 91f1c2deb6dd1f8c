"""The HTTP face of sqsemu: the ASGI application (``create_app``)."""

from __future__ import annotations

from sqsemu.http.app import create_app

__all__ = ["create_app"]
