"""The target connections of one pass, handed from one run to the next.

A pass over a thousand small tables would otherwise open several connections a table: each costs the
server a process, a login and catalog caches that start cold, more than a small table's bookkeeping.
A connection goes back to the pool only after a block that ended without an error, what it left open
committed (as psycopg's `with connect()` ends); then its session forgets its settings, temporary
tables and session locks, so that the next run finds it as a new one. Anything else closes it
(`FORGET_SESSION`, extract/core/sessions.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg.pq import TransactionStatus

from extract.config.urls import DatabaseUrl
from extract.core.sessions import FORGET_SESSION


class TargetPool:
    def __init__(self, url: DatabaseUrl) -> None:
        self._url = url
        self._lock = threading.Lock()
        self._idle: list[psycopg.Connection] = []
        self._closed = False

    @contextmanager
    def connection(self, *, autocommit: bool) -> Iterator[psycopg.Connection]:
        """A connection of the pool's, or a new one, in `autocommit` mode or not."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = psycopg.connect(self._url.libpq_url, autocommit=autocommit)
        else:
            conn.autocommit = autocommit
        try:
            yield conn
        except BaseException:
            conn.close()
            raise
        self._give_back(conn)

    def _give_back(self, conn: psycopg.Connection) -> None:
        status = conn.info.transaction_status
        if conn.closed or status not in (TransactionStatus.IDLE, TransactionStatus.INTRANS):
            conn.close()
            return
        try:
            conn.commit()  # what the block left open, as psycopg's own `with connect()` ends
            conn.autocommit = True
            conn.execute(FORGET_SESSION)
        except psycopg.Error:
            conn.close()
            return
        with self._lock:
            if not self._closed:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close the idle connections; one in use closes when given back."""
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for conn in idle:
            conn.close()
