"""AdventureWorks' Production and HumanResources tables, configured by pattern (`Production,*`, an
exclusion, `HumanResources,*`), through rounds of schema changes while rows keep changing: columns
added with a default and added and filled for some rows, widened, dropped and renamed; a table
created that matches a pattern, and a table dropped. After every sync (the command a user runs:
catalog read, extract, dbt files written again, dbt build) every replica equals its source, checked
by `verify` and independently, and holds exactly the source's columns."""

from __future__ import annotations

from dataclasses import replace

import psycopg
from psycopg import sql

from extract.devtools.sample import SampleTable, load_sample, read_sample
from extract.evolution.drift import replica_columns
from extract.source.typemap import TypeMap
from tests.aw_changes import CURSOR, RECORD_ID, _text_column, apply_round, make_cursor_nullable
from tests.conftest import DATASETS, Project
from tests.test_adventureworks import verify_all

ADVENTUREWORKS = DATASETS / "adventureworks"
SCHEMAS = ("Production", "HumanResources")
HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,on_schema_change"
SEED = [
    "Production,*,,,true,",
    "Production,Transaction*,,,false,",  # an exclusion
    "HumanResources,*,,,true,",
    "Production,Location,,,true,append_new_columns",
]
NOW = "clock_timestamp() at time zone 'UTC'"


def _table(sample: SampleTable) -> sql.Composed:
    return sql.Identifier(sample.table.schema, sample.table.name)


def _sync(project: Project) -> None:
    done = project.cli("--all", "--dbt", "build", "--quiet")
    assert done.returncode == 0, done.stderr[-4000:]
    project.close()  # plans from here on see the source as it is now


def _watermarks(project: Project) -> dict[str, str]:
    with project.target() as conn:
        rows = conn.execute(
            "select source_schema, source_table, last_sync_watermark from _migration._migration_state"
        ).fetchall()
    return {f"{schema}.{table}": mark for schema, table, mark in rows}


def _check(project: Project, kept: dict[str, set[str]]) -> int:
    """verify, the independent comparison, and each replica's columns: the source's (through the
    type map), and for an append_new_columns table the columns it keeps besides."""
    compared = verify_all(project)
    with project.target() as conn:
        for config in project.planner.enabled_tables():
            plan = project.planner.plan(config)
            found = replica_columns(conn, plan.names)
            assert found is not None, config.key
            expected = {c.target_name for c in plan.columns} | kept.get(config.key, set())
            assert {name for name, _ in found} == expected, config.key
    return compared


def _droppable(sample: SampleTable) -> str | None:
    """An original column a round may drop: not in the key, not the cursor, record id or the text
    column the row changes write."""
    text = _text_column(sample)
    spared = {*sample.table.primary_key, CURSOR, RECORD_ID, text.name if text else ""}
    return next((c.name for c in sample.table.columns if c.name not in spared), None)


def _without(sample: SampleTable, column: str) -> SampleTable:
    columns = tuple(c for c in sample.table.columns if c.name != column)
    return replace(sample, table=replace(sample.table, columns=columns))


def test_replicas_follow_rounds_of_schema_changes(project: Project) -> None:
    wanted = [s.table.qualified for s in read_sample(ADVENTUREWORKS) if s.table.schema in SCHEMAS]
    type_map = TypeMap(project.root / "seeds")
    loaded = load_sample(ADVENTUREWORKS, project.settings.source, type_map, wanted)
    samples = [s for s, _ in loaded if not s.table.name.startswith("Transaction")]
    assert len(samples) == 29
    project.write_sync_tables(SEED, HEADER)
    project.generate()
    _sync(project)
    assert sorted(c.key for c in project.planner.enabled_tables()) == sorted(s.table.qualified for s in samples)
    rows = _check(project, {})
    with project.source() as conn:
        make_cursor_nullable(conn, samples)

    changing = [s for s in samples if s.row_count > 0]
    added_default, added_filled, widened = changing[0::3], changing[1::3], changing[2::3]
    with project.source() as conn:
        for sample in added_default:
            conn.execute(sql.SQL('alter table {} add column "Extra" integer not null default 7').format(_table(sample)))
        for sample in added_filled:
            conn.execute(sql.SQL('alter table {} add column "Remark" varchar(30)').format(_table(sample)))
            fill = f'update {{0}} set "Remark" = {{1}}, {{2}} = {NOW} where ctid in (select ctid from {{0}} limit 3)'
            conn.execute(sql.SQL(fill).format(_table(sample), sql.Literal("filled"), sql.Identifier(CURSOR)))
        widened_columns = 0
        for sample in widened:
            text = _text_column(sample)
            if text is not None and text.length not in (None, -1):
                statement = sql.SQL("alter table {} alter column {} type varchar({})").format(
                    _table(sample), sql.Identifier(text.name), sql.Literal(int(text.length or 0) + 20)
                )
                conn.execute(statement)
                widened_columns += 1
        assert widened_columns >= 3
        conn.execute(
            'create table "Production"."NewWidgets" ("WidgetID" integer primary key, "Name" varchar(20) not null,'
            ' "ModifiedDate" timestamp(3) not null)'
        )
        widgets = f"""select i, 'widget ' || i, {NOW} from generate_series(1, 12) as i"""
        conn.execute(f'insert into "Production"."NewWidgets" {widgets}')
        made = apply_round(conn, samples, _watermarks(project), 11)
    _sync(project)
    rows += made["inserted"] + 12
    kept = {"Production.Location": set[str]()}
    assert _check(project, kept) == rows, made
    assert "Production.NewWidgets" in {c.key for c in project.planner.enabled_tables()}
    assert _asked_to_backfill(project) == len(added_default) + len(added_filled)

    dropped_columns = 0
    with project.source() as conn:
        for sample in added_default:
            dropped = _droppable(sample)
            if dropped is None:
                continue
            conn.execute(sql.SQL("alter table {} drop column {}").format(_table(sample), sql.Identifier(dropped)))
            samples[samples.index(sample)] = _without(sample, dropped)
            dropped_columns += 1
            kept.get(sample.table.qualified, set()).add(dropped.lower())
        for sample in added_filled:
            conn.execute(sql.SQL('alter table {} rename column "Remark" to "Comment"').format(_table(sample)))
            kept.get(sample.table.qualified, set()).add("remark")
        dropped_table = next(s for s in samples if s.table.qualified == "HumanResources.JobCandidate")
        counted = conn.execute(sql.SQL("select count(*) from {}").format(_table(dropped_table))).fetchone()
        conn.execute(sql.SQL("drop table {}").format(_table(dropped_table)))
        samples.remove(dropped_table)
        rows -= int(counted[0]) if counted else 0
        made = apply_round(conn, samples, _watermarks(project), 12)
    _sync(project)
    rows += made["inserted"]
    assert _check(project, kept) == rows, made
    assert "HumanResources.JobCandidate" not in {c.key for c in project.planner.enabled_tables()}
    with project.target() as conn:
        diff = dict(conn.execute("select change, count(*) from _migration.catalog_diff group by change").fetchall())
    assert diff["table_added"] >= 30 and diff["table_removed"] == 1, diff
    renamed = [s for s in added_filled if s is not dropped_table]
    assert diff["column_added"] == len(added_default) + len(added_filled) + len(renamed), diff
    assert diff["column_dropped"] == len(renamed) + dropped_columns, diff


def _asked_to_backfill(project: Project) -> int:
    """Tables a schema change had read in full."""
    with psycopg.connect(project.target_url) as conn:
        row = conn.execute(
            "select count(distinct table_key) from _migration.schema_changes where backfill_after_run is not null"
        ).fetchone()
    return int(row[0]) if row else 0
