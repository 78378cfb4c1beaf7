"""A first sync writes each row once: it lands in a logged table of its own that, at the merge, becomes
the replica itself; where something else refers to the empty replica, rows are copied. The extract
records on that table that its run landed; the merge reads the record."""

from __future__ import annotations

from typing import Any

import pytest

from extract.core.observer import Event, PartitionLanded, Planned
from extract.core.sql_contract import FIRST_SYNC_RECORD
from tests.conftest import Project
from tests.demo_fixture import demo, merge_counts
from tests.replica_check import assert_replicas_equal

__all__ = ["demo"]

SHAPE = """
select
    c.relpersistence,
    (select array_agg(a.attname::text order by a.attnum) from pg_attribute as a
        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped),
    (select array_agg(a.attname::text order by a.attnum) from pg_attribute as a
        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attnotnull),
    (select array_agg(k.conname || ' ' || pg_get_constraintdef(k.oid)) from pg_constraint as k
        where k.conrelid = c.oid and k.contype = 'p')
from pg_class as c where c.oid = to_regclass(%s)
"""


def tables(project: Project, table: str) -> tuple[str, str, str]:
    """The replica, its staging table and its first-sync table, as qualified names."""
    schema = f'"demo__{project.source_db}__dbo"'
    return f"{schema}.{table}", f"{schema}.stg__{table}", f"{schema}.stg_first__{table}"


def shape(project: Project, relation: str) -> tuple[Any, ...]:
    """(persistence, columns, NOT NULL columns, primary key) of a table."""
    with project.target() as conn:
        row = conn.execute(SHAPE, (relation,)).fetchone()
    assert row is not None, f"no table {relation}"
    return tuple(row)


def oid(project: Project, relation: str) -> int | None:
    value = project.scalar("select to_regclass(%s)::oid", (relation,))
    return None if value is None else int(value)


def test_first_sync_lands_once_and_its_table_becomes_the_replica(demo: Project) -> None:
    replica, staging, first = tables(demo, "customers")
    run_id = next(r.run_id for r in demo.extract() if r.table == "dbo.Customers")
    expected = shape(demo, replica)
    # The landed table stays as it landed, with the record of its run; staging is not touched.
    persistence, columns, _, _ = shape(demo, first)
    assert (persistence, columns) == ("p", expected[1])
    assert demo.scalar("select obj_description(%s::regclass, 'pg_class')", (first,)) == f"{FIRST_SYNC_RECORD}{run_id}"
    assert demo.scalar(f"select count(*) from {first}") == 60
    assert shape(demo, staging)[0] == "u"
    assert demo.scalar(f"select count(*) from {staging}") == 0
    landed, staged = oid(demo, first), oid(demo, staging)

    demo.build()
    assert oid(demo, replica) == landed  # the landed table is the replica: no row was copied
    assert oid(demo, first) is None
    assert shape(demo, replica) == expected
    assert demo.scalar("select obj_description(%s::regclass, 'pg_class')", (replica,)) is None
    assert merge_counts(demo, "customers") == (60, 0, 0, 0)
    assert_replicas_equal(demo)
    assert oid(demo, staging) == staged

    demo.build()  # nothing pending: a second build merges nothing and fails nothing
    assert demo.scalar("select count(*) from _migration.merge_log where table_key like '%%.customers'") == 1
    with demo.source() as conn:
        conn.execute(
            """update dbo."Customers" set "Email" = 'later@example.com',
                "ModifiedDate" = clock_timestamp() at time zone 'UTC' where "CustomerID" = 7"""
        )
    demo.sync()
    assert oid(demo, replica) == landed
    assert_replicas_equal(demo)


def test_a_run_before_the_merge_moves_the_first_syncs_rows_into_staging(demo: Project) -> None:
    _, staging, first = tables(demo, "customers")
    landed = demo.extract("dbo.Customers")[0]
    assert oid(demo, first) is not None
    again = demo.extract("dbo.Customers")[0]
    assert oid(demo, first) is None
    staged = demo.scalar(f"select array_agg(distinct _tidemark_run_id order by _tidemark_run_id) from {staging}")
    assert staged == [landed.run_id, again.run_id]
    for config in demo.planner.enabled_tables():
        if config.key != "dbo.Customers":
            demo.extract(config.key)
    demo.merge()
    assert merge_counts(demo, "customers") == (60, 0, 0, 0)
    merged = demo.scalar("select run_ids from _migration.merge_log where table_key like '%%.customers'")
    assert merged == [landed.run_id, again.run_id]
    assert_replicas_equal(demo)


def merge_with_the_replica_referred_to(demo: Project, statement: str) -> None:
    """Extract every table, run `statement` (which makes something refer to the empty replica of
    Customers, named by {replica}), then build: the merge must copy into that replica, not replace it."""
    replica = tables(demo, "customers")[0]
    demo.extract()
    before = oid(demo, replica)
    with demo.target() as conn:
        conn.execute(statement.format(replica=replica))
    demo.merge()
    assert oid(demo, replica) == before
    assert merge_counts(demo, "customers") == (60, 0, 0, 0)
    assert_replicas_equal(demo)


def test_a_view_on_the_empty_replica_keeps_it_and_the_rows_are_copied(demo: Project) -> None:
    _, staging, first = tables(demo, "customers")
    merge_with_the_replica_referred_to(demo, "create view public.customer_ids as select customerid from {replica}")
    assert demo.scalar("select count(*) from public.customer_ids") == 60
    assert oid(demo, first) is None  # copied, then dropped
    assert shape(demo, staging)[0] == "u"
    demo.sync_replicas()
    assert_replicas_equal(demo)


def test_a_column_default_on_the_empty_replica_keeps_it(demo: Project) -> None:
    replica = tables(demo, "customers")[0]
    # Adopting staging would lose the default.
    merge_with_the_replica_referred_to(demo, "alter table {replica} alter column email set default 'unknown'")
    default = demo.scalar(
        "select pg_get_expr(d.adbin, d.adrelid) from pg_attrdef as d join pg_attribute as a"
        " on a.attrelid = d.adrelid and a.attnum = d.adnum where d.adrelid = %s::regclass and a.attname = 'email'",
        (replica,),
    )
    assert default == "'unknown'::character varying"


def test_a_first_sync_that_fails_leaves_no_table_behind(demo: Project) -> None:
    _, staging, first = tables(demo, "customers")

    def fail_once_a_partition_landed(event: Event) -> None:
        if isinstance(event, PartitionLanded):
            assert oid(demo, first) is not None  # the run lands in a table of its own
            raise RuntimeError("network reset")

    with pytest.raises(RuntimeError, match="network reset"):
        demo.extract("dbo.Customers", observer=fail_once_a_partition_landed)
    assert demo.scalar("select status from _migration.run_log order by event_id desc limit 1") == "failed"
    assert oid(demo, first) is None
    assert demo.scalar(f"select count(*) from {staging}") == 0
    demo.sync_replicas()
    assert merge_counts(demo, "customers") == (60, 0, 0, 0)
    assert_replicas_equal(demo)


def test_a_view_on_staging_does_not_stop_the_landed_table_becoming_the_replica(demo: Project) -> None:
    replica, staging, first = tables(demo, "customers")

    def read_staging_from_a_view(event: Event) -> None:
        if isinstance(event, Planned):
            with demo.target() as conn:
                conn.execute(f"create view public.staged_customers as select customerid from {staging}")

    demo.extract("dbo.Customers", observer=read_staging_from_a_view)
    landed = oid(demo, first)
    assert landed is not None
    for config in demo.planner.enabled_tables():
        if config.key != "dbo.Customers":
            demo.extract(config.key)
    demo.merge()
    assert oid(demo, replica) == landed
    assert demo.scalar("select count(*) from public.staged_customers") == 0
    assert merge_counts(demo, "customers") == (60, 0, 0, 0)
    assert_replicas_equal(demo)
