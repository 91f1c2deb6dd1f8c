"""``*`` and ``?`` wildcards of policies, matched without backtracking.

IAM's wildcards ("IAM JSON policy elements: Action", "Resource", and the ``StringLike`` and ``Arn*`` operators of
"IAM JSON policy elements: Condition operators"): ``*`` stands for any run of characters, ``?`` for any one
character, every other character for itself, and the pattern must match the whole value. Translated to a regular
expression (``.*`` per ``*``), Python's backtracking engine takes time exponential in the number of ``*`` on a value
that does not match: ``arn:aws:sqs:*:*:*x*x*x*x*x*x*x*x*x*x*x*x*y`` against a 75-character queue ARN ran for more
than 20 s, the whole server stopped meanwhile; a few ``*`` against a long request value (a ``StringLike`` on a
header) do the same. A queue policy is any caller's to set, so matching is done here instead in time bounded by
the value's length times the pattern's: a pattern is split at its ``*`` into fixed-length segments; the first must
match at the start, the last at the end, and each one between is placed at its leftmost occurrence after the one
before (leftmost is never worse, since what follows a ``*`` may begin anywhere after it).

:class:`Wildcard` is one pattern. Its text comes in pieces (:meth:`Wildcard.of`), so that a policy variable's value
substituted into a pattern is matched literally, its own ``*`` and ``?`` included ("IAM policy elements: Variables
and tags"). Case: the caller lowercases both the pattern and the value where matching ignores case (actions).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["Wildcard"]


class _Segment:
    """A run of pattern characters between two ``*``: literal characters and ``?`` (any one character)."""

    __slots__ = ("length", "literal", "regex")

    def __init__(self, chars: list[str | None]) -> None:
        self.length = len(chars)
        if None in chars:  # a "?" in it: a fixed-length regular expression, literals and "." only (no backtracking)
            self.literal: str | None = None
            body = "".join("." if c is None else re.escape(c) for c in chars)
            self.regex: re.Pattern[str] | None = re.compile(body, re.DOTALL)
        else:
            self.literal = "".join(c for c in chars if c is not None)
            self.regex = None

    def at(self, text: str, pos: int) -> bool:
        """Whether the segment matches ``text`` at ``pos`` (its whole length fitting)."""
        if self.literal is not None:
            return text.startswith(self.literal, pos)
        assert self.regex is not None
        return pos + self.length <= len(text) and self.regex.match(text, pos) is not None

    def find(self, text: str, start: int, end: int) -> int:
        """Where the segment first matches wholly inside ``text[start:end]``, or -1."""
        if self.literal is not None:
            return text.find(self.literal, start, end)
        assert self.regex is not None
        found = self.regex.search(text, start, end)
        return -1 if found is None else found.start()


class Wildcard:
    """One ``*``/``?`` pattern, matched against a whole value by :meth:`matches`."""

    __slots__ = ("first", "last", "middle", "shortest", "star")

    def __init__(self, pattern: str) -> None:
        self._build([(pattern, False)])

    @classmethod
    def of(cls, pieces: Iterable[tuple[str, bool]]) -> Wildcard:
        """A pattern given as ``(text, literal)`` pieces: a literal piece's ``*`` and ``?`` are plain characters."""
        made = cls.__new__(cls)
        made._build(pieces)
        return made

    def _build(self, pieces: Iterable[tuple[str, bool]]) -> None:
        segments: list[list[str | None]] = [[]]
        for text, literal in pieces:
            if literal:
                segments[-1].extend(text)
                continue
            for char in text:
                if char == "*":
                    segments.append([])
                else:
                    segments[-1].append(None if char == "?" else char)
        built = [_Segment(chars) for chars in segments]
        self.star = len(built) > 1
        self.first = built[0]
        self.last = built[-1]
        self.middle = tuple(segment for segment in built[1:-1] if segment.length)
        self.shortest = sum(segment.length for segment in built)

    def matches(self, value: str) -> bool:
        """Whether the whole of ``value`` matches the pattern."""
        if not self.star:
            return len(value) == self.first.length and self.first.at(value, 0)
        if len(value) < self.shortest or not self.first.at(value, 0):
            return False
        end = len(value) - self.last.length
        if not self.last.at(value, end):
            return False
        pos = self.first.length
        for segment in self.middle:
            found = segment.find(value, pos, end)
            if found < 0:
                return False
            pos = found + segment.length
        return pos <= end
