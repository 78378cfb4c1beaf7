"""The values `state set` and `state rewind` take, checked against the stream's cursor and its source."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import psycopg

from extract.config.settings import load_settings
from extract.core.errors import TidemarkError
from extract.core.state_schema import StateSchema
from extract.source.cdc import lsn_text, parse_lsn
from extract.source.change_tracking import parse_version, version_text
from extract.source.dialects import dialect_for
from extract.source.jdbc import JdbcConnection
from extract.source.watermarks import parse_modify_id, parse_watermark
from extract.state.registry import RegistryEntry


@dataclass(frozen=True)
class _Position:
    """How a reader's cursor values read: what one is called, and its order as a number or a moment."""

    kind: str
    order: Callable[[str], int | datetime]


_POSITIONS = {
    "modify_id": _Position("a modify id (0x and 16 upper-case hex digits)", parse_modify_id),
    "change_tracking": _Position("a Change Tracking version (a whole number, or ct: and 20 digits)", parse_version),
    "cdc": _Position("a CDC log sequence number (0x and 20 hex digits, or lsn: and 20)", parse_lsn),
}
_CLOCK = _Position("a clock reading (YYYY-MM-DD HH:MM:SS[.ffffff], the source's UTC)", parse_watermark)


def _position(current: RegistryEntry) -> _Position:
    return _POSITIONS.get(current.reader, _CLOCK)


def check_cursor_value(current: RegistryEntry, text: str, option: str) -> str:
    """`text` as the stream's cursor takes it: a clock reading, a modify id, a Change Tracking version or a
    CDC log sequence number; refused otherwise."""
    value = text.strip()
    try:
        if current.reader == "modify_id":
            parse_modify_id(value)
        elif current.reader == "change_tracking":
            return version_text(int(value)) if value.isdigit() else version_text(parse_version(value))
        elif current.reader == "cdc":
            return _lsn(value)
        else:
            moment = parse_watermark(value.replace("T", " ").removesuffix("Z"))
            return moment.strftime("%Y-%m-%d %H:%M:%S.%f")
    except TidemarkError:
        kind = _position(current).kind
        raise TidemarkError(f"{option} {text!r} is not {kind}, as the cursor of {current.table_key} is") from None
    return value


def _lsn(value: str) -> str:
    """An LSN as SQL Server writes it (0x and 20 hex digits) or as the state keeps it."""
    digits = value[2:] if value.lower().startswith("0x") else None
    if digits is not None and len(digits) == 20 and all(c in "0123456789abcdefABCDEF" for c in digits):
        return lsn_text(int(digits, 16))
    return lsn_text(parse_lsn(value))


def source_position_check(current: RegistryEntry, value: str, name: str) -> None:
    """Refuse a cursor ahead of the source's clock (or its modify ids, or its Change Tracking version): the
    rows stamped in between would never be read."""
    from extract.runtime.spark import SparkRuntime

    settings = load_settings()
    dialect = dialect_for(settings.source.dialect)
    queries = {
        "modify_id": dialect.modify_id_query,
        "change_tracking": dialect.change_tracking_version_query,
        "cdc": dialect.cdc_max_lsn_query,
    }
    runtime = SparkRuntime(settings.spark_master, settings.extra_jars, jvm_log=settings.jvm_log)
    try:
        source = JdbcConnection(runtime.source_jvm, settings.source)
        try:
            rows = source.query(queries.get(current.reader, dialect.clock_query)())
        finally:
            source.close()
    finally:
        runtime.stop()
    now = str(rows[0][0]).strip() if rows and rows[0][0] else None
    if now is None:
        raise TidemarkError(f"the source returned no {_position(current).kind.split(' (')[0]}")
    if current.reader == "change_tracking":
        now = version_text(int(now))
    elif current.reader == "cdc":
        now = lsn_text(int(now, 16))
    order = _position(current).order
    if order(value) > order(now):  # type: ignore[operator]
        raise TidemarkError(f"{name}: --cursor {value} is ahead of the source, which reads {now}")


def rewind_target(
    conn: psycopg.Connection, state: StateSchema, current: RegistryEntry, since: str | None, version: int | None
) -> tuple[str, str]:
    """The cursor value a rewind goes back to, and why: --since VALUE, or the value of version N."""
    if since is not None:
        value = check_cursor_value(current, since, "--since")
        reason = f"rewound to {value}"
    else:
        row = conn.execute(
            state.sql(
                "select new_state ->> 'cursor_value' from {state_audit} where table_key = %s and version = %s"
                " order by audit_id desc limit 1"
            ),
            (current.table_key, version),
        ).fetchone()
        if row is None or row[0] is None:
            raise TidemarkError(
                f"--to-version {version}: {current.table_key} has no version {version} with a cursor value "
                "(see state history)"
            )
        value, reason = str(row[0]), f"rewound to version {version} ({row[0]})"
    if current.cursor_value is not None and _after(current, value, current.cursor_value):
        raise TidemarkError(
            f"{current.table_key}: {value} is after the cursor {current.cursor_value}; a rewind goes back "
            "(state set moves it forward)"
        )
    return value, reason


def _after(current: RegistryEntry, value: str, cursor: str) -> bool:
    order = _position(current).order
    return order(value) > order(cursor)  # type: ignore[operator]
