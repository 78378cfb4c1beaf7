"""Which failures of a partition read are worth another attempt: the server or the network gave up on the
statement, not on the data (seed 001's partial page failure)."""

from __future__ import annotations

import re

#: Said by the JDBC drivers and servers when the statement, not the data, failed.
_TRANSIENT = re.compile(
    "|".join(
        [
            r"chosen as the deadlock victim",  # SQL Server 1205
            r"lock request time ?out period exceeded",  # SQL Server 1222
            r"connection reset",
            r"connection (?:is )?closed",
            r"broken pipe",
            r"an i/o error occurred while sending to the backend",  # PostgreSQL JDBC, SQLState 08006
            r"terminating connection due to administrator command",  # PostgreSQL 57P01
            r"could not serialize access",  # PostgreSQL 40001
            r"deadlock detected",  # PostgreSQL 40P01
            r"the connection is closed",
            r"sqlstate: ?(?:08s01|08006|08003|40001|40p01|57p01)",
        ]
    ),
    re.IGNORECASE,
)


def is_transient(exc: BaseException) -> bool:
    """Whether `exc` (or what it wraps: a JVM error's whole text) is a transient failure."""
    seen: BaseException | None = exc
    while seen is not None:
        if _TRANSIENT.search(str(seen)):
            return True
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
    return False
