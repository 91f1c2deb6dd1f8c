"""AWS limits as data (SQS-REFERENCE section 9; API Reference parameter docs).

Every limit lives here once; the code that checks it reads it from a ``Limits`` instance so a relaxed profile can
be swapped in (ARCHITECTURE principle 9). Units are in the field names: ``_s`` seconds, ``_bytes`` bytes,
``_chars`` characters.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """The numbers SQS enforces."""

    visibility_timeout_max_s: int = 43_200  # 12 hours; also the cap counted from the receive
    visibility_timeout_default_s: int = 30
    delay_max_s: int = 900
    retention_min_s: int = 60
    retention_max_s: int = 1_209_600  # 14 days
    retention_default_s: int = 345_600  # 4 days
    wait_time_max_s: int = 20
    max_message_size_min_bytes: int = 1_024
    max_message_size_max_bytes: int = 1_048_576  # 1 MiB since 2025
    batch_max_entries: int = 10
    batch_max_bytes: int = 1_048_576
    batch_id_max_chars: int = 80
    receive_max_messages: int = 10
    message_attributes_max: int = 10
    attribute_name_max_chars: int = 256
    attribute_type_max_chars: int = 256
    queue_name_max_chars: int = 80
    list_queues_max_results: int = 1_000
    in_flight_max_standard: int = 120_000
    in_flight_max_fifo: int = 120_000


DEFAULT_LIMITS = Limits()
