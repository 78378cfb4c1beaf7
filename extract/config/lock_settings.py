"""How long tidemark waits for a lock on a replica, how often it tries again, and how long a merge may
run: settings from the environment (TIDEMARK_LOCK_TIMEOUT, TIDEMARK_LOCK_ATTEMPTS, TIDEMARK_MERGE_TIMEOUT)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from extract.config import spec
from extract.config.setting import environment
from extract.core.sql_contract import LOCK_TIMEOUT_MS, MERGE_TIMEOUT_MS


@dataclass(frozen=True)
class LockSettings:
    lock_timeout: timedelta
    attempts: int
    merge_timeout: timedelta

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt `attempt` (1, 2, ...): the lock timeout, doubling."""
        return float(self.lock_timeout.total_seconds() * 2 ** (attempt - 1))


def lock_settings(env: Mapping[str, str] | None = None) -> LockSettings:
    return LockSettings(
        lock_timeout=spec.LOCK_TIMEOUT.value(env),
        attempts=spec.LOCK_ATTEMPTS.value(env),
        merge_timeout=spec.MERGE_TIMEOUT.value(env),
    )


def postgres_milliseconds(duration: timedelta) -> str:
    """A duration as Postgres' lock_timeout and statement_timeout take it."""
    return f"{int(duration.total_seconds() * 1000)}ms"


def dbt_lock_env(settings: LockSettings, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The timeouts as the merge's pre-hook (tidemark_merge_lock) reads them, in milliseconds. One at the
    pre-hook's own default is left unset where the environment has none, as a user's own `dbt run` leaves
    it: dbt parses a file again when a variable its macros read changes, from unset to set included, and
    every replica's merge reads both (at 1,000 tables, a parse of every replica after each switch)."""
    current = environment(env)
    handed: dict[str, str] = {}
    for name, timeout, default in (
        ("TIDEMARK_LOCK_TIMEOUT_MS", settings.lock_timeout, LOCK_TIMEOUT_MS),
        ("TIDEMARK_MERGE_TIMEOUT_MS", settings.merge_timeout, MERGE_TIMEOUT_MS),
    ):
        milliseconds = int(timeout.total_seconds() * 1000)
        if name in current or milliseconds != default:
            handed[name] = str(milliseconds)
    return handed
