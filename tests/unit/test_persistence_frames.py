"""The frames between the durable store and its writer process (``sqsemu.persistence.writer``): the writer's
``FrameReader`` gives every frame whole and in order, however the bytes arrive (several frames in one read, one
frame in many), and ends at the end of the input."""

from __future__ import annotations

import pickle
import socket
import struct
import threading
import time

import pytest

from sqsemu.persistence.writer import FrameReader, write_frame


def _frame(value: object) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return struct.pack("<Q", len(data)) + data


def test_frames_arriving_together_or_in_pieces_are_read_whole_and_in_order() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    big = ("write", {n: ("row", n, "x" * 1000) for n in range(300)})  # ~300 KB: more than one read
    pieces = _frame(("pragma", "first")) + _frame(("write", None))
    split = _frame(("pragma", "split"))

    def send() -> None:
        theirs.sendall(pieces)  # two frames in one write
        for start in range(0, len(split), 3):  # one frame in pieces of 3 bytes
            theirs.sendall(split[start : start + 3])
            time.sleep(0.001)
        write_frame(theirs, big)
        theirs.close()

    sender = threading.Thread(target=send)
    sender.start()
    try:
        reader = FrameReader(ours)
        assert reader.read() == ("pragma", "first")
        assert reader.read() == ("write", None)
        assert reader.read() == ("pragma", "split")
        assert reader.read() == big
        with pytest.raises(EOFError):
            reader.read()
    finally:
        sender.join()
        ours.close()


def test_an_input_ending_inside_a_frame_is_the_end() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    theirs.sendall(_frame(("pragma", "whole")) + _frame(("pragma", "cut"))[:-2])
    theirs.close()
    try:
        reader = FrameReader(ours)
        assert reader.read() == ("pragma", "whole")
        with pytest.raises(EOFError):
            reader.read()
    finally:
        ours.close()


def test_a_frame_larger_than_the_buffer_behind_a_small_one_is_read_whole() -> None:
    """The reader's buffer starts at 64 KiB: a large frame that arrives behind a small one, partly in the same read,
    is moved to the front of a grown buffer and read whole, and the buffer serves smaller frames after it."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    large = ("write", ["y" * 70_000, "z" * 70_000])
    data = _frame(("pragma", "small")) + _frame(large) + _frame(("pragma", "after"))

    def send() -> None:
        theirs.sendall(data)
        theirs.close()

    sender = threading.Thread(target=send)
    sender.start()
    try:
        reader = FrameReader(ours)
        assert reader.read() == ("pragma", "small")
        assert reader.read() == large
        assert reader.read() == ("pragma", "after")
        with pytest.raises(EOFError):
            reader.read()
    finally:
        sender.join()
        ours.close()
