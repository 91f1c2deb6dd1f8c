"""SQS wire formats: protocol detection, the JSON 1.0 and Query codecs, the operations table, errors, URLs, MD5.

Nothing here holds state or knows about HTTP servers; ``sqsemu.http.app`` drives it.
"""

from __future__ import annotations
