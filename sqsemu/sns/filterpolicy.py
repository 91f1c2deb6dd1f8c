"""TEMPORARY placeholder, replaced by the real module before commit."""

from __future__ import annotations

from typing import Any


class FilterPolicyError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class FilterPolicy:
    scope = "MessageAttributes"

    def match_attributes(self, a: Any) -> Any:
        return None

    def match_body(self, b: Any) -> Any:
        return None


def parse_filter_policy(text: str, scope: str = "MessageAttributes") -> FilterPolicy:
    p = FilterPolicy()
    p.scope = scope
    return p
