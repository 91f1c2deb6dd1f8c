"""Loading a saved state: all or nothing, on the loading server's clock.

1. :func:`checked_state` reads the file (:func:`~sqsemu.state.form.read_state`) and checks what its values mean: each
   queue's identity, name, attributes (as CreateQueue and SetQueueAttributes check them), tags; each message's,
   key's, sequence number's and task's queue; the mappings' and topics' documents. Then it restores the whole state
   into a scratch engine (a broker and SNS topics of their own, on a manual clock set to the export's time) through
   the functions durable mode restores with: whatever they would refuse is refused here, before anything is
   touched. It touches nothing of the server, so it may run off the event loop.
2. :func:`replace_state` swaps it in, in one step on the event loop (no other call runs in between): every queue,
   topic and mapping goes (as ``POST /_sqsemu/reset`` makes them go: waiting long polls are answered empty, the
   durable store records the deletions), the file's state comes in through the same functions, and in durable mode
   the store records it as new rows, committed before the load is answered.

**Time.** Every time of the state moves by the difference between the loading server's clock and the saving
server's at export (``exported_ms``): a message in flight with 20 s left at export is in flight for 20 s after the
load, a delay or a deduplication window keeps what was left of it, a message keeps its age (retention counts from
it as before), and the timestamps a client reads (SentTimestamp, ApproximateFirstReceiveTimestamp, a queue's
CreatedTimestamp) move by the same difference. The state resumes where it was saved, whenever and wherever it is
loaded: a file saved last week does not load with every message visible and every deduplication window over.
Receipt handles name a queue's ``uid`` and a message's receive count, both kept: a handle issued before the save
still deletes its message after the load.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqsemu.clock import ManualClock
from sqsemu.config import ACCOUNT_RE, REGION_RE, Config
from sqsemu.engine import attributes as queue_attributes
from sqsemu.engine import tags as queue_tags
from sqsemu.engine.broker import Broker
from sqsemu.engine.errors import SQSError
from sqsemu.engine.realism import check_tags as realism_problem
from sqsemu.engine.redrive import TaskStatus
from sqsemu.eventsource.mapping import Mapping
from sqsemu.persistence import StoreError
from sqsemu.persistence.rowforms import restore_rows
from sqsemu.sns.layer import replace_topics, restore_topic_documents
from sqsemu.sns.topics import Topics
from sqsemu.state.form import SavedState, StateError, read_state

if TYPE_CHECKING:
    from sqsemu.eventsource.registry import EventSources
    from sqsemu.persistence import Store
    from sqsemu.sns.api import SNS

__all__ = ["checked_state", "read_state_file", "replace_state", "shifted"]

_QUEUE_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def read_state_file(path: str, config: Config) -> SavedState:
    """The checked state of the file at ``path`` (``--load-state``). Raises :class:`StateError` naming the file."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise StateError(f"cannot read the state file {path}: {exc.strerror or exc}") from None
    try:
        return checked_state(data, config)
    except StateError as exc:
        raise StateError(f"the state file {path} cannot be loaded: {exc.message}") from None


def checked_state(data: bytes, config: Config) -> SavedState:
    """Read a saved-state file and check all of it (module docstring, step 1), for a server of ``config``. Returns
    the state, its queue attributes in canonical form. Raises :class:`StateError` saying what and where."""
    state = read_state(data)
    scratch = Broker(ManualClock(state.exported_ms), strict=config.fidelity == "strict")
    _check_queues(state, scratch)
    fifo = {row[0] for row in state.rows["queues"] if row[4]}
    arns = {f"arn:aws:sqs:{row[2]}:{row[1]}:{row[3]}" for row in state.rows["queues"]}
    _check_messages(state, fifo)
    uids = {row[0] for row in state.rows["queues"]}
    for table, column in (("deduplication", 0), ("fifo_sequences", 0)):
        for number, row in enumerate(state.rows[table], 1):
            if row[column] not in fifo:
                raise StateError(f"{table} record {number}: queue_uid {row[column]!r} is no FIFO queue of the file")
    task_ids: set[str] = set()
    statuses = {status.value for status in TaskStatus}
    for number, row in enumerate(state.rows["move_tasks"], 1):
        if row[1] not in uids:
            raise StateError(f"move_tasks record {number}: source_uid {row[1]!r} is no queue of the file")
        if row[7] not in statuses:
            raise StateError(f"move_tasks record {number}: status must be one of {sorted(statuses)}, got {row[7]!r}")
        if row[0] in task_ids:
            raise StateError(f"move_tasks record {number}: task_id {row[0]!r} is there twice")
        task_ids.add(row[0])
    _check_mappings(state, arns)
    try:
        rows = state.rows
        restore_rows(
            scratch, rows["queues"], rows["messages"], rows["deduplication"], rows["fifo_sequences"], rows["move_tasks"]
        )
    except Exception as exc:  # noqa: BLE001 - whatever the engine refuses, said, before anything is touched
        raise StateError(f"the state cannot be restored: {type(exc).__name__}: {exc}") from None
    _check_topics(state)
    if config.auth == "iam":
        from sqsemu.security.iam import unparsable_policies

        found = unparsable_policies(scratch)
        if found:
            arn, reason = found[0]
            raise StateError(f"the queue {arn} has a Policy that does not parse ({reason}): --auth iam refuses it")
    return state


def _check_queues(state: SavedState, scratch: Broker) -> None:
    """Each queue's identity, name, attributes (made canonical, the defaults filled in) and tags."""
    limits = scratch.limits
    uids: set[str] = set()
    names: set[tuple[str, str, str]] = set()
    rows = state.rows["queues"]
    for number, row in enumerate(rows, 1):
        uid, account, region, name, fifo, attributes, tags, *_rest, delayed = row
        where = f"queues record {number} ({name})"
        if uid in uids:
            raise StateError(f"{where}: uid {uid!r} is there twice")
        uids.add(uid)
        if not ACCOUNT_RE.match(account):
            raise StateError(f"{where}: account must be 12 digits, got {account!r}")
        if not REGION_RE.match(region):
            raise StateError(f"{where}: region must be lower-case letters and digits joined by hyphens, got {region!r}")
        if (account, region, name) in names:
            raise StateError(f"{where}: account {account} has two queues {name} in {region}")
        names.add((account, region, name))
        base = name[:-5] if name.endswith(".fifo") else name
        if not base or set(base) - _QUEUE_NAME_CHARS or len(name) > limits.queue_name_max_chars:
            raise StateError(f"{where}: a queue name has 1 to 80 letters, digits, hyphens or underscores")
        if name.endswith(".fifo") != bool(fifo):
            raise StateError(f"{where}: a FIFO queue's name ends with .fifo, and only a FIFO queue's (fifo is {fifo})")
        try:
            given = queue_attributes.normalize(json.loads(attributes), fifo=bool(fifo), limits=limits)
            canonical = queue_attributes.defaults(limits, fifo=bool(fifo))
            if given.get("KmsMasterKeyId") and "SqsManagedSseEnabled" not in given:
                canonical["SqsManagedSseEnabled"] = "false"  # SSE-KMS replaces the default SSE-SQS, as CreateQueue
            canonical.update(given)
            queue_attributes.check_combination(canonical)
            queue_tags.validate_tags(json.loads(tags), {}, limits=limits)
            for _due, values in json.loads(delayed) if delayed else ():
                queue_attributes.normalize(values, fifo=bool(fifo), limits=limits)
        except SQSError as exc:
            raise StateError(f"{where}: {exc.shape}: {exc.message}") from None
        problem = realism_problem(json.loads(tags))
        if problem is not None:
            raise StateError(f"{where}: the sqsemu:realism tag is invalid: {problem}")
        rows[number - 1] = (*row[:5], json.dumps(canonical), *row[6:])


def _check_messages(state: SavedState, fifo: set[str]) -> None:
    """Each message's queue, its id (once per queue), a FIFO message's group, and its receipt serial."""
    uids = {row[0] for row in state.rows["queues"]}
    seen: set[tuple[str, str]] = set()
    for number, row in enumerate(state.rows["messages"], 1):
        uid, message_id = row[0], row[1]
        where = f"messages record {number}"
        if uid not in uids:
            raise StateError(f"{where}: queue_uid {uid!r} is no queue of the file")
        if (uid, message_id) in seen:
            raise StateError(f"{where}: message {message_id} is twice in its queue")
        seen.add((uid, message_id))
        if uid in fifo and (row[11] is None or row[13] is None):
            raise StateError(f"{where}: a FIFO queue's message has a group_id and a sequence_number")
        if row[15] != row[19]:
            raise StateError(f"{where}: receipt_serial must equal receive_count (it counts the receipts issued)")


def _check_mappings(state: SavedState, arns: set[str]) -> None:
    """Each mapping's document as ``Mapping.from_saved`` reads it, its UUID once, its queue in the file."""
    seen: set[str] = set()
    for number, document in enumerate(state.documents["event_source_mappings"], 1):
        where = f"event_source_mappings record {number}"
        try:
            mapping = Mapping.from_saved(document)
        except (TypeError, ValueError, KeyError) as exc:
            raise StateError(f"{where}: not a mapping's document ({exc})") from None
        expected: dict[str, Any] = {
            "uuid": str, "account": str, "region": str, "event_source_arn": str, "function": str,
            "batch_size": int, "batching_window_s": int, "enabled": bool, "filters": list, "response_types": list,
        }  # fmt: skip
        for name, kind in expected.items():
            value = getattr(mapping, name)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise StateError(f"{where}: {name} must be of type {kind.__name__}, got {value!r}")
        if not isinstance(mapping.last_modified, int | float) or isinstance(mapping.last_modified, bool):
            raise StateError(f"{where}: last_modified must be epoch seconds")
        if mapping.uuid in seen:
            raise StateError(f"{where}: uuid {mapping.uuid} is there twice")
        seen.add(mapping.uuid)
        if mapping.event_source_arn not in arns:
            raise StateError(f"{where}: its queue {mapping.event_source_arn} is not in the file")


def _check_topics(state: SavedState) -> None:
    """The topics' documents, restored into a scratch set of topics (their filter policies parsed)."""
    scratch = Topics(ManualClock(state.exported_ms))
    seen: set[str] = set()
    for number, document in enumerate(state.documents["topics"], 1):
        try:
            (topic,) = restore_topic_documents(scratch, [document])
        except StoreError as exc:
            raise StateError(f"topics record {number}: {exc}".replace("saved SNS topic", "SNS topic")) from None
        if topic.arn in seen:
            raise StateError(f"topics record {number}: the topic {topic.arn} is there twice")
        seen.add(topic.arn)


# ----------------------------------------------------------------------------------------------- moving in time


def _moved(row: Sequence[Any], columns: Sequence[int], delta: int, keep_zero: bool = False) -> tuple[Any, ...]:
    out = list(row)
    for index in columns:
        value = out[index]
        if value is not None and not (keep_zero and value == 0):
            out[index] = value + delta
    return tuple(out)


def shifted(state: SavedState, delta_ms: int) -> SavedState:
    """``state`` with every time moved by ``delta_ms`` milliseconds (module docstring, "Time"): queues' creation,
    change and purge times and pending attribute changes, messages' send, enqueue, receive and visibility times
    (a 0, never received, stays 0), deduplication windows, move tasks' starts, mappings' LastModified, topics' and
    subscriptions' creation times and a FIFO topic's deduplication windows. A new state; ``state`` is unchanged."""
    delta_s = round(delta_ms / 1000)
    rows = state.rows
    queues = []
    for row in rows["queues"]:
        moved = _moved(row, (7, 8), delta_s)
        moved = _moved(moved, (9,), delta_ms)
        if row[10]:
            delayed = [[due + delta_ms, values] for due, values in json.loads(row[10])]
            moved = (*moved[:10], json.dumps(delayed))
        queues.append(moved)
    messages = [
        _moved(_moved(row, (8, 9, 18), delta_ms), (16, 17), delta_ms, keep_zero=True) for row in rows["messages"]
    ]
    mappings = []
    for document in state.documents["event_source_mappings"]:
        document = dict(document)
        if isinstance(document.get("last_modified"), int | float):
            document["last_modified"] = document["last_modified"] + delta_ms / 1000
        mappings.append(document)
    topics = []
    for document in state.documents["topics"]:
        document = dict(document)
        document["created_ms"] = document["created_ms"] + delta_ms
        document["dedup"] = {key: [value[0] + delta_ms, *value[1:]] for key, value in document["dedup"].items()}
        document["subscriptions"] = [
            {**sub, "created_ms": sub["created_ms"] + delta_ms} for sub in document["subscriptions"]
        ]
        topics.append(document)
    return SavedState(
        state.version,
        state.exported_ms + delta_ms,
        state.server,
        {
            "queues": queues,
            "messages": messages,
            "deduplication": [_moved(row, (2,), delta_ms) for row in rows["deduplication"]],
            "fifo_sequences": list(rows["fifo_sequences"]),
            "move_tasks": [_moved(row, (4,), delta_ms) for row in rows["move_tasks"]],
        },
        {"event_source_mappings": mappings, "topics": topics},
    )


# ----------------------------------------------------------------------------------------------- the swap


def replace_state(
    broker: Broker, sns: SNS | None, sources: EventSources | None, store: Store | None, state: SavedState
) -> dict[str, Any]:
    """Replace the whole state of a server by ``state`` (checked by :func:`checked_state`), its times moved to
    ``broker``'s clock (module docstring, step 2). Run on the server's event loop, or before it serves. Returns
    ``{"loaded": records per table, "shifted_ms": how far the times moved}``."""
    delta = broker.clock.now_ms() - state.exported_ms
    moved = shifted(state, delta)
    rows = moved.rows
    broker.reset()
    restored = restore_rows(
        broker,
        rows["queues"],
        rows["messages"],
        rows["deduplication"],
        rows["fifo_sequences"],
        rows["move_tasks"],
        keep=store is not None,
    )
    if store is not None:
        store.record_loaded(restored)
    if sns is not None:
        replace_topics(sns, moved.documents["topics"])
    if sources is not None:
        sources.replace_all([Mapping.from_saved(document) for document in moved.documents["event_source_mappings"]])
    return {"loaded": state.counts(), "shifted_ms": delta}
