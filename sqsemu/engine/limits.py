"""AWS limits as data (Amazon SQS Developer Guide, "Amazon SQS quotas"; the API Reference's parameter docs).

Every limit SQS enforces lives here once; the code that checks it reads it from the broker's ``Limits`` instance so
a relaxed profile can be swapped in. Units are in the field names: ``_s`` seconds, ``_ms`` milliseconds, ``_bytes``
bytes, ``_chars`` characters; the other fields are counts.
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
    kms_data_key_reuse_period_min_s: int = 60
    kms_data_key_reuse_period_max_s: int = 86_400  # 24 hours
    max_receive_count_max: int = 1_000  # RedrivePolicy maxReceiveCount is 1..this
    redrive_allow_source_arns_max: int = 10  # RedriveAllowPolicy sourceQueueArns
    deduplication_window_s: int = 300  # FIFO deduplication IDs and ReceiveRequestAttemptIds
    recently_s: int = 60  # strict fidelity: a deleted queue's name, and PurgeQueue after PurgeQueue
    tags_max: int = 50  # per queue, after TagQueue's merge
    tag_key_max_chars: int = 128
    tag_value_max_chars: int = 256
    policy_max_bytes: int = 8_192
    policy_statements_max: int = 20
    policy_principals_max: int = 50
    policy_actions_per_statement_max: int = 7
    move_task_rate_max: int = 500  # messages per second, MaxNumberOfMessagesPerSecond
    move_task_list_max_results: int = 10  # ListMessageMoveTasks MaxResults


DEFAULT_LIMITS = Limits()
