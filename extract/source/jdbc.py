"""Small JDBC queries (clock, catalog, checks) with bound parameters, in the JVM of the source's queries."""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from typing import Any

from py4j.protocol import Py4JJavaError

from extract.config.urls import DatabaseUrl
from extract.core.errors import SourceError


def java_properties(jvm: Any, url: DatabaseUrl) -> Any:
    """The URL's JDBC connection properties (driver, credentials, settings) as a java.util.Properties."""
    properties = jvm.java.util.Properties()
    for key, value in url.jdbc_properties().items():
        properties.setProperty(key, value)
    return properties


class JdbcConnection:
    """A plain JDBC connection in a JVM (runtime/source_jvm.py, or Spark's driver). Values come back as
    strings (or None)."""

    def __init__(self, jvm: Any, url: DatabaseUrl) -> None:
        self._url = url
        self._jvm = jvm
        props = java_properties(jvm, url)
        try:
            jvm.java.lang.Class.forName(url.driver_class)
            self._conn = jvm.java.sql.DriverManager.getConnection(url.jdbc_url, props)
        except Exception as exc:  # py4j wraps every Java exception
            raise SourceError(f"cannot connect to {url.display}: {java_message(exc)}") from None

    def query(self, sql: str, params: Sequence[str] = (), max_rows: int = 0) -> list[tuple[str | None, ...]]:
        """The rows of `sql` (its ? parameters bound to `params`); with `max_rows`, the server stops there.
        The whole result comes back in one call into the JVM, as JSON text, not one call per value."""
        try:
            text = self._jvm.tidemark.landing.QueryRows.readJson(self._conn, sql, encode_values(params), max_rows)
        except Exception as exc:
            raise SourceError(f"query on {self._url.display} failed: {java_message(exc)}") from None
        return [tuple(row) for row in json.loads(text)]

    def read_into(self, sink: Any, side: str, sql: str) -> None:
        """The rows of `sql` handed to `sink` in the JVM (its `read(side, connection, sql)`), where they stay."""
        try:
            sink.read(side, self._conn, sql)
        except Exception as exc:
            raise SourceError(f"query on {self._url.display} failed: {java_message(exc)}") from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> JdbcConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def jvm_error(exc: BaseException) -> Py4JJavaError | None:
    """The JVM's error behind `exc` (py4j's Py4JJavaError): `exc` itself, or the one it was raised while
    handling. Once Spark has run in a process, pyspark converts every JVM's errors through its own driver's
    gateway: for the source's JVM that fails (an assertion once the driver has stopped, an unknown object
    in the driver's), or names a Spark error, with the JVM's error as the context."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, Py4JJavaError):
            return seen
        seen = seen.__context__
    return None


def java_message(exc: BaseException) -> str:
    exc = jvm_error(exc) or exc
    text = str(exc)
    # py4j puts the Java exception's first line after "Py4JJavaError: ...: "
    for line in text.splitlines():
        if "Exception:" in line:
            return line.split("Exception:", 1)[1].strip()
    return text.splitlines()[0] if text else type(exc).__name__


def encode_values(values: Sequence[str | None]) -> bytes:
    """Values as tidemark.landing.QueryRows reads its parameters: per value a length (-1: NULL) and its
    UTF-8 bytes."""
    parts = []
    for value in values:
        if value is None:
            parts.append(struct.pack(">i", -1))
        else:
            text = value.encode("utf-8")
            parts.append(struct.pack(">i", len(text)) + text)
    return b"".join(parts)
