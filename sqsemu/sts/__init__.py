"""AWS STS on sqsemu's port: GetCallerIdentity, AssumeRole and GetSessionToken (docs/security.md, "STS")."""

from __future__ import annotations
