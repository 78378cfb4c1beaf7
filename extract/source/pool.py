"""The source connections of one process: one per thread that reads the source, handed on between threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from extract.config.urls import DatabaseUrl
from extract.source.jdbc import JdbcConnection


class SourcePool:
    def __init__(self, jvm: Callable[[], Any], url: DatabaseUrl) -> None:
        """`jvm` gives the driver JVM, started on the first connection."""
        self._jvm = jvm
        self._url = url
        self._local = threading.local()
        self._connections: list[JdbcConnection] = []
        self._lock = threading.Lock()
        self._idle: list[JdbcConnection] = []

    def connect_now(self) -> None:
        """One connection, so that a bad source URL fails before any table starts; the first thread that
        reads the source takes it over."""
        if not self._connections:
            connection = self._connect()
            with self._lock:
                self._idle.append(connection)

    def connection(self) -> JdbcConnection:
        """This thread's connection to the source: tables synced at once each use their own."""
        connection: JdbcConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            self._local.connection = connection = connection or self._connect()
        return connection

    def _connect(self) -> JdbcConnection:
        connection = JdbcConnection(self._jvm(), self._url)
        with self._lock:
            self._connections.append(connection)
        return connection

    def release(self) -> None:
        """Hand this thread's connection to the next thread that reads the source."""
        connection: JdbcConnection | None = getattr(self._local, "connection", None)
        if connection is not None:
            self._local.connection = None
            with self._lock:
                self._idle.append(connection)

    def close(self) -> None:
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
