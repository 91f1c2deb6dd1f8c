from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.engine_helpers import Engine


@pytest.fixture
def engine() -> Iterator[Engine]:
    e = Engine()
    yield e
    e.close()
