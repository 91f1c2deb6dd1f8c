"""The ``date`` header line of sqsemu's own HTTP protocol (``sqsemu.http.sqsprotocol.date_line_at``): the same bytes
as ``email.utils.formatdate(seconds, usegmt=True)`` gives (RFC 9110's IMF-fixdate), for every second from the epoch
to the end of year 9999, leap days and century years included."""

from __future__ import annotations

from email.utils import formatdate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqsemu.http.sqsprotocol import date_line_at

LAST_SECOND = 253402300799  # 9999-12-31 23:59:59 GMT


def expected(seconds: int) -> bytes:
    return b"date: " + formatdate(seconds, usegmt=True).encode() + b"\r\n"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (951782400, "Tue, 29 Feb 2000 00:00:00 GMT"),  # a leap day of a century divisible by 400
        (951868799, "Tue, 29 Feb 2000 23:59:59 GMT"),
        (4107542400, "Mon, 01 Mar 2100 00:00:00 GMT"),  # 2100 is no leap year: 28 February is followed by 1 March
        (13574563200, "Tue, 29 Feb 2400 00:00:00 GMT"),
        (1796688000, "Tue, 08 Dec 2026 00:00:00 GMT"),
        (LAST_SECOND, "Fri, 31 Dec 9999 23:59:59 GMT"),
    ],
)
def test_known_dates_are_written_as_imf_fixdate(seconds: int, text: str) -> None:
    assert date_line_at(seconds) == f"date: {text}\r\n".encode()
    assert date_line_at(seconds) == expected(seconds)


@settings(max_examples=2000, deadline=None)
@given(st.integers(min_value=0, max_value=LAST_SECOND))
def test_every_second_is_written_as_formatdate_writes_it(seconds: int) -> None:
    assert date_line_at(seconds) == expected(seconds)


def test_each_second_of_a_year_boundary_and_a_leap_day() -> None:
    for start in (1767225600 - 86400, 1709164800 - 86400):  # 2026-01-01 and 2024-02-29, from the day before
        for seconds in range(start, start + 2 * 86400, 37):
            assert date_line_at(seconds) == expected(seconds)
