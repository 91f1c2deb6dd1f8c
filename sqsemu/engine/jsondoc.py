"""Parsing JSON documents that come from clients (queue policies, admin request bodies) without ever failing
unexpectedly.

``json.loads`` has three ways to fail besides ``ValueError``-for-bad-JSON that a client can trigger on purpose: a
document nested deeper than the interpreter's recursion limit raises ``RecursionError`` (1,000 ``[`` do), an integer
literal of more than 4,300 digits raises ``ValueError`` from Python's int-string limit (a ``ValueError`` too, so it
reads as invalid JSON), and a document nested just below the limit parses but breaks whatever walks it recursively
later (``str()``, ``json.dumps``, an error message echoing it). :func:`loads` turns all of them into ``ValueError``
and refuses documents nested deeper than ``MAX_DEPTH`` levels, so everything stored or echoed is shallow. It also
refuses lone surrogates (``"\\udc00"``), which ``json.loads`` turns into strings that cannot be encoded as UTF-8
(an admin answer echoing one failed with ``UnicodeEncodeError``).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 100
"""Deepest nesting of arrays and objects accepted (a scalar is depth 0, ``[]`` and ``{}`` depth 1). Real queue
policies nest about six levels deep (``Statement`` / ``Condition`` / operator / key / values)."""


class JSONDocumentError(ValueError):
    """A document that is not valid JSON or is nested too deeply; ``str()`` says which."""


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]", re.ASCII)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def depth(value: object) -> int:
    """How deeply ``value`` (a parsed JSON value) nests arrays and objects, computed without recursion."""
    deepest, _ = _walk(value, False)
    return deepest


def _walk(value: object, strings: bool) -> tuple[int, bool]:
    """(nesting depth, whether a string or key holds a lone surrogate; looked for only when ``strings``)."""
    deepest = 0
    lone = False
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
            if strings and any(_LONE_SURROGATE.search(key) for key in node):
                lone = True
        elif isinstance(node, list):
            children = node
        else:
            if strings and isinstance(node, str) and _LONE_SURROGATE.search(node):
                lone = True
            continue
        level += 1
        if level > deepest:
            deepest = level
        stack.extend((child, level) for child in children)
    return deepest, lone


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``text`` as JSON (the standard library's dialect) and return the value.

    Raises ``JSONDocumentError`` (a ``ValueError``) when it is not JSON, holds an integer of more than 4,300 digits,
    nests arrays and objects deeper than ``max_depth`` levels, or escapes a lone surrogate (``"\\ud800"``: no
    Unicode text holds one, I-JSON forbids it, and it could not be written back as UTF-8); never ``RecursionError``.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONDocumentError(f"JSON nested more than {max_depth} levels deep") from None
    except ValueError as exc:
        raise JSONDocumentError(f"not valid JSON: {exc}") from None
    escapes = _SURROGATE_ESCAPE.search(text if isinstance(text, str) else text.decode("utf-8", "replace"))
    if isinstance(value, dict | list) or escapes is not None:
        deepest, lone = _walk(value, escapes is not None)
        if deepest > max_depth:
            raise JSONDocumentError(f"JSON nested more than {max_depth} levels deep")
        if lone:
            raise JSONDocumentError("JSON holds a lone surrogate (an unpaired \\ud800-\\udfff escape)")
    return value
