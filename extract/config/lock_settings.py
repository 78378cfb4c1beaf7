"""How long tidemark waits for a lock on a replica, how often it tries again, and how long a merge may
run: settings from the environment (TIDEMARK_LOCK_TIMEOUT, TIDEMARK_LOCK_ATTEMPTS, TIDEMARK_MERGE_TIMEOUT)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from extract.config.durations import parse_duration
from extract.core.errors import TidemarkError
from extract.core.sql_contract import LOCK_TIMEOUT_MS, MERGE_TIMEOUT_MS

#: A reader's query queues behind a waiting ALTER for at most this long, then the ALTER gives way.
DEFAULT_LOCK_TIMEOUT = f"{LOCK_TIMEOUT_MS}ms"
DEFAULT_LOCK_ATTEMPTS = "4"
#: The longest one merge statement may run (it holds the table's merge lock meanwhile); 0s: no limit.
DEFAULT_MERGE_TIMEOUT = f"{MERGE_TIMEOUT_MS}ms"


@dataclass(frozen=True)
class LockSettings:
    lock_timeout: timedelta
    attempts: int
    merge_timeout: timedelta

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt `attempt` (1, 2, ...): the lock timeout, doubling."""
        return float(self.lock_timeout.total_seconds() * 2 ** (attempt - 1))


def _attempts(text: str) -> int:
    value = int(text) if text.strip().isdigit() else 0
    if not 1 <= value <= 20:
        raise TidemarkError(f"TIDEMARK_LOCK_ATTEMPTS must be a whole number from 1 to 20, not {text!r}")
    return value


def lock_settings(env: Mapping[str, str] | None = None) -> LockSettings:
    env = os.environ if env is None else env
    return LockSettings(
        lock_timeout=parse_duration(
            env.get("TIDEMARK_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT),
            "TIDEMARK_LOCK_TIMEOUT",
            timedelta(milliseconds=10),
            timedelta(minutes=10),
        ),
        attempts=_attempts(env.get("TIDEMARK_LOCK_ATTEMPTS", DEFAULT_LOCK_ATTEMPTS)),
        merge_timeout=parse_duration(
            env.get("TIDEMARK_MERGE_TIMEOUT", DEFAULT_MERGE_TIMEOUT),
            "TIDEMARK_MERGE_TIMEOUT",
            maximum=timedelta(days=7),
        ),
    )


def postgres_milliseconds(duration: timedelta) -> str:
    """A duration as Postgres' lock_timeout and statement_timeout take it."""
    return f"{int(duration.total_seconds() * 1000)}ms"


def dbt_lock_env(settings: LockSettings) -> dict[str, str]:
    """The timeouts as the merge's pre-hook (tidemark_merge_lock) reads them, in milliseconds."""
    return {
        "TIDEMARK_LOCK_TIMEOUT_MS": str(int(settings.lock_timeout.total_seconds() * 1000)),
        "TIDEMARK_MERGE_TIMEOUT_MS": str(int(settings.merge_timeout.total_seconds() * 1000)),
    }
