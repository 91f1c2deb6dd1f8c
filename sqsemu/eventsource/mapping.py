"""One event source mapping: its parameters as CreateEventSourceMapping and UpdateEventSourceMapping take and
check them, and its ``EventSourceMappingConfiguration`` shape (botocore's Lambda service model; the rules of the
"CreateEventSourceMapping" API reference and "Using Lambda with Amazon SQS").

SQS sources only ("Lambda parameters for Amazon SQS event source mappings"): ``BatchSize`` 1 to 10 for a FIFO
queue, 1 to 10,000 for a standard queue, above 10 only with ``MaximumBatchingWindowInSeconds`` of at least 1 (0 to
300; no batching window for FIFO queues); ``ScalingConfig.MaximumConcurrency`` 2 to 1,000;
``FunctionResponseTypes`` empty or ``["ReportBatchItemFailures"]``; ``FilterCriteria`` (``sqsemu.eventsource
.filters``); ``Enabled``. The stream-only parameters (``StartingPosition``, ``ParallelizationFactor``...) are refused
for SQS, as Lambda refuses them.

The fields of 2024-26: ``ProvisionedPollerConfig`` (provisioned mode, ``sqsemu.eventsource.provisioned``; not with
``ScalingConfig.MaximumConcurrency``); ``MetricsConfig`` (``{"Metrics": ["EventCount"]}``: ``ErrorCount`` and
``KafkaMetrics`` are "(Amazon MSK and self-managed Apache Kafka)" metrics, refused for SQS; an empty list or object
turns the metrics off); ``KMSKeyArn`` (kept and answered; an empty string removes it, as "Control which events Lambda
sends to your function", filter criteria encryption, says: sqsemu has no KMS, so the filter criteria are always
answered in clear and ``FilterCriteriaError`` never appears); ``LoggingConfig`` ("This feature is only available for
Kafka event source mappings", "Kafka event source mapping logging"): an empty object is taken as none, a
``SystemLogLevel`` refused for SQS. The refusals' wording is sqsemu's, in the form Lambda gives ``StartingPosition``'s
(docs/behaviour.md 12.14); a value outside a model enum is ``ValidationException`` as AWS's request validation
answers it (``errors.enum_refusal``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sqsemu.eventsource.errors import InvalidParameterValue, enum_refusal
from sqsemu.eventsource.filters import parse_filters
from sqsemu.eventsource.provisioned import EXCLUSIVE_MODES, INVOCATIONS_PER_POLLER, parse_pollers

DEFAULT_BATCH_SIZE = 10
MAX_BATCH_SIZE_STANDARD = 10_000
MAX_BATCH_SIZE_FIFO = 10
MAX_BATCH_SIZE_WITHOUT_WINDOW = 10
MAX_BATCHING_WINDOW_S = 300
MIN_CONCURRENCY, MAX_CONCURRENCY = 2, 1000
REPORT_BATCH_ITEM_FAILURES = "ReportBatchItemFailures"
DEFAULT_POLLERS = 5
"""Concurrent batches without ``MaximumConcurrency``: the five Lambda starts polling with ("Using Lambda with Amazon
SQS", scaling); sqsemu does not scale beyond them."""

STREAM_ONLY = (
    "StartingPosition",
    "StartingPositionTimestamp",
    "ParallelizationFactor",
    "BisectBatchOnFunctionError",
    "MaximumRetryAttempts",
    "MaximumRecordAgeInSeconds",
    "TumblingWindowInSeconds",
    "DestinationConfig",
    "Topics",
    "Queues",
    "SelfManagedEventSource",
    "AmazonManagedKafkaEventSourceConfig",
    "SelfManagedKafkaEventSourceConfig",
    "DocumentDBEventSourceConfig",
)
"""Parameters of stream and broker sources that an SQS mapping does not take."""

METRICS = ("EventCount", "ErrorCount", "KafkaMetrics")
"""The model's ``EventSourceMappingMetric`` enum; an SQS mapping takes ``EventCount`` only."""
SQS_METRICS = ("EventCount",)
MAX_METRICS = 3
"""Members of ``MetricsConfig.Metrics`` at most (the model's ``EventSourceMappingMetricList``)."""
LOG_LEVELS = ("DEBUG", "INFO", "WARN")
"""The model's ``EventSourceMappingSystemLogLevel`` enum (``LoggingConfig``, Kafka sources only)."""
_KMS_KEY_ARN = re.compile(r"(arn:(aws[a-zA-Z-]*)?:[a-z0-9-.]+:.*)|()", re.DOTALL)
"""``KMSKeyArn`` as the model's pattern allows (0 to 10,000 characters; empty removes the key)."""

_FUNCTION_NAME = re.compile(
    r"^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d:)?(\d{12}:)?(function:)?"
    r"([a-zA-Z0-9_-]+)(:(\$LATEST|[a-zA-Z0-9_-]+))?$"
)
"""``FunctionName`` as the service model's ``NamespacedFunctionName`` pattern allows: a name, a partial ARN or an
ARN, with an optional qualifier."""


def function_name(value: Any) -> str:
    """The bare function name of a ``FunctionName`` value (name, ``account:function:name``, full ARN, with or
    without ``:qualifier``). Raises ``InvalidParameterValue``."""
    if not isinstance(value, str) or not value or len(value) > 140:
        raise InvalidParameterValue("FunctionName must be 1 to 140 characters.")
    match = _FUNCTION_NAME.match(value)
    if match is None:
        raise InvalidParameterValue(
            f"1 validation error detected: Value '{value}' at 'functionName' failed to satisfy constraint: Member "
            "must satisfy regular expression pattern: " + _FUNCTION_NAME.pattern
        )
    return match.group(7)


@dataclass(frozen=True, slots=True)
class FunctionRef:
    """What a ``FunctionName`` value names: the bare ``name``, and the ``region``, ``account`` and ``qualifier`` it
    gives (None where it gives none: a bare name is the caller's account's and region's function)."""

    name: str
    region: str | None = None
    account: str | None = None
    qualifier: str | None = None

    def arn(self, region: str, account: str) -> str:
        """The function's ARN (unqualified), in the region and account it names, else ``region`` and ``account``
        (the caller's)."""
        return function_arn(self.region or region, self.account or account, self.name)

    def qualified_arn(self, region: str, account: str) -> str:
        """:meth:`arn` with the qualifier (``...:function:name:prod``) when it has one."""
        base = self.arn(region, account)
        return f"{base}:{self.qualifier}" if self.qualifier else base


def function_ref(value: Any) -> FunctionRef:
    """The parts of a ``FunctionName`` value (a name, ``account:function:name``, a full ARN, each with or without
    ``:qualifier``). Raises ``InvalidParameterValue`` as :func:`function_name`."""
    name = function_name(value)
    match = _FUNCTION_NAME.match(value)
    assert match is not None  # function_name checked it
    region, account, qualifier = match.group(3), match.group(5), match.group(9)
    return FunctionRef(name, region[:-1] if region else None, account[:-1] if account else None, qualifier)


def function_arn(region: str, account: str, name: str) -> str:
    """``arn:aws:lambda:<region>:<account>:function:<name>``."""
    return f"arn:aws:lambda:{region}:{account}:function:{name}"


@dataclass
class Mapping:
    """An event source mapping's settings and state.

    ``state``: ``Creating``, ``Enabled``, ``Disabled``, ``Updating``, ``Enabling``, ``Disabling``, ``Deleting``;
    ``last_modified``: epoch seconds; ``filters``: the pattern strings; ``minimum_pollers`` and ``maximum_pollers``:
    provisioned mode (both None in standard mode); ``metrics``: ``MetricsConfig.Metrics``; ``kms_key_arn``: None when
    not set; ``tags``: the mapping's tags (TagResource, not part of the configuration document).
    """

    uuid: str
    account: str
    region: str
    event_source_arn: str
    function: str
    batch_size: int = DEFAULT_BATCH_SIZE
    batching_window_s: int = 0
    response_types: list[str] = field(default_factory=list)
    maximum_concurrency: int | None = None
    filters: list[str] = field(default_factory=list)
    enabled: bool = True
    minimum_pollers: int | None = None
    maximum_pollers: int | None = None
    metrics: list[str] = field(default_factory=list)
    kms_key_arn: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    state: str = "Creating"
    last_modified: float = 0.0
    last_processing_result: str = "No records processed"
    state_transition_reason: str = "USER_INITIATED"

    @property
    def function_arn(self) -> str:
        """The function's ARN in the mapping's account and region."""
        return function_arn(self.region, self.account, self.function)

    @property
    def arn(self) -> str:
        """``arn:aws:lambda:<region>:<account>:event-source-mapping:<uuid>``."""
        return f"arn:aws:lambda:{self.region}:{self.account}:event-source-mapping:{self.uuid}"

    @property
    def reports_item_failures(self) -> bool:
        """Whether ``FunctionResponseTypes`` holds ``ReportBatchItemFailures``."""
        return REPORT_BATCH_ITEM_FAILURES in self.response_types

    @property
    def pollers(self) -> int:
        """How many batches may be in flight at once (the workers): in provisioned mode ``MinimumPollers`` x
        :data:`~sqsemu.eventsource.provisioned.INVOCATIONS_PER_POLLER`, else ``MaximumConcurrency``, else
        :data:`DEFAULT_POLLERS`."""
        if self.minimum_pollers is not None:
            return self.minimum_pollers * INVOCATIONS_PER_POLLER
        return self.maximum_concurrency or DEFAULT_POLLERS

    def steady_state(self) -> str:
        """``Enabled`` or ``Disabled``."""
        return "Enabled" if self.enabled else "Disabled"

    def configuration(self, state: str | None = None) -> dict[str, Any]:
        """The ``EventSourceMappingConfiguration`` document (``state`` overrides the state shown)."""
        out: dict[str, Any] = {
            "UUID": self.uuid,
            "BatchSize": self.batch_size,
            "MaximumBatchingWindowInSeconds": self.batching_window_s,
            "EventSourceArn": self.event_source_arn,
            "FunctionArn": self.function_arn,
            "LastModified": self.last_modified,
            "LastProcessingResult": self.last_processing_result,
            "State": state or self.state,
            "StateTransitionReason": self.state_transition_reason,
            "FunctionResponseTypes": list(self.response_types),
            "EventSourceMappingArn": self.arn,
        }
        if self.filters:
            out["FilterCriteria"] = {"Filters": [{"Pattern": p} for p in self.filters]}
        if self.maximum_concurrency is not None:
            out["ScalingConfig"] = {"MaximumConcurrency": self.maximum_concurrency}
        if self.minimum_pollers is not None:
            out["ProvisionedPollerConfig"] = {
                "MinimumPollers": self.minimum_pollers,
                "MaximumPollers": self.maximum_pollers,
            }
        if self.metrics:
            out["MetricsConfig"] = {"Metrics": list(self.metrics)}
        if self.kms_key_arn:
            out["KMSKeyArn"] = self.kms_key_arn
        return out

    def saved(self) -> dict[str, Any]:
        """What durable mode keeps of the mapping (see :meth:`from_saved`)."""
        return {
            "uuid": self.uuid,
            "account": self.account,
            "region": self.region,
            "event_source_arn": self.event_source_arn,
            "function": self.function,
            "batch_size": self.batch_size,
            "batching_window_s": self.batching_window_s,
            "response_types": list(self.response_types),
            "maximum_concurrency": self.maximum_concurrency,
            "filters": list(self.filters),
            "enabled": self.enabled,
            "minimum_pollers": self.minimum_pollers,
            "maximum_pollers": self.maximum_pollers,
            "metrics": list(self.metrics),
            "kms_key_arn": self.kms_key_arn,
            "tags": dict(self.tags),
            "last_modified": self.last_modified,
            "deleting": self.state == "Deleting",
        }

    @classmethod
    def from_saved(cls, saved: dict[str, Any]) -> Mapping:
        """A mapping as :meth:`saved` kept it (``Deleting`` if it was being deleted, else its steady state); a
        document of an earlier version, without the fields of provisioned mode, metrics, KMS key and tags, is a
        mapping without them."""
        fields = dict(saved)
        deleting = bool(fields.pop("deleting", False))
        mapping = cls(**fields)
        mapping.state = "Deleting" if deleting else mapping.steady_state()
        return mapping


def _int(params: dict[str, Any], name: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParameterValue(f"{name} must be an integer.")
    return value


def apply_parameters(mapping: Mapping, params: dict[str, Any], fifo: bool) -> None:
    """Check ``params`` (the request's JSON members) and set them on ``mapping``; nothing is changed when one is
    wrong. ``fifo``: whether the source queue is a FIFO queue. Raises ``InvalidParameterValue``."""
    for name in STREAM_ONLY:
        if params.get(name) is not None:
            raise InvalidParameterValue(f"{name} is not valid for SQS event sources.")
    batch_size = _int(params, "BatchSize")
    window = _int(params, "MaximumBatchingWindowInSeconds")
    new_batch = mapping.batch_size if batch_size is None else batch_size
    new_window = mapping.batching_window_s if window is None else window
    if not 1 <= new_batch <= (MAX_BATCH_SIZE_FIFO if fifo else MAX_BATCH_SIZE_STANDARD):
        if fifo:
            raise InvalidParameterValue(f"BatchSize must be between 1 and {MAX_BATCH_SIZE_FIFO} for FIFO queues.")
        raise InvalidParameterValue(f"BatchSize must be between 1 and {MAX_BATCH_SIZE_STANDARD}.")
    if not 0 <= new_window <= MAX_BATCHING_WINDOW_S:
        raise InvalidParameterValue(f"MaximumBatchingWindowInSeconds must be between 0 and {MAX_BATCHING_WINDOW_S}.")
    if fifo and new_window > 0:
        raise InvalidParameterValue("Batching window is not supported for FIFO queues.")
    if new_batch > MAX_BATCH_SIZE_WITHOUT_WINDOW and new_window < 1:
        raise InvalidParameterValue(
            "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10"
        )
    response_types = params.get("FunctionResponseTypes")
    if response_types is not None:
        if not isinstance(response_types, list) or any(t != REPORT_BATCH_ITEM_FAILURES for t in response_types):
            raise InvalidParameterValue(
                f"FunctionResponseTypes may only hold {REPORT_BATCH_ITEM_FAILURES}, got {response_types!r}."
            )
    concurrency = mapping.maximum_concurrency
    scaling = params.get("ScalingConfig")
    if scaling is not None:
        if not isinstance(scaling, dict):
            raise InvalidParameterValue("ScalingConfig must be an object.")
        concurrency = _int(scaling, "MaximumConcurrency")
        if concurrency is not None and not MIN_CONCURRENCY <= concurrency <= MAX_CONCURRENCY:
            raise InvalidParameterValue(
                f"MaximumConcurrency must be between {MIN_CONCURRENCY} and {MAX_CONCURRENCY}, got {concurrency}."
            )
    filters = mapping.filters
    criteria = params.get("FilterCriteria")
    if criteria is not None:
        if not isinstance(criteria, dict):
            raise InvalidParameterValue("FilterCriteria must be an object.")
        filters = parse_filters(criteria.get("Filters"))
    enabled = params.get("Enabled")
    if enabled is not None and not isinstance(enabled, bool):
        raise InvalidParameterValue("Enabled must be true or false.")
    pollers: tuple[int | None, int | None] = (mapping.minimum_pollers, mapping.maximum_pollers)
    provisioned = params.get("ProvisionedPollerConfig")
    if provisioned is not None:
        pollers = parse_pollers(provisioned) or (None, None)
    if concurrency is not None and pollers[0] is not None:
        raise InvalidParameterValue(EXCLUSIVE_MODES)
    metrics = mapping.metrics
    if params.get("MetricsConfig") is not None:
        metrics = parse_metrics(params["MetricsConfig"])
    kms_key_arn = mapping.kms_key_arn
    if params.get("KMSKeyArn") is not None:
        kms_key_arn = parse_kms_key_arn(params["KMSKeyArn"])
    if params.get("LoggingConfig") is not None:
        check_logging(params["LoggingConfig"])
    mapping.batch_size = new_batch
    mapping.batching_window_s = new_window
    if response_types is not None:
        mapping.response_types = list(dict.fromkeys(response_types))
    mapping.maximum_concurrency = concurrency
    mapping.filters = filters
    if enabled is not None:
        mapping.enabled = enabled
    mapping.minimum_pollers, mapping.maximum_pollers = pollers
    mapping.metrics = metrics
    mapping.kms_key_arn = kms_key_arn


def parse_metrics(value: Any) -> list[str]:
    """``MetricsConfig.Metrics`` of an SQS mapping (each once, in order; empty: no metrics). Raises
    ``ValidationError`` for a name outside the model's enum, ``InvalidParameterValue`` for a value of the wrong shape,
    more than :data:`MAX_METRICS` names, or a Kafka metric."""
    if not isinstance(value, dict):
        raise InvalidParameterValue("MetricsConfig must be an object.")
    metrics = value.get("Metrics")
    if metrics is None:
        return []
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise InvalidParameterValue("MetricsConfig.Metrics must be a list of metric names.")
    if len(metrics) > MAX_METRICS:
        raise InvalidParameterValue(f"MetricsConfig.Metrics holds at most {MAX_METRICS} names.")
    for metric in metrics:  # the model's enum first, as AWS's request validation precedes Lambda's checks
        if metric not in METRICS:
            raise enum_refusal(metric, "metricsConfig.metrics", METRICS, metrics)
    for metric in metrics:
        if metric not in SQS_METRICS:
            raise InvalidParameterValue(f"MetricsConfig {metric} is not valid for SQS event sources.")
    return list(dict.fromkeys(metrics))


def parse_kms_key_arn(value: Any) -> str | None:
    """``KMSKeyArn``: the ARN, or None for an empty string (the key removed). Raises ``InvalidParameterValue`` for a
    value the model's pattern or length refuses."""
    if not isinstance(value, str) or len(value) > 10_000 or not _KMS_KEY_ARN.fullmatch(value):
        raise InvalidParameterValue(
            f"1 validation error detected: Value '{value}' at 'kMSKeyArn' failed to satisfy constraint: Member must "
            "satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:[a-z0-9-.]+:.*)|()"
        )
    return value or None


def check_logging(value: Any) -> None:
    """Refuse a ``LoggingConfig`` for an SQS mapping: ``ValidationError`` for a ``SystemLogLevel`` outside the
    model's enum, ``InvalidParameterValue`` for any other level or a value of the wrong shape; an empty object is
    accepted as no configuration."""
    if not isinstance(value, dict):
        raise InvalidParameterValue("LoggingConfig must be an object.")
    level = value.get("SystemLogLevel")
    if level is None:
        return
    if not isinstance(level, str) or level not in LOG_LEVELS:
        raise enum_refusal(str(level), "loggingConfig.systemLogLevel", LOG_LEVELS)
    raise InvalidParameterValue("LoggingConfig is not valid for SQS event sources.")
