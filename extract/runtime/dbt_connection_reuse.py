"""dbt keeps each thread's connection to the target from one node to the next, instead of closing it
after every node (dbt-adapters' `BaseConnectionManager.release`, which dbt calls when a node ends).

A table's merge and its history are two nodes: a first pass over 1,000 tables opened 2,000
connections, each a server process, a login and catalog caches that start cold, for a node of a few
statements. dbt-snowflake keeps its connections the same way (its `reuse_connections`).

A connection is kept only when its node ended outside a transaction, on a connection that works. Its
session then forgets what the node left in it (settings, temporary relations, session locks) in one
round trip, so that the next node finds it as a new connection would be. Otherwise dbt's own release
closes it, rolling back what is open. dbt closes the connections kept at the end of its run
(`cleanup_all`), as it does any connection left open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from extract.core.sessions import FORGET_SESSION
from extract.runtime.dbt_replacements import in_place, put_in_place


def forgotten(handle: Any) -> bool:
    """Whether the psycopg2 connection `handle`, outside a transaction, forgot its session's state."""
    import psycopg2  # type: ignore[import-untyped]
    from psycopg2.extensions import TRANSACTION_STATUS_IDLE  # type: ignore[import-untyped]

    try:
        if handle.closed or handle.get_transaction_status() != TRANSACTION_STATUS_IDLE:
            return False
        with handle.cursor() as cursor:
            cursor.execute(FORGET_SESSION)
        # psycopg2 begins a transaction around it unless it counts itself in one already: dbt ends its
        # transactions with a COMMIT statement, which psycopg2 does not see.
        if handle.get_transaction_status() != TRANSACTION_STATUS_IDLE:
            handle.commit()
    except psycopg2.Error:
        return False
    return True


def install() -> None:
    """Put the release that keeps connections in place of dbt-postgres' (dbt imported)."""
    from dbt.adapters.postgres.connections import PostgresConnectionManager

    if in_place(PostgresConnectionManager.release):
        return
    release_and_close: Callable[[Any], None] = PostgresConnectionManager.release

    def release(self: Any) -> None:
        connection = self.get_if_exists()
        kept = connection is not None and connection.state == "open" and not connection.transaction_open
        if not (kept and forgotten(connection.handle)):
            release_and_close(self)

    put_in_place([(PostgresConnectionManager, "release", release)])
