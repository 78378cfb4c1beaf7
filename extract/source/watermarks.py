"""Watermarks: what a run reads before its data query, and where the next run's filter starts.

A temporal cursor's watermark is the source's UTC clock ('YYYY-MM-DD HH:MM:SS.f...'); the next run
starts a safety window before it. A modify-id cursor's (rowversion) is the lowest modify id a
transaction still in flight may commit ('0x' and 16 hex digits); the next run starts exactly
there, as nothing can commit below it. Both forms sort as text in the order they sort as values,
which the state's views rely on (max over the text).
"""

from __future__ import annotations

import re
from datetime import datetime

from extract.core.errors import LogicalError, TidemarkError
from extract.source.catalog import SourceColumn
from extract.source.dialects import Dialect
from extract.source.jdbc import JdbcConnection

_MODIFY_ID = re.compile(r"^0x[0-9A-F]{16}$")
#: How a Change Tracking version starts in the state (extract/source/change_tracking.py).
CHANGE_TRACKING_PREFIX = "ct:"
#: How a CDC log sequence number starts in the state (extract/source/cdc.py).
CDC_PREFIX = "lsn:"


def read_watermark(conn: JdbcConnection, dialect: Dialect, cursor: SourceColumn | None) -> str:
    """The new watermark of a run whose cursor is `cursor`: the clock, or the lowest active modify id."""
    modify_id = cursor is not None and dialect.is_modify_id(cursor)
    rows = conn.query(dialect.modify_id_query() if modify_id else dialect.clock_query())
    text = rows[0][0] if rows else None
    if not text:
        raise TidemarkError(f"the source returned no {'modify id' if modify_id else 'clock value'}")
    text = text.strip()
    if modify_id:
        parse_modify_id(text)
    else:
        parse_watermark(text)  # refuse anything that is not a clock reading
    return text


def usable_watermark(dialect: Dialect, cursor: SourceColumn | None, committed: str | None) -> str | None:
    """The committed watermark if it is of the cursor's kind; None (a full read) when the table has no
    cursor, was never merged, or its cursor changed kind (a rowversion column added, or the seed's
    cursor_column changed), or Change Tracking or CDC read it last."""
    if cursor is None or committed is None or committed.startswith((CHANGE_TRACKING_PREFIX, CDC_PREFIX)):
        return None
    return committed if committed.startswith("0x") == dialect.is_modify_id(cursor) else None


def check_monotonic(table: str, committed: str | None, candidate: str) -> None:
    """A run's new watermark may not lie before the committed one: the source's clock or counter went
    back (or the state was edited), and the rows stamped in between would be read in the wrong order."""
    if committed is None:
        return
    if committed.startswith("0x") != candidate.startswith("0x"):
        raise LogicalError(
            f"{table}: the committed watermark {committed} and the new one {candidate} are of different kinds; "
            "the cursor column changed kind (clock and modify id): rebuild the replica with a full sync"
        )
    order = parse_modify_id if candidate.startswith("0x") else parse_watermark
    if order(candidate) < order(committed):  # type: ignore[operator]
        raise LogicalError(
            f"{table}: the source reads {candidate}, before the committed watermark {committed}; "
            "the watermark may not move back"
        )


def parse_modify_id(text: str) -> int:
    if not _MODIFY_ID.match(text.strip()):
        raise TidemarkError(f"not a modify id ('0x' and 16 upper-case hex digits): {text!r}")
    return int(text.strip()[2:], 16)


def parse_watermark(text: str) -> datetime:
    """A clock watermark as a datetime, floored to microseconds: a lower start only re-reads."""
    head, _, fraction = text.strip().partition(".")
    try:
        moment = datetime.strptime(head, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        raise TidemarkError(f"not a clock reading: {text!r}") from None
    digits = (fraction + "000000")[:6]
    if not digits.isdigit():
        raise TidemarkError(f"not a clock reading: {text!r}")
    return moment.replace(microsecond=int(digits))
