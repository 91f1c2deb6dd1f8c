"""sqsemu.gcpause: the collector paused while the command-line server starts, then what start-up made frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from sqsemu import gcpause


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    was_enabled = gc.isenabled()
    threshold = gc.get_threshold()
    yield
    gc.set_threshold(*threshold)
    gcpause.resume()
    gc.unfreeze()  # this test process's objects go back to the collected generations
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def test_pause_then_resume_freezes_what_exists_and_collects_again() -> None:
    gc.enable()
    gc.unfreeze()
    gcpause.pause()
    assert not gc.isenabled()
    gcpause.resume()
    assert gc.isenabled()
    assert gc.get_threshold()[0] >= gcpause.YOUNG_THRESHOLD  # young collections in larger steps while serving
    frozen = gc.get_freeze_count()
    assert frozen > 0
    made_after = [[i] for i in range(1000)]  # containers the collector tracks
    gcpause.resume()  # a second resume freezes nothing more (frozen objects freed by reference counting leave)
    assert gc.isenabled() and gc.get_freeze_count() <= frozen
    assert len(made_after) == 1000


def test_a_collector_that_was_off_stays_off_and_nothing_is_frozen() -> None:
    gc.set_threshold(700, 10, 10)  # Python's default (an earlier test in this process may have run a server)
    gc.disable()
    gc.unfreeze()
    gcpause.pause()
    gcpause.resume()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == (700, 10, 10)  # a host program's collector is left as it was
