"""The values `state set` and `state rewind` take, checked against the stream's cursor and its source."""

from __future__ import annotations

import psycopg

from extract.config.settings import load_settings
from extract.core.errors import TidemarkError
from extract.core.state_schema import StateSchema
from extract.source.dialects import dialect_for
from extract.source.jdbc import JdbcConnection
from extract.source.watermarks import parse_modify_id, parse_watermark
from extract.state.registry import RegistryEntry


def check_cursor_value(current: RegistryEntry, text: str, option: str) -> str:
    """`text` as the stream's cursor takes it: a clock reading, or a modify id; refused otherwise."""
    value = text.strip()
    try:
        if current.reader == "modify_id":
            parse_modify_id(value)
        else:
            moment = parse_watermark(value.replace("T", " ").removesuffix("Z"))
            return moment.strftime("%Y-%m-%d %H:%M:%S.%f")
    except TidemarkError:
        kind = (
            "a modify id (0x and 16 upper-case hex digits)"
            if current.reader == "modify_id"
            else ("a clock reading (YYYY-MM-DD HH:MM:SS[.ffffff], the source's UTC)")
        )
        raise TidemarkError(f"{option} {text!r} is not {kind}, as the cursor of {current.table_key} is") from None
    return value


def source_position_check(current: RegistryEntry, value: str, name: str) -> None:
    """Refuse a cursor ahead of the source's clock (or its modify ids): the rows stamped in between would
    never be read."""
    from extract.runtime.spark import SparkRuntime

    settings = load_settings()
    dialect = dialect_for(settings.source.dialect)
    runtime = SparkRuntime(settings.spark_master, settings.extra_jars, jvm_log=settings.jvm_log)
    try:
        source = JdbcConnection(runtime.source_jvm, settings.source)
        try:
            modify_id = current.reader == "modify_id"
            rows = source.query(dialect.modify_id_query() if modify_id else dialect.clock_query())
        finally:
            source.close()
    finally:
        runtime.stop()
    now = str(rows[0][0]).strip() if rows and rows[0][0] else None
    if now is None:
        raise TidemarkError(f"the source returned no {'modify id' if modify_id else 'clock value'}")
    ahead = (
        parse_modify_id(value) > parse_modify_id(now) if modify_id else parse_watermark(value) > parse_watermark(now)
    )
    if ahead:
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
    if current.reader == "modify_id":
        return parse_modify_id(value) > parse_modify_id(cursor)
    return parse_watermark(value) > parse_watermark(cursor)
