"""A file source as a table plan: the replica's columns from the files' schema through the type map (the
`spark` rows of seeds/type_map.csv), then the file each row came from and, without a key, its place in it.

The replica's existing columns keep their types: a CSV or JSON file's types are guessed from its values, and
a guess from today's files must not change what yesterday's rows were landed as. Columns new in the files
are added as the source's schema-evolution policy says (extract/evolution)."""

from __future__ import annotations

import psycopg

from extract.config.file_sources import FileSource
from extract.config.naming import TargetNames, check_column_names, check_name_fits
from extract.config.seeds import SyncTable
from extract.core.errors import TidemarkError
from extract.core.sql_contract import FILE_COLUMN, FILE_ROW_COLUMN
from extract.core.state_schema import StateSchema
from extract.planning.table_plan import TablePlan
from extract.source.catalog import SourceColumn, SourceTable, column_from_type_text
from extract.source.typemap import MappedColumn, TypeMap

#: The Spark type each replica type is read as again (the `spark` rows of the default type map, inverted).
_SPARK_TYPE_OF = {
    "bigint": "bigint",
    "integer": "int",
    "smallint": "smallint",
    "boolean": "boolean",
    "real": "float",
    "double precision": "double",
    "date": "date",
    "timestamp with time zone": "timestamp",
    "timestamp without time zone": "timestamp_ntz",
    "bytea": "binary",
    "jsonb": "json",
}


def spark_type_of(replica_type: str) -> str:
    """The Spark type a replica column is read as (`format_type`'s text, e.g. numeric(10,2))."""
    if replica_type.startswith("numeric("):
        return "decimal" + replica_type[len("numeric") :]
    if replica_type.startswith(("timestamp(", "timestamp without")):
        return "timestamp_ntz"
    if replica_type.startswith("timestamp"):
        return "timestamp"
    return _SPARK_TYPE_OF.get(replica_type, "string")


def replica_columns(conn: psycopg.Connection, names: TargetNames) -> list[tuple[str, str]]:
    """(name, type) of the replica's own columns in order; none when it does not exist yet."""
    rows = conn.execute(
        "select a.attname, format_type(a.atttypid, a.atttypmod) from pg_attribute as a"
        " where a.attrelid = to_regclass(%s) and a.attnum > 0 and not a.attisdropped order by a.attnum",
        (psycopg.sql.Identifier(names.schema, names.table).as_string(conn),),
    ).fetchall()
    conn.commit()
    return [(name, kind) for name, kind in rows if name not in (FILE_COLUMN, FILE_ROW_COLUMN)]


def stream_names(source: FileSource) -> TargetNames:
    schema, table = source.schema_and_table
    names = TargetNames(schema, table)
    for name, what in ((schema, "replica schema"), (table, "replica")):
        check_name_fits(name, f"{source.key}: {what}")
    return names


def key_of(source: FileSource) -> tuple[str, ...]:
    return source.primary_key or (FILE_COLUMN, FILE_ROW_COLUMN)


def file_plan(source: FileSource, fields: list[tuple[str, str]], type_map: TypeMap, state: StateSchema) -> TablePlan:
    """The plan of a run reading files of these (name, Spark type) fields."""
    names = stream_names(source)
    columns = [column_from_type_text(name, kind, True, i) for i, (name, kind) in enumerate(fields, start=1)]
    mapped = type_map.map_table("spark", SourceTable(*source.schema_and_table, tuple(columns), ()))
    check_column_names(source.key, [c.target_name for c in mapped], "rename it in the files to sync them")
    mapped.append(_own_column(FILE_COLUMN, "string", "text", len(mapped) + 1))
    if not source.primary_key:
        mapped.append(_own_column(FILE_ROW_COLUMN, "bigint", "bigint", len(mapped) + 1))
    missing = [k for k in source.primary_key if k.lower() not in {c.target_name for c in mapped}]
    if missing:
        raise TidemarkError(f"{source.key}: primary_key names {', '.join(missing)}, which the files do not have")
    config = SyncTable(names.schema, names.table, primary_key=key_of(source), enabled=source.enabled, reader="files")
    where = source.written_location or source.location
    table = SourceTable(where, source.glob, tuple(c.source for c in mapped), key_of(source), False)
    return TablePlan(config, table, mapped, None, names, state)


def _own_column(name: str, spark_type: str, target_type: str, ordinal: int) -> MappedColumn:
    return MappedColumn(SourceColumn(name, spark_type, None, None, None, False, ordinal), name, target_type, "native")


def generation_plan(source: FileSource, state: StateSchema) -> TablePlan:
    """The plan the dbt files of the source's replica are written from: its names and key (its columns
    are the files', known when a run reads them; its history compares them all)."""
    names = stream_names(source)
    config = SyncTable(names.schema, names.table, primary_key=key_of(source), enabled=source.enabled, reader="files")
    table = SourceTable(source.written_location or source.location, source.glob, (), key_of(source), False)
    return TablePlan(config, table, [], None, names, state)


def generation_plans(sources: list[FileSource], state: StateSchema) -> list[TablePlan]:
    """The enabled file sources' plans for the dbt files."""
    return [generation_plan(source, state) for source in sources if source.enabled]
