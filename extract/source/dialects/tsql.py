"""SQL Server (T-SQL), spoken through mssql-jdbc or jTDS."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from extract.core.quoting import sql_string, tsql_identifier
from extract.source.catalog import SourceColumn
from extract.source.dialects import tsql_catalog as catalog_sql
from extract.source.dialects.base import Dialect, EpochUnit, joined_text

_UNICODE_LENGTH = frozenset({"nvarchar", "nchar"})
_BYTE_LENGTH = frozenset({"varchar", "char", "varbinary", "binary"})
_FRACTIONAL = frozenset({"datetime2", "time", "datetimeoffset"})


def _int(value: str | None) -> int | None:
    return None if value is None else int(value)


class TsqlDialect(Dialect):
    name = "sqlserver"
    temporal_types = frozenset({"datetime", "datetime2", "smalldatetime", "date", "datetimeoffset"})
    zoned_types = frozenset({"datetimeoffset"})
    modify_id_types = frozenset({"timestamp", "rowversion"})
    calendar_types = frozenset({"date", "datetime", "datetime2", "smalldatetime"})

    def quote(self, identifier: str) -> str:
        return tsql_identifier(identifier)

    def modify_id_query(self) -> str:
        # Style 1: '0x' and 16 upper-case hex digits. No transaction in flight can commit below it.
        return "select convert(varchar(18), min_active_rowversion(), 1) as lowest_active"

    def modify_id_literal(self, value: int, column: SourceColumn) -> str:
        return f"0x{value:016X}"

    def change_tracking_query(self) -> str:
        return (
            "select s.name, t.name, convert(varchar(20), tracked.min_valid_version)"
            " from sys.change_tracking_tables as tracked"
            " inner join sys.tables as t on t.object_id = tracked.object_id"
            " inner join sys.schemas as s on s.schema_id = t.schema_id"
        )

    def change_tracking_version_query(self) -> str:
        return "select convert(varchar(20), change_tracking_current_version()) as current_version"

    def changes_relation(self, schema: str, table: str, since: int) -> str:
        return f"changetable(changes {self.table_ref(schema, table)}, {int(since)}) as ct"

    def cdc_installed_query(self) -> str:
        return "select convert(varchar(1), is_cdc_enabled) from sys.databases where database_id = db_id()"

    def cdc_instances_query(self) -> str:
        return (
            "select s.name, t.name, captured.capture_instance, convert(varchar(20), captured.start_lsn, 2),"
            " convert(varchar(20), sys.fn_cdc_get_min_lsn(captured.capture_instance), 2)"
            " from cdc.change_tables as captured"
            " inner join sys.tables as t on t.object_id = captured.source_object_id"
            " inner join sys.schemas as s on s.schema_id = t.schema_id"
        )

    def cdc_captured_columns_query(self) -> str:
        return (
            "select captured.capture_instance, columns.column_name from cdc.captured_columns as columns"
            " inner join cdc.change_tables as captured on captured.object_id = columns.object_id"
        )

    def cdc_max_lsn_query(self) -> str:
        return "select convert(varchar(20), sys.fn_cdc_get_max_lsn(), 2) as max_lsn"

    def cdc_changes(self, instance: str, after: int, upto: int) -> str:
        function = f"cdc.{self.quote('fn_cdc_get_all_changes_' + instance)}"
        return f"{function}(sys.fn_cdc_increment_lsn(0x{int(after):020X}), 0x{int(upto):020X}, N'all update old')"

    def clock_query(self) -> str:
        # Style 121 keeps all seven fractional digits of datetime2(7).
        return "select convert(varchar(27), sysutcdatetime(), 121) as now_utc"

    def catalog_query(self) -> str:
        return catalog_sql.COLUMNS_OF_TABLE

    def tables_query(self) -> str:
        return catalog_sql.TABLES

    def tables_with_modify_dates_query(self) -> str:
        return catalog_sql.TABLES_WITH_MODIFY_DATES

    def columns_changed_since_query(self) -> str:
        return catalog_sql.COLUMNS_CHANGED_SINCE

    def catalog_clock_query(self) -> str:
        return catalog_sql.CATALOG_CLOCK

    def catalog_row_to_column(self, row: Sequence[str | None]) -> tuple[SourceColumn, int | None]:
        name, base, max_length, precision, scale, nullable, ordinal, key_ordinal = row
        assert name is not None and base is not None and ordinal is not None
        base = base.lower()
        length = precision_out = scale_out = None
        raw_length = _int(max_length)
        if base in _UNICODE_LENGTH and raw_length is not None:
            length = -1 if raw_length == -1 else raw_length // 2
        elif base in _BYTE_LENGTH:
            length = raw_length
        elif base in {"decimal", "numeric"}:
            precision_out, scale_out = _int(precision), _int(scale)
        elif base in _FRACTIONAL:
            precision_out = _int(scale)
        column = SourceColumn(
            name=name,
            base_type=base,
            length=length,
            precision=precision_out,
            scale=scale_out,
            nullable=nullable in {"1", "true", "True"},
            ordinal=int(ordinal),
        )
        return column, _int(key_ordinal)

    def cursor_resolution(self, column: SourceColumn) -> timedelta:
        if column.base_type == "date":
            return timedelta(days=1)
        if column.base_type == "smalldatetime":
            return timedelta(minutes=1)
        if column.base_type == "datetime":
            return timedelta(microseconds=3334)  # 1/300 s, rounded up
        digits = 7 if column.precision is None else column.precision
        return timedelta(microseconds=10 ** max(6 - digits, 0))

    def timestamp_literal(self, value: datetime, column: SourceColumn) -> str:
        if column.base_type in self.zoned_types:
            return f"cast('{value:%Y-%m-%dT%H:%M:%S.%f}+00:00' as datetimeoffset(7))"
        return f"cast('{value:%Y-%m-%dT%H:%M:%S.%f}' as datetime2(7))"

    def epoch_expression(self, column: SourceColumn, unit: EpochUnit) -> str:
        quoted = self.quote(column.name)
        if unit == "day":
            return f"datediff(day, cast('1970-01-01' as date), {quoted})"
        # datetime's 1/300 s ticks as the milliseconds its canonical text shows; datediff_big counts
        # the microsecond boundaries crossed, so datetime2(7)'s seventh digit is dropped, as verify expects.
        value = f"cast({quoted} as datetime2(3))" if column.base_type == "datetime" else quoted
        return f"datediff_big(microsecond, cast('1970-01-01' as datetime2(7)), {value})"

    def text_expression(self, column: SourceColumn) -> str:
        quoted = self.quote(column.name)
        base = column.base_type
        if base in {"geography", "geometry"}:
            # Hex of the native serialisation, as SQL Server itself shows it, without 0x.
            return f"convert(varchar(max), cast({quoted} as varbinary(max)), 2)"
        if base == "hierarchyid":
            return f"cast({quoted} as nvarchar(4000))"
        if base == "uniqueidentifier":
            return f"lower(convert(nvarchar(36), {quoted}))"
        if base == "time":
            return f"convert(varchar(16), {quoted}, 121)"
        if base == "datetimeoffset":
            return f"convert(varchar(34), {quoted}, 121)"
        return f"convert(nvarchar(max), {quoted})"

    def count_expression(self) -> str:
        return "count_big(*)"

    def canonical_text(self, column: SourceColumn, kind: str, length: int | None) -> str:
        quoted = self.quote(column.name)
        base = column.base_type
        if kind == "decimal":
            # Style 2 keeps money's four decimals; then trailing zeros and a bare '.' go.
            text = f"convert(varchar(60), {quoted}{', 2' if base in {'money', 'smallmoney'} else ''})"
            trimmed = f"left({text}, len({text}) - patindex('%[^0]%', reverse({text})) + 1)"
            dotted = f"iif(charindex('.', {text}) = 0, {text}, {trimmed})"
            return f"iif(right({dotted}, 1) = '.', left({dotted}, len({dotted}) - 1), {dotted})"
        if kind in {"timestamp", "timestamptz"}:
            value = f"cast({quoted} as datetime2(3))" if base in {"datetime", "smalldatetime"} else quoted
            if kind == "timestamptz":
                value = f"switchoffset({quoted}, '+00:00')"
            # Six digits, truncated as the JDBC read truncates datetime2(7).
            return f"replace(left(convert(varchar(27), cast({value} as datetime2(7)), 121), 26), ' ', 'T')"
        forms = {
            "int": f"convert(varchar(20), {quoted})",
            "float": f"convert(varchar(30), {quoted}, 3)",
            "date": f"convert(varchar(10), {quoted}, 23)",
            "time": f"left(convert(varchar(16), cast({quoted} as time(7))), 15)",
            "bool": f"iif({quoted} = 1, 'true', iif({quoted} = 0, 'false', null))",
            "bytes": f"lower(convert(varchar(max), cast({quoted} as varbinary(max)), 2))",
            "uuid": f"lower(convert(varchar(36), {quoted}))",
        }
        return forms.get(kind, self.text_expression(column))

    def row_text(self, expressions: Sequence[str]) -> str:
        return joined_text("char(31)", expressions)

    def hash_bits(self, text: str, bits: int) -> str:
        # UTF-8 bytes (SQL Server 2019+), as Postgres hashes them; binary converts to bigint big-endian.
        utf8 = f"cast({text} as varchar(max)) collate Latin1_General_100_BIN2_UTF8"
        first64 = f"cast(substring(hashbytes('MD5', {utf8}), 1, 8) as bigint)"
        return first64 if bits == 64 else f"({first64} & cast(0x0FFFFFFFFFFFFFFF as bigint))"

    def in_integers(self, expression: str, values: Sequence[int]) -> str:
        # Thousands of literals in an IN list exhaust SQL Server's parser; one string does not.
        listed = ",".join(str(int(v)) for v in values)
        return f"{expression} in (select cast(value as bigint) from string_split('{listed}', ','))"

    def position_text(self, column: SourceColumn, qualifier: str = "") -> str:
        quoted = qualifier + self.quote(column.name)
        if column.base_type in self.temporal_types or column.base_type == "time":
            return f"convert(varchar(40), {quoted}, 121)"
        if column.base_type in {"binary", "varbinary", "timestamp", "rowversion"}:
            return f"convert(varchar(max), {quoted}, 1)"
        if column.base_type in {"float", "real"}:
            return f"convert(varchar(30), {quoted}, 3)"
        return f"convert(nvarchar(4000), {quoted})"

    def key_text(self, column: SourceColumn, qualifier: str = "") -> str:
        if column.base_type in {"binary", "varbinary"}:
            # bytea's hex input is a backslash, 'x' and the digits; style 1 writes '0x' instead.
            return f"concat('\\x', convert(varchar(max), {qualifier}{self.quote(column.name)}, 2))"
        return self.position_text(column, qualifier)

    def position_type(self, column: SourceColumn) -> str:
        return column.type_text

    def position_literal(self, text: str, column: SourceColumn) -> str:
        if column.base_type in {"binary", "varbinary", "timestamp", "rowversion"}:
            return f"convert(varbinary(max), {sql_string(text)}, 1)"
        return f"cast(N{sql_string(text)} as {self.position_type(column)})"

    def table_hint(self, read_uncommitted: bool) -> str:
        # Off by default: NOLOCK can return rows of transactions that later roll back.
        return " with (nolock)" if read_uncommitted else ""
