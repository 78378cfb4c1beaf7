"""Staging and replica tables in the target: create, relax, clean up, check for repeated keys."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.config.urls import DatabaseUrl
from extract.core.quoting import ParameterSafeIdentifier
from extract.core.sql_contract import PARTITION_COLUMN, RUN_ID_COLUMN
from extract.source.dialects.postgres import PostgresDialect
from extract.source.typemap import MappedColumn
from extract.state.run_log import DDL_LOCK

_TARGET = PostgresDialect()


def column_defs(columns: Sequence[MappedColumn], with_not_null: bool) -> list[sql.Composable]:
    defs: list[sql.Composable] = []
    for col in columns:
        not_null = " not null" if with_not_null and not col.source.nullable else ""
        # Types come from seeds/type_map.csv, not from user input at run time.
        defs.append(sql.SQL("{} " + col.target_type + not_null).format(sql.Identifier(col.target_name)))
    return defs


def _landing_defs(columns: Sequence[MappedColumn]) -> list[sql.Composable]:
    """A landing table's columns: the table's, nullable, and the run and partition that landed each row."""
    return [
        *column_defs(columns, False),
        sql.SQL("{} bigint not null").format(sql.Identifier(RUN_ID_COLUMN)),
        sql.SQL("{} integer not null default 0").format(sql.Identifier(PARTITION_COLUMN)),
    ]


def create_schema(conn: psycopg.Connection, schema: str) -> None:
    """`create schema if not exists`, in the caller's transaction. When another session creates the same
    schema at the same moment (dbt's run creates those of its nodes it does not find), PostgreSQL refuses
    the second as a duplicate, once the first has committed it: the schema is there, as asked."""
    try:
        with conn.transaction():  # a savepoint: the caller's transaction goes on after the refusal
            conn.execute(sql.SQL("create schema if not exists {}").format(sql.Identifier(schema)))
    except psycopg.errors.UniqueViolation:
        return


def create_schemas(target: DatabaseUrl, schemas: Iterable[str]) -> None:
    """The schemas a pass lands in, created before dbt's run lists those it must create for its nodes."""
    with psycopg.connect(target.libpq_url) as conn, conn.transaction():
        conn.execute(DDL_LOCK)
        for schema in sorted(set(schemas)):
            create_schema(conn, schema)


def ensure_snapshot_table(conn: psycopg.Connection, names: TargetNames, columns: Sequence[MappedColumn]) -> None:
    """Create the schema and the UNLOGGED table that snapshots for the as-of history land in."""
    schema = sql.Identifier(names.schema)
    with conn.transaction():
        conn.execute(DDL_LOCK)
        create_schema(conn, names.schema)
        conn.execute(
            sql.SQL("create unlogged table if not exists {}.{} ({})").format(
                schema, sql.Identifier(names.snapshot_table), sql.SQL(", ").join(_landing_defs(columns))
            )
        )
        # Runs land one after another, so a BRIN index finds one run's rows among many at
        # almost no cost to COPY.
        conn.execute(
            sql.SQL("create index if not exists {} on {}.{} using brin ({})").format(
                sql.Identifier(names.snapshot_table + "__run"),
                schema,
                sql.Identifier(names.snapshot_table),
                sql.Identifier(RUN_ID_COLUMN),
            )
        )


def ensure_tables(
    conn: psycopg.Connection, names: TargetNames, columns: Sequence[MappedColumn], key: Sequence[str]
) -> None:
    """Create the schema, the UNLOGGED staging table and the replica (with its key) if missing."""
    schema = sql.Identifier(names.schema)
    staging_defs = _landing_defs(columns)
    key_ids = sql.SQL(", ").join(sql.Identifier(k.lower()) for k in key)
    with conn.transaction():
        conn.execute(DDL_LOCK)  # tables synced at once share a schema
        create_schema(conn, names.schema)
        conn.execute(
            sql.SQL("create unlogged table if not exists {}.{} ({})").format(
                schema, sql.Identifier(names.staging_table), sql.SQL(", ").join(staging_defs)
            )
        )
        conn.execute(
            sql.SQL("alter table {}.{} add column if not exists {} integer not null default 0").format(
                schema, sql.Identifier(names.staging_table), sql.Identifier(PARTITION_COLUMN)
            )
        )
        # COPY is faster into a table without an index; staging is only ever scanned whole.
        conn.execute(
            sql.SQL("drop index if exists {}.{}").format(schema, sql.Identifier(names.staging_table + "__run_page"))
        )
        # Staging is read once by the merge and truncated by the next extract: a vacuum of it (started
        # by autovacuum while millions of rows land) is work for nothing, competing with the landing.
        conn.execute(
            sql.SQL("alter table {}.{} set (autovacuum_enabled = false)").format(
                schema, sql.Identifier(names.staging_table)
            )
        )
        conn.execute(
            sql.SQL("create table if not exists {}.{} ({}, primary key ({}))").format(
                schema, sql.Identifier(names.table), sql.SQL(", ").join(column_defs(columns, True)), key_ids
            )
        )


def relax_not_null(
    conn: psycopg.Connection, names: TargetNames, columns: Sequence[MappedColumn], key: Sequence[str]
) -> list[str]:
    """Follow the source when a column outside the key stops being NOT NULL; returns the columns relaxed."""
    required = {
        row[0]
        for row in conn.execute(
            # pg_attribute, not information_schema.columns: that view costs milliseconds a call
            "select a.attname from pg_attribute as a"
            " where a.attrelid = to_regclass(format('%%I.%%I', %s::text, %s::text))"
            " and a.attnum > 0 and not a.attisdropped and a.attnotnull",
            (names.schema, names.table),
        ).fetchall()
    }
    keys = {k.lower() for k in key}
    relaxed = [c.target_name for c in columns if c.source.nullable and c.target_name in required - keys]
    if not relaxed:
        return relaxed
    with conn.transaction():
        for name in relaxed:
            conn.execute(
                sql.SQL("alter table {}.{} alter column {} drop not null").format(
                    sql.Identifier(names.schema), sql.Identifier(names.table), sql.Identifier(name)
                )
            )
    return relaxed


def duplicate_key_sample(
    conn: psycopg.Connection, landing: tuple[str, str], key: Sequence[str], run_id: int | None
) -> tuple[object, ...] | None:
    """One key the run landed more than once in table `landing` (schema, name), or None; with
    run_id None, in the whole table (one that holds a single run's rows)."""
    key_ids = sql.SQL(", ").join(ParameterSafeIdentifier(k) for k in key)
    of_run = sql.SQL("true") if run_id is None else sql.SQL("{} = %s").format(ParameterSafeIdentifier(RUN_ID_COLUMN))
    conn.execute("set local work_mem = '256MB'")  # hash the keys in memory, not in spill files
    row = conn.execute(
        sql.SQL("select {} from {} where {} group by {} having count(*) > 1 limit 1").format(
            key_ids, ParameterSafeIdentifier(*landing), of_run, key_ids
        ),
        () if run_id is None else (run_id,),
    ).fetchone()
    conn.commit()
    return None if row is None else tuple(row)


def key_sample(labels: Sequence[str], values: Sequence[object]) -> str:
    """A key as an error names it: `Column=value` for each of its columns."""
    return ", ".join(f"{label}={value!r}" for label, value in zip(labels, values, strict=True))


def rows_without_key(conn: psycopg.Connection, landing: tuple[str, str], key: Sequence[str], run_id: int | None) -> int:
    """Rows of the run in table `landing` (schema, name) with a NULL in some key column; with run_id
    None, in the whole table."""
    of_run = sql.SQL("true") if run_id is None else sql.SQL("{} = %s").format(ParameterSafeIdentifier(RUN_ID_COLUMN))
    row = conn.execute(
        sql.SQL("select count(*) from {}.{} where {} and ({})").format(
            ParameterSafeIdentifier(landing[0]),
            ParameterSafeIdentifier(landing[1]),
            of_run,
            sql.SQL(" or ").join(sql.SQL("{} is null").format(ParameterSafeIdentifier(k)) for k in key),
        ),
        () if run_id is None else (run_id,),
    ).fetchone()
    conn.commit()
    return 0 if row is None else int(row[0])


def keep_latest_versions(
    conn: psycopg.Connection, names: TargetNames, key: Sequence[str], cursor: str, run_id: int
) -> int:
    """Keep one row per key of a run: the one with the latest cursor. Returns the rows dropped.

    With a key the source enforces, a run holds a key twice only when the row changed
    while the partitions were read (each partition is its own statement): the later
    version wins, and the next run reads the row again in any case.
    """
    key_ids = sql.SQL(", ").join(ParameterSafeIdentifier(k) for k in key)
    staging = sql.SQL("{}.{}").format(
        ParameterSafeIdentifier(names.schema), ParameterSafeIdentifier(names.staging_table)
    )
    dropped = conn.execute(
        sql.SQL(
            "delete from {staging} as s using ("
            " select ctid, row_number() over (partition by {keys} order by {cursor} desc nulls last) as version"
            " from {staging} where {run} = %s) as older"
            " where s.ctid = older.ctid and older.version > 1"
        ).format(
            staging=staging,
            keys=key_ids,
            cursor=ParameterSafeIdentifier(cursor),
            run=ParameterSafeIdentifier(RUN_ID_COLUMN),
        ),
        (run_id,),
    ).rowcount
    conn.commit()
    return dropped


def analyze_landed(conn: psycopg.Connection, names: TargetNames) -> None:
    """Fresh statistics on staging and the tombstones before a merge reads them. Neither is analysed by
    autovacuum in time (staging not at all): planned with the figures of an earlier, smaller batch, the
    merge's anti-joins against the batch ran as nested loops, 10,000 repairs of a 10,000,000-row
    replica taking minutes instead of a second."""
    for table in (names.staging_table, names.tombstone_table):
        found = conn.execute("select to_regclass(%s) is not null", (_TARGET.table_ref(names.schema, table),)).fetchone()
        if found and found[0]:
            conn.execute(sql.SQL("analyze {}").format(sql.Identifier(names.schema, table)))
    conn.commit()
