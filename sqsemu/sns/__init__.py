"""Amazon SNS topics, subscriptions and delivery (docs/sns.md)."""

from __future__ import annotations
