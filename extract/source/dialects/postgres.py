"""PostgreSQL as a source: the stand-in for SQL Server in tests and the demo."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from extract.core.quoting import postgres_identifier, sql_string
from extract.source.catalog import SourceColumn
from extract.source.dialects import postgres_canonical as canonical
from extract.source.dialects import postgres_catalog as catalog_sql
from extract.source.dialects.base import Dialect, EpochUnit

# format_type() puts the modifier in the middle for "timestamp(3) without time zone".
_TYPE = re.compile(
    r"^(?P<head>[a-z0-9_ \"]+?)(?:\((?P<args>[0-9, ]+)\))?(?P<tail> with(?:out)? time zone)?(?P<array>\[\])?$"
)
#: The schema of the stand-in's Change Tracking (extract/devtools/change_tracking.py).
TRACKING = "tidemark_change_tracking"
#: The schema of the stand-in's CDC (extract/devtools/cdc.py), named as SQL Server's.
CDC_SCHEMA = "cdc"
#: Canonical form -> the source types whose plain text is the replica's (of that form), when the source
#: is PostgreSQL too. Time zones are left out: a session prints them in its own.
_PRINTED_ALIKE = {
    "timestamp": frozenset({"timestamp without time zone"}),
    "date": frozenset({"date"}),
    "time": frozenset({"time without time zone"}),
    "bool": frozenset({"boolean"}),
    "uuid": frozenset({"uuid"}),
}
_LENGTH_TYPES = frozenset({"character varying", "character", "bit", "bit varying"})


class PostgresDialect(Dialect):
    name = "postgres"
    temporal_types = frozenset({"timestamp without time zone", "timestamp with time zone", "date"})
    zoned_types = frozenset({"timestamp with time zone"})
    #: The stand-in's rowversion: a domain over bigint that extract/devtools/rowversion.py sets up.
    modify_id_types = frozenset({"rowversion"})
    calendar_types = temporal_types

    def quote(self, identifier: str) -> str:
        return postgres_identifier(identifier)

    def modify_id_query(self) -> str:
        return "select '0x' || upper(lpad(to_hex(min_active_rowversion()), 16, '0')) as lowest_active"

    def modify_id_literal(self, value: int, column: SourceColumn) -> str:
        return f"cast({int(value)} as bigint)"

    def change_tracking_installed_query(self) -> str | None:
        return f"select case when to_regnamespace({sql_string(TRACKING)}) is null then '0' else '1' end"

    def change_tracking_query(self) -> str:
        return f"select schema_name, table_name, cast(min_valid_version as text) from {TRACKING}.tables"

    def change_tracking_version_query(self) -> str:
        return f"select cast({TRACKING}.current_version() as text) as current_version"

    def changes_relation(self, schema: str, table: str, since: int) -> str:
        # The stand-in's CHANGETABLE gives each key as jsonb: typed again as the table's row, whose
        # other columns stay NULL (extract/devtools/change_tracking.py).
        changes = f"{TRACKING}.changetable_changes({sql_string(schema)}, {sql_string(table)}, {int(since)})"
        row_type = f"cast(null as {self.table_ref(schema, table)})"
        return (
            f"(select changed_key.*, c.sys_change_operation from {changes} as c"
            f" cross join lateral jsonb_populate_record({row_type}, c.sys_change_key) as changed_key) as ct"
        )

    def cdc_installed_query(self) -> str:
        return f"select case when to_regnamespace({sql_string(CDC_SCHEMA)}) is null then '0' else '1' end"

    def cdc_instances_query(self) -> str:
        return (
            "select source_schema, source_table, capture_instance, lpad(to_hex(start_lsn), 20, '0'),"
            f" lpad(to_hex(min_lsn), 20, '0') from {CDC_SCHEMA}.change_tables"
        )

    def cdc_captured_columns_query(self) -> str:
        return f"select capture_instance, column_name from {CDC_SCHEMA}.captured_columns"

    def cdc_max_lsn_query(self) -> str:
        return f"select lpad(to_hex({CDC_SCHEMA}.fn_cdc_get_max_lsn()), 20, '0') as max_lsn"

    def cdc_changes(self, instance: str, after: int, upto: int) -> str:
        function = f"{CDC_SCHEMA}.{self.quote('fn_cdc_get_all_changes_' + instance)}"
        return f"{function}(cast({int(after) + 1} as bigint), cast({int(upto)} as bigint), 'all update old')"

    def clock_query(self) -> str:
        return "select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as now_utc"

    def catalog_query(self) -> str:
        return catalog_sql.COLUMNS_OF_TABLE

    def tables_query(self) -> str:
        return catalog_sql.TABLES

    def tables_with_modify_dates_query(self) -> str:
        return catalog_sql.TABLES_WITH_MODIFY_DATES

    def columns_changed_since_query(self) -> str:
        return catalog_sql.COLUMNS_CHANGED_SINCE

    def tracks_modify_dates_query(self) -> str | None:
        return catalog_sql.TRACKS_MODIFY_DATES

    def catalog_row_to_column(self, row: Sequence[str | None]) -> tuple[SourceColumn, int | None]:
        name, type_text, nullable, ordinal, key_ordinal = row
        assert name is not None and type_text is not None and ordinal is not None
        match = _TYPE.match(type_text)
        base, args = (
            (type_text, [])
            if match is None
            else (
                match.group("head").strip() + (match.group("tail") or "") + (match.group("array") or ""),
                [int(a) for a in (match.group("args") or "").split(",") if a.strip()],
            )
        )
        length = precision = scale = None
        if base in _LENGTH_TYPES:
            length = args[0] if args else -1
        elif base == "numeric" and args:
            precision, scale = args[0], args[1] if len(args) > 1 else 0
        elif args:
            precision = args[0]
        column = SourceColumn(name, base, length, precision, scale, nullable == "1", int(ordinal))
        return column, None if key_ordinal is None else int(key_ordinal)

    def cursor_resolution(self, column: SourceColumn) -> timedelta:
        if column.base_type == "date":
            return timedelta(days=1)
        digits = 6 if column.precision is None else column.precision
        return timedelta(microseconds=10 ** max(6 - digits, 0))

    def timestamp_literal(self, value: datetime, column: SourceColumn) -> str:
        if column.base_type in self.zoned_types:
            return f"cast('{value:%Y-%m-%d %H:%M:%S.%f}+00' as timestamp with time zone)"
        return f"cast('{value:%Y-%m-%d %H:%M:%S.%f}' as timestamp)"

    def epoch_expression(self, column: SourceColumn, unit: EpochUnit) -> str:
        quoted = self.quote(column.name)
        if unit == "day":
            return f"(cast({quoted} as date) - date '1970-01-01')"
        # Exact: extract returns numeric; a zoned value counts from 1970-01-01 UTC.
        return f"cast(floor(extract(epoch from {quoted}) * 1000000) as bigint)"

    def text_expression(self, column: SourceColumn) -> str:
        return f"cast({self.quote(column.name)} as text)"

    def position_text(self, column: SourceColumn, qualifier: str = "") -> str:
        return f"cast({qualifier}{self.quote(column.name)} as text)"

    def position_type(self, column: SourceColumn) -> str:
        # Unconstrained, so nothing is cut; bpchar, since plain "character" means character(1).
        return "bpchar" if column.base_type == "character" else column.base_type

    def canonical_text(self, column: SourceColumn, kind: str, length: int | None) -> str:
        return canonical.canonical_text(self.quote(column.name), kind, length)

    def plain_text_alike(self, column: SourceColumn, target_type: str, kind: str) -> bool:
        # A numeric prints its column's scale; the rest print a value alike whatever their modifiers, as
        # both sessions write dates ISO (JDBC's and the comparison's, replica_side).
        if kind == "decimal":
            return column.base_type == "numeric" and column.scale == canonical.numeric_scale(target_type)
        return column.base_type in _PRINTED_ALIKE.get(kind, ())

    def plain_text(self, column: SourceColumn) -> str:
        return canonical.plain_text(self.quote(column.name))

    def row_text(self, expressions: Sequence[str]) -> str:
        return canonical.row_text(expressions)

    def hash_bits(self, text: str, bits: int) -> str:
        return canonical.hash_bits(text, bits)

    def in_integers(self, expression: str, values: Sequence[int]) -> str:
        # One array constant: the planner hashes it, however many values it holds.
        return f"{expression} = any(cast('{{{','.join(str(int(v)) for v in values)}}}' as bigint[]))"

    def exact_sum(self, expression: str) -> str:
        return f"cast(sum({expression}) as numeric(38, 0))"  # summed in 128 bits, no overflow
