"""Reconcile on the scenario families of the synchronization design: the replica holds one set of keys,
the source another (rows deleted, inserted and changed behind the watermark), with integer, text, uuid
and composite keys. One `reconcile --all --dbt run` must leave every replica equal to its source."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from psycopg import sql
from pyspark.sql import SparkSession

from tests.conftest import Project, new_project
from tests.replica_check import rows_of

STEP = list(range(1000, 5001, 1000))


@dataclass(frozen=True)
class Scenario:
    name: str
    replica: list[int]  # keys the replica holds after the first sync
    source: list[int]  # keys the source holds when the reconcile runs


SCENARIOS = [
    Scenario("source_smaller", [1000, 1500, 2000, 2500], [1000, 2000]),
    Scenario("source_much_smaller", list(range(1000, 100_001, 100)), list(range(1000, 10_001, 1000))),
    Scenario("source_larger", [1000, 2000], [1000, 1500, 2000, 2500]),
    Scenario("source_much_larger", list(range(1000, 91_001, 10_000)), list(range(1000, 100_001, 100))),
    Scenario("equal_counts_other_records", [1000, 1500, 2500, 4000], [1000, 2000, 3000, 4000]),
    Scenario("complex_swaps", [1000, 2500, 3000, 3500, 5000], STEP),
    Scenario("replica_empty", [], STEP),
    Scenario("source_empty", STEP, []),
    Scenario("both_empty", [], []),
    Scenario("no_overlap", [5000, 6000, 7000], [1000, 2000, 3000]),
    Scenario("partial_overlap", [3000, 4000, 5000, 6000], [1000, 2000, 3000, 4000]),
    Scenario("gaps_in_source", [1000, 50_000, 100_000, 150_000, 200_000], [1000, 100_000, 200_000]),
    Scenario("dense_replica_sparse_source", list(range(1000, 200_001, 1000)), [50_000, 150_000]),
    Scenario("shared_only_source_min", [1000], [1000, 2000, 3000]),
    Scenario("shared_only_source_max", [3000], [1000, 2000, 3000]),
    Scenario("many_changes_in_one_range", [1000, 1500, 2500, 3500, 4500, 5000], STEP),
]

KEY_TYPES = {
    "int": ('"Id" bigint', ["Id"]),
    "text": ('"Code" varchar(40) collate "C"', ["Code"]),
    "uuid": ('"Guid" uuid', ["Guid"]),
    "composite": ('"Region" varchar(10), "No" integer', ["Region", "No"]),
}


def key_values(key_type: str, k: int) -> tuple[Any, ...]:
    if key_type == "int":
        return (k,)
    if key_type == "text":
        return (f"{'o' + chr(39) if k % 2 else 'Ä'}-{k:07d}",)
    if key_type == "uuid":
        return (uuid.UUID(int=(k * 2654435761 * 40503) % 2**128),)
    return (f"r{k % 3}", k)


def table_name(scenario: Scenario, key_type: str) -> str:
    return f"{scenario.name}_{key_type}"


def _changed(scenario: Scenario) -> set[int]:
    """Keys in both sets whose content the source changes without moving the cursor: every other one."""
    return set(sorted(set(scenario.replica) & set(scenario.source))[::2])


def _create(conn: Any, scenario: Scenario, key_type: str) -> None:
    columns, keys = KEY_TYPES[key_type]
    name = sql.Identifier("dbo", table_name(scenario, key_type))
    key_list = sql.SQL(", ").join(map(sql.Identifier, keys))
    conn.execute(
        sql.SQL(
            """create table {} ({}, "Val" text, "Amount" numeric(10, 2), "ModifiedDate" timestamp(3) not null,
            primary key ({}))"""
        ).format(name, sql.SQL(columns), key_list)
    )
    _insert(conn, scenario, key_type, scenario.replica)


def _insert(conn: Any, scenario: Scenario, key_type: str, ks: list[int]) -> None:
    keys = KEY_TYPES[key_type][1]
    name = sql.Identifier("dbo", table_name(scenario, key_type))
    statement = sql.SQL(
        'insert into {} ({}, "Val", "Amount", "ModifiedDate") values ({}, %s, %s, timestamp \'2026-01-01\')'
    ).format(name, sql.SQL(", ").join(map(sql.Identifier, keys)), sql.SQL(", ").join(sql.Placeholder() * len(keys)))
    with conn.cursor() as cursor:
        cursor.executemany(statement, [(*key_values(key_type, k), f"v{k}", k / 100) for k in ks])


def _change_source(conn: Any, scenario: Scenario, key_type: str) -> None:
    """From the replica's keys to the source's: deletes, backdated inserts, updates that keep the cursor."""
    keys = KEY_TYPES[key_type][1]
    name = sql.Identifier("dbo", table_name(scenario, key_type))
    match = sql.SQL(" and ").join(sql.SQL("{} = %s").format(sql.Identifier(k)) for k in keys)
    with conn.cursor() as cursor:
        gone = [key_values(key_type, k) for k in set(scenario.replica) - set(scenario.source)]
        cursor.executemany(sql.SQL("delete from {} where {}").format(name, match), gone)
        changed = [("changed", *key_values(key_type, k)) for k in _changed(scenario)]
        cursor.executemany(sql.SQL('update {} set "Val" = %s where {}').format(name, match), changed)
    _insert(conn, scenario, key_type, sorted(set(scenario.source) - set(scenario.replica)))


@pytest.fixture(scope="module")
def reconciled(
    tmp_path_factory: pytest.TempPathFactory, pg_admin_url: str, spark: SparkSession
) -> Iterator[tuple[Project, dict[str, dict[str, Any]]]]:
    root = tmp_path_factory.mktemp("reconcile") / "project"
    with new_project(root, pg_admin_url, spark) as project:
        # Key ranges queried at once on pooled source connections, and the pairs in turns of at most 1,000 rows.
        project.env.update({"TIDEMARK_RECONCILE_DRIVER_ROWS": "0", "TIDEMARK_RECONCILE_PAIRS_ROWS": "1000"})
        with project.source() as conn:
            conn.execute("create schema dbo")
            for scenario in SCENARIOS:
                for key_type in KEY_TYPES:
                    _create(conn, scenario, key_type)
        project.write_sync_tables([f"dbo,{table_name(s, t)},ModifiedDate,,true" for s in SCENARIOS for t in KEY_TYPES])
        project.generate()
        project.sync_replicas()
        with project.source() as conn:
            for scenario in SCENARIOS:
                for key_type in KEY_TYPES:
                    _change_source(conn, scenario, key_type)
        with project.target() as conn:
            conn.execute(_LEGACY_HASH_COLUMNS.format(_replica(project, LEGACY)))
        files_before = _files(project)
        done = project.cli("reconcile", "--all", "--allow-mass-delete", "--dbt", "run", "--json", "--parallel", "4")
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout)
        FILES.update(before=files_before, after=_files(project))
        yield project, {entry["table"]: entry for entry in report["tables"]}


#: A replica that still has the hash columns earlier reconciles stored in it.
LEGACY = "complex_swaps_int"
_LEGACY_HASH_COLUMNS = (
    "alter table {} add column _tidemark_key_hash bigint generated always as (1) stored,"
    " add column _tidemark_row_hash bigint generated always as (2) stored"
)
#: The replicas' data files (pg_class.relfilenode) before and after the reconcile.
FILES: dict[str, dict[str, int]] = {}


def _replica(project: Project, table: str) -> str:
    names = project.planner.plan(project.planner.find(f"dbo.{table}")).names
    return f'"{names.schema}"."{names.table}"'


def _files(project: Project) -> dict[str, int]:
    tables = [table_name(s, t) for s in SCENARIOS for t in KEY_TYPES]
    query = "select relfilenode from pg_class where oid = %s::regclass"
    return {t: int(project.scalar(query, (_replica(project, t),))) for t in tables}


def test_a_reconcile_rewrites_no_replica(reconciled: tuple[Project, dict[str, dict[str, Any]]]) -> None:
    """Both sides hash rows as they scan: no replica is rewritten to store hashes, the first time or any
    other; the hash columns an earlier version stored are dropped (every merge paid for them)."""
    project, results = reconciled
    assert FILES["before"] == FILES["after"]
    columns = project.scalar(
        "select count(*) from pg_attribute where attrelid = %s::regclass and attname in (%s, %s) and not attisdropped",
        (_replica(project, LEGACY), "_tidemark_key_hash", "_tidemark_row_hash"),
    )
    assert columns == 0
    assert results[f"dbo.{LEGACY}"]["status"] == "landed"


@pytest.mark.parametrize("key_type", list(KEY_TYPES))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_reconcile_leaves_the_replica_equal_to_its_source(
    reconciled: tuple[Project, dict[str, dict[str, Any]]], scenario: Scenario, key_type: str
) -> None:
    project, results = reconciled
    table = table_name(scenario, key_type)
    result = results[f"dbo.{table}"]
    inserted = len(set(scenario.source) - set(scenario.replica))
    deleted = len(set(scenario.replica) - set(scenario.source))
    assert (result["inserted"], result["updated"], result["deleted"] + result["boundary_deleted"]) == (
        inserted,
        len(_changed(scenario)),
        deleted,
    )
    keys = KEY_TYPES[key_type][1]
    columns = [*keys, "Val", "Amount", "ModifiedDate"]
    source = rows_of(project.source_url, "dbo", table, columns, keys)
    replica = rows_of(
        project.target_url,
        project.planner.plan(project.planner.find(f"dbo.{table}")).names.schema,
        table.lower(),
        [c.lower() for c in columns],
        [k.lower() for k in keys],
    )
    assert replica == source
    logged = project.scalar(
        "select count(*) from _migration.delete_log where table_key like %s", (f"%.{table.lower()}",)
    )
    assert logged == deleted


def test_verify_agrees(reconciled: tuple[Project, dict[str, dict[str, Any]]]) -> None:
    project, _ = reconciled
    done = project.cli("verify", "--all")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_next_reconcile_keeps_the_replicas_figures_and_finds_rows_written_by_hand(
    reconciled: tuple[Project, dict[str, dict[str, Any]]],
) -> None:
    """With every key type: a reconcile after the repairs finds every replica exact, from the figures the
    last one kept where no row was written since; one after rows were written by hand finds those rows."""
    project, _ = reconciled
    command = ("reconcile", "--all", "--allow-mass-delete", "--dbt", "run", "--parallel", "4")
    again = project.cli(*command)
    assert again.returncode == 0, again.stderr[-3000:]
    tables = len(SCENARIOS) * len(KEY_TYPES)
    assert again.stderr.count("the replica is exact") == tables, again.stderr[-3000:]
    assert again.stderr.count("ranges kept from its last reconcile") == tables, again.stderr[-3000:]
    tampered = [table_name(SCENARIOS[3], t) for t in KEY_TYPES]  # source_much_larger: about a thousand rows
    with project.target() as conn:
        for table in tampered:
            conn.execute(f"update {_replica(project, table)} set \"val\" = 'by hand' where \"val\" = 'v1100'")
    third = project.cli(*command, "--json")
    assert third.returncode == 0, third.stderr[-3000:]
    found = {e["table"]: (e["status"], e["updated"]) for e in json.loads(third.stdout)["tables"]}
    assert {t: found[f"dbo.{t}"] for t in tampered} == {t: ("landed", 1) for t in tampered}
    assert all(status == "exact" for table, (status, _) in found.items() if table.removeprefix("dbo.") not in tampered)
