"""Load a sample database (schema.json + Parquet, e.g. AdventureWorks) into the stand-in source.

Tables keep their SQL Server names (Sales.SalesOrderHeader, ModifiedDate); each
column's SQL Server type goes through the project's type map, as the extract would
map it, so the stand-in holds what a real server would send.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pyarrow.parquet as pq
from psycopg import sql

from extract.config.urls import DatabaseUrl
from extract.core.errors import TidemarkError
from extract.source.catalog import SourceTable, column_from_type_text
from extract.source.typemap import TypeMap


@dataclass(frozen=True)
class SampleTable:
    table: SourceTable
    #: Column names in the Parquet file, in the order of `table.columns`.
    file_columns: tuple[str, ...]
    parquet: Path | None
    row_count: int


def read_sample(dataset: Path) -> list[SampleTable]:
    schema_file = dataset / "schema.json"
    if not schema_file.exists():
        raise TidemarkError(f"{dataset} has no schema.json: not a sample dataset")
    tables = []
    for entry in json.loads(schema_file.read_text())["tables"]:
        ordered = sorted(entry["columns"], key=lambda c: c["mssql_ordinal"])
        columns = tuple(
            # Nullability as the data has it: two columns are nullable in the data but not in SQL Server.
            column_from_type_text(c["mssql_name"], c["mssql_type"], c["nullable"], c["mssql_ordinal"])
            for c in ordered
        )
        table = SourceTable(entry["mssql_schema"], entry["mssql_table"], columns, tuple(entry["mssql_primary_key"]))
        parquet = dataset / entry["parquet_file"] if entry.get("parquet_file") else None
        tables.append(SampleTable(table, tuple(c["name"] for c in ordered), parquet, int(entry["row_count"])))
    return tables


def create_table(conn: psycopg.Connection, sample: SampleTable, type_map: TypeMap) -> None:
    table = sample.table
    mapped = [type_map.map_column("sqlserver", table, c) for c in table.columns]
    defs = [
        sql.SQL("{} " + m.target_type + ("" if m.source.nullable else " not null")).format(
            sql.Identifier(m.source.name)
        )
        for m in mapped
    ]
    defs.append(sql.SQL("primary key ({})").format(sql.SQL(", ").join(map(sql.Identifier, table.primary_key))))
    conn.execute(sql.SQL("create schema if not exists {}").format(sql.Identifier(table.schema)))
    conn.execute(sql.SQL("drop table if exists {}.{}").format(sql.Identifier(table.schema), sql.Identifier(table.name)))
    conn.execute(
        sql.SQL("create table {}.{} ({})").format(
            sql.Identifier(table.schema), sql.Identifier(table.name), sql.SQL(", ").join(defs)
        )
    )
    conn.commit()


def load_table(conn: psycopg.Connection, sample: SampleTable) -> int:
    """The sample's rows into its table with COPY, each value as the Parquet file holds it (the server
    parses it into the column's type, as it would parse what SQL Server sends)."""
    if sample.parquet is None:
        return 0
    arrow = pq.read_table(sample.parquet, columns=list(sample.file_columns))
    table = sample.table
    copy_sql = sql.SQL("copy {}.{} ({}) from stdin").format(
        sql.Identifier(table.schema),
        sql.Identifier(table.name),
        sql.SQL(", ").join(sql.Identifier(c.name) for c in table.columns),
    )
    with conn.cursor() as cur, cur.copy(copy_sql) as copy:
        for batch in arrow.to_batches():
            for row in zip(*(column.to_pylist() for column in batch.columns), strict=True):
                copy.write_row(row)
    conn.commit()
    return sample.row_count


def load_sample(
    dataset: Path, source: DatabaseUrl, type_map: TypeMap, only: Iterable[str] = ()
) -> list[tuple[SampleTable, int]]:
    if source.dialect != "postgres":
        raise TidemarkError(f"samples load into a PostgreSQL stand-in source, not {source.display}")
    wanted = {name.lower() for name in only}
    samples = [s for s in read_sample(dataset) if not wanted or s.table.qualified.lower() in wanted]
    if wanted and len(samples) != len(wanted):
        found = {s.table.qualified.lower() for s in samples}
        raise TidemarkError(f"not in {dataset / 'schema.json'}: {', '.join(sorted(wanted - found))}")
    loaded = []
    with psycopg.connect(source.libpq_url) as conn:
        for sample in samples:
            create_table(conn, sample, type_map)
            loaded.append((sample, load_table(conn, sample)))
    return loaded


def sync_table_rows(samples: Iterable[SampleTable]) -> list[str]:
    """Rows for seeds/sync_tables.csv covering every table of the sample."""
    return [f"{s.table.schema},{s.table.name},,,true" for s in samples]
