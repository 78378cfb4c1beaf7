"""Tables of 99 to 1,024 columns (SQL Server's limit) sync, merge, verify, pass great-expectations'
checkpoint and reconcile: no SQL function tidemark generates takes a column per argument (Postgres
stops at 100 arguments, SQL Server's concat_ws at 254)."""

from __future__ import annotations

import json

import pytest
from psycopg import sql

from extract.project.verify import verify_tables
from tests.conftest import Project
from tests.replica_check import assert_replicas_equal

WIDTHS = (99, 100, 101, 300, 1024)
ROWS = 30
# Column types in turn, each with a value made from the row number i.
KINDS = (
    ("integer", "i * {n}"),
    ("text", "'r' || i || '-' || {n}"),
    ("numeric(12, 2)", "i * {n} / 7.0"),
    ("timestamp(3)", "timestamp '2026-01-01' + i * interval '1 second' * {n}"),
    ("boolean", "(i + {n}) %% 3 = 0"),
)


def _name(width: int) -> str:
    return f"Wide{width}"


def _create(project: Project, width: int) -> None:
    kinds = [KINDS[n % len(KINDS)] for n in range(1, width)]
    columns = [sql.SQL('"Id" integer primary key')] + [
        sql.SQL("{} {}").format(sql.Identifier(f"C{n:04d}"), sql.SQL(kind)) for n, (kind, _) in enumerate(kinds, 1)
    ]
    values = [sql.SQL("i")] + [
        sql.SQL(f"case when (i + {n}) %% 11 = 0 then null else {value.format(n=n)} end")
        for n, (_, value) in enumerate(kinds, 1)
    ]
    table = sql.Identifier("dbo", _name(width))
    with project.source() as conn:
        conn.execute(sql.SQL("create table {} ({})").format(table, sql.SQL(", ").join(columns)))
        conn.execute(
            sql.SQL("insert into {} select {} from generate_series(1, %s) as i").format(
                table, sql.SQL(", ").join(values)
            ),
            (ROWS,),
        )


@pytest.fixture
def wide(project: Project) -> Project:
    with project.source() as conn:
        conn.execute("create schema dbo")
    for width in WIDTHS:
        _create(project, width)
    project.write_sync_tables([f"dbo,{_name(width)},,,true" for width in WIDTHS])
    project.generate()
    project.sync()
    return project


def test_wide_tables_sync_verify_check_and_reconcile(wide: Project) -> None:
    plans = [wide.planner.plan(c) for c in wide.planner.enabled_tables()]
    assert sorted(len(p.columns) for p in plans) == list(WIDTHS)
    assert all(v.ok for v in verify_tables(wide.planner, plans))
    assert_replicas_equal(wide)

    checked = wide.cli("check", "--all", "--json")
    assert checked.returncode == 0, checked.stderr[-3000:]
    report = json.loads(checked.stdout)
    assert report["success"] is True, checked.stdout[-3000:]

    # Changes a watermark cannot see (no cursor here: every sync reads the whole table, so these are
    # for the reconcile alone): a delete and an update in every table, found by range checksums.
    with wide.source() as conn:
        for width in WIDTHS:
            table = sql.Identifier("dbo", _name(width))
            conn.execute(sql.SQL('delete from {} where "Id" = 3').format(table))
            conn.execute(sql.SQL('update {} set "C0001" = \'changed\' where "Id" = 7').format(table))
    reconciled = wide.cli("reconcile", "--all", "--dbt", "build", "--json")
    assert reconciled.returncode == 0, reconciled.stderr[-3000:]
    assert all(v.ok for v in verify_tables(wide.planner, plans))
    assert_replicas_equal(wide)
    for width in WIDTHS:
        plan = next(p for p in plans if p.table.name == _name(width))
        replica = sql.Identifier(plan.names.schema, plan.names.table)
        with wide.target() as conn:
            row = conn.execute(sql.SQL("select c0001 from {} where id = 7").format(replica)).fetchone()
            gone = conn.execute(sql.SQL("select count(*) from {} where id = 3").format(replica)).fetchone()
        assert row == ("changed",) and gone == (0,), width
