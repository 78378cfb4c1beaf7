"""DDL on a replica waits a bounded time for its lock. A reader that keeps a transaction open holds
a lock that an ALTER, a DROP or a RENAME must wait for, and every later reader queues behind the
waiting statement: one forgotten session would stop every dashboard on the replica. So each such
transaction runs with lock_timeout (TIDEMARK_LOCK_TIMEOUT), is tried again with a doubling pause a
bounded number of times (TIDEMARK_LOCK_ATTEMPTS), and then fails naming who holds the lock."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import psycopg
from psycopg import errors

from extract.config.lock_settings import LockSettings, lock_settings, postgres_milliseconds
from extract.core.errors import EXIT_TABLE_FAILED, TidemarkError

T = TypeVar("T")

_HOLDERS = """
select distinct a.pid, coalesce(a.usename, '?'), coalesce(a.application_name, ''),
    extract(epoch from now() - a.xact_start)::bigint, coalesce(a.state, '?'), l.relation::regclass::text
from pg_locks as l
join pg_stat_activity as a on a.pid = l.pid
where l.granted and l.pid <> pg_backend_pid()
    and l.relation = any(array(select to_regclass(name) from unnest(%s::text[]) as name))
order by 4 desc nulls last
"""


class ReplicaLocked(TidemarkError):
    """Another session holds a lock the replica's DDL needs, past every attempt: the table's run fails."""

    exit_code = EXIT_TABLE_FAILED


def lock_holders(conn: psycopg.Connection, relations: Sequence[str]) -> str:
    """Who holds a lock on `relations` (schema-qualified, quoted names), in words."""
    rows = conn.execute(_HOLDERS, (list(relations),)).fetchall()
    if not rows:
        return "a session that has since let go"
    said = [
        f"pid {pid} ({user}{', ' + app if app else ''}, {state}, its transaction open for {seconds}s) on {relation}"
        for pid, user, app, seconds, state, relation in rows[:3]
    ]
    return "; ".join(said) + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")


def with_lock_timeout(
    conn: psycopg.Connection,
    relations: Sequence[str],
    work: Callable[[], T],
    *,
    first: Callable[[], object] | None = None,
    settings: LockSettings | None = None,
) -> T:
    """Run `work` in a transaction (a savepoint inside the caller's) whose lock waits end after the lock
    timeout; try again after a pause, and after the last attempt fail naming the lock's holders.
    `first` runs in the same transaction before the timeout applies: tidemark's own advisory locks,
    which a run or a merge of the same table holds for as long as it takes."""
    settings = settings or lock_settings()
    for attempt in range(1, settings.attempts + 1):
        try:
            with conn.transaction():
                if first is not None:
                    first()
                conn.execute(
                    "select set_config('lock_timeout', %s, true)", (postgres_milliseconds(settings.lock_timeout),)
                )
                result = work()
                conn.execute("select set_config('lock_timeout', '0', true)")
                return result
        except errors.LockNotAvailable:
            holders = lock_holders(conn, relations)
            if attempt == settings.attempts:
                raise ReplicaLocked(
                    f"{relations[0]}: gave up waiting for a lock after {attempt} attempts of "
                    f"{settings.lock_timeout.total_seconds():g}s: held by {holders}"
                ) from None
            time.sleep(settings.backoff(attempt))
    raise AssertionError("unreachable")
