"""The region of a SigV4 credential scope (``<key>/<date>/<region>/sqs/aws4_request``): sqsemu files the caller's
queues under it and writes it into ARNs, so only a value that looks like a region is taken.

A region is lower-case letters and digits joined by single hyphens (``us-east-1``, ``eu-central-2``,
``us-gov-west-1``, or a local name like ``local``), at most 64 characters: the rule ``--region`` follows
(:data:`sqsemu.config.REGION_RE`). Anything else (``a<b>&c``, ``us-east-1:999999999999:evil``) is ignored and the
server's default region is used, as for a request that names no region (AWS General Reference, "AWS Regions";
"Signature Version 4 signing process": the credential scope).
"""

from __future__ import annotations

from sqsemu.config import REGION_RE

__all__ = ["MAX_REGION_LENGTH", "valid_region"]

MAX_REGION_LENGTH = 64


def valid_region(region: str) -> bool:
    """True when ``region`` may name a namespace and appear in ARNs (module docstring)."""
    return len(region) <= MAX_REGION_LENGTH and REGION_RE.fullmatch(region) is not None
