"""The cyclic garbage collector paused while the command-line server imports its modules, and those frozen after.

Start-up imports some hundred thousand objects that live as long as the process (modules, classes, functions,
tables) and makes almost no garbage. The collector would walk them again and again while they are made (measured:
about a tenth of the start-up's work) and at every full collection afterwards. :func:`pause` stops it;
:func:`resume`, called once the modules are imported, moves everything that exists into the permanent generation
(``gc.freeze``: never walked, never collected) and starts the collector again, before the engine's state (queues,
restored messages) is made, so that state is collected as usual. Reference counting frees everything else as usual
meanwhile; only reference cycles made while paused wait, and those frozen stay (import-time objects: none of
them large).

:func:`resume` also raises the youngest generation's threshold to :data:`YOUNG_THRESHOLD` allocations (700 by
default): a server holds every message in flight in its timer wheel until its visibility deadline, so the young
collections walk live messages over and over (measured: 4-5% of a long round trip's CPU, halved at 10,000). The
older generations' thresholds stay as they are; cycles are still collected, only in larger steps.

Only the process ``sqsemu`` runs (or :func:`sqsemu.run`) does this; a server in a thread (``ServerThread``, the
pytest plugin) leaves its host program's collector alone. See the ``gc`` module's documentation (``gc.freeze``).
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]

_paused = False
YOUNG_THRESHOLD = 10_000
"""Allocations (less deallocations) between two collections of the youngest generation once the server runs."""


def pause() -> None:
    """Stop the cyclic garbage collector until :func:`resume` (nothing to do when it is off already)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze what exists now and start the collector again, when :func:`pause` stopped it (else nothing)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        young, older, oldest = gc.get_threshold()
        gc.set_threshold(max(YOUNG_THRESHOLD, young), older, oldest)
        gc.enable()
