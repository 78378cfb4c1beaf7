"""A replica's dbt snapshot compares only the keys its merges changed (dbt_package/macros/history/).

The arbiter: after random rounds of source changes (updates, rows touched without a change, inserts,
deletes a reconcile finds, keys changed, a unique value passed to a new row, a full refresh), the
history equals the one dbt's own snapshot makes by comparing every row of the same replica states,
and its current versions equal the replica."""

from __future__ import annotations

import hashlib
import random
from typing import Any

import yaml

from tests.conftest import Project

ROWS = 300
ROUNDS = 5
HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,record_id,unique_keys"
COLUMNS = ("id", "code", "name", "qty")
FULL = "parts_full_history"
STAMP = "\"ModifiedDate\" = clock_timestamp() at time zone 'UTC'"


#: The tables of the test: one whose rows are known by their key, one by a record id (rowguid).
TABLES = {"Parts": False, "Tagged": True}


def _setup(project: Project) -> dict[str, dict[str, str]]:
    """Both tables in the source and the project, each with a full-compare snapshot beside its history;
    each table's names."""
    with project.source() as conn:
        conn.execute("create schema dbo")
        for table in TABLES:
            conn.execute(
                f"""create table dbo."{table}" ("Id" integer primary key, rowguid uuid not null unique,
                "Code" text unique, "Name" text, "Qty" integer, "ModifiedDate" timestamp(3))"""
            )
            conn.execute(
                f"""insert into dbo."{table}" select i, gen_random_uuid(), 'c' || i, 'part ' || i, i % 7,
                timestamp '2026-01-01' + i * interval '1 minute' from generate_series(1, {ROWS}) as i"""
            )
    project.write_sync_tables(
        [
            f"dbo,{table},ModifiedDate,,true,{'rowguid' if record_id else ''},Code"
            for table, record_id in TABLES.items()
        ],
        HEADER,
    )
    project.generate()
    generated = yaml.safe_load((project.root / "snapshots" / "_replica__snapshots.yml").read_text())
    fulls, names = [], {}
    for ours in generated["snapshots"]:
        schema, history = ours["config"]["schema"], ours["config"]["alias"]
        table = history.removesuffix("__history")
        # The same history as dbt snapshots it on its own: every row compared, every time.
        full = {**ours, "name": f"{table}_{FULL}", "config": {**ours["config"], "alias": f"{table}_{FULL}"}}
        for key in ("tidemark_replica", "pre_hook", "post_hook"):
            del full["config"][key]
        fulls.append(full)
        source_table = next(name for name in TABLES if name.lower() == table)
        names[source_table] = {
            "history": f'"{schema}"."{history}"',
            "full": f'"{schema}"."{table}_{FULL}"',
            "replica": f'"{schema}"."{table}"',
            "changed": f'"{schema}"."chg__{table}"',
            "model": ours["relation"].split("'")[1],
            "table_key": f"{schema}.{table}",
            # The stem of the indexes the history's post-hook keeps (tidemark_history_compared).
            "index_stem": "tidemark_" + hashlib.md5(f"{schema}.{history}".encode()).hexdigest()[:16],
        }
    (project.root / "snapshots" / "full_compare.yml").write_text(yaml.safe_dump({"snapshots": fulls}))
    assert set(names) == set(TABLES)
    return names


def _change(project: Project, table: str, rng: random.Random, next_id: int) -> int:
    """One round of random changes of a table in the source; returns the next unused key."""
    with project.source() as conn, conn.transaction():
        ids = [int(r[0]) for r in conn.execute(f'select "Id" from dbo."{table}" order by 1').fetchall()]
        picked = rng.sample(ids, 14)
        for key in picked[:5]:
            conn.execute(
                f'update dbo."{table}" set "Name" = %s, "Qty" = %s, {STAMP} where "Id" = %s',
                (f"name {rng.randrange(10**6)}", rng.choice([None, 1, 2, 3]), key),
            )
        for key in picked[5:8]:  # only the stamp changes
            conn.execute(f'update dbo."{table}" set {STAMP} where "Id" = %s', (key,))
        for key in picked[8:10]:  # gone: only a reconcile finds it
            conn.execute(f'delete from dbo."{table}" where "Id" = %s', (key,))
        for key in picked[10:12]:  # the key changes, the record stays
            conn.execute(f'update dbo."{table}" set "Id" = %s, {STAMP} where "Id" = %s', (next_id, key))
            next_id += 1
        # A row deleted, and its unique code given to a new row of another key.
        code = conn.execute(f'delete from dbo."{table}" where "Id" = %s returning "Code"', (picked[12],)).fetchone()
        assert code is not None
        for number in range(3):
            conn.execute(
                f"""insert into dbo."{table}" values (%s, gen_random_uuid(), %s, %s, 1,
                clock_timestamp() at time zone 'UTC')""",
                (next_id, code[0] if number == 0 else f"c{next_id}", f"new {next_id}"),
            )
            next_id += 1
    return next_id


def _versions(project: Project, history: str) -> list[tuple[Any, ...]]:
    """Every version, without dbt's timestamps and ids: the values, and whether it is current."""
    columns = ", ".join(COLUMNS)
    return [
        tuple(row)
        for row in project.target()
        .execute(f"select {columns}, dbt_valid_to is null from {history} order by id, dbt_valid_from, {columns}")
        .fetchall()
    ]


def _indexes(project: Project, history: str) -> list[tuple[str, str]]:
    query = "select indexname, indexdef from pg_indexes where schemaname = %s and tablename = %s order by 1"
    schema, table = (part.strip('"') for part in history.split("."))
    return [(str(name), str(text)) for name, text in project.target().execute(query, (schema, table)).fetchall()]


def _fillfactor(project: Project, history: str) -> str | None:
    query = "select array_to_string(reloptions, ',') from pg_class where oid = to_regclass(%s)"
    return project.scalar(query, (history,))


def _current_differs(project: Project, names: dict[str, str]) -> list[tuple[Any, ...]]:
    columns = ", ".join(COLUMNS)
    query = f"""
        (select {columns} from {names["replica"]}
         except all select {columns} from {names["history"]} where dbt_valid_to is null)
        union all
        (select {columns} from {names["history"]} where dbt_valid_to is null
         except all select {columns} from {names["replica"]})
    """
    return [tuple(row) for row in project.target().execute(query).fetchall()]


SNAPSHOTS_AND_MODELS = ("--resource-type", "seed", "--resource-type", "model", "--resource-type", "snapshot")


def test_the_history_compares_the_changed_keys_and_equals_a_full_snapshot(project: Project) -> None:
    names = _setup(project)
    project.extract()
    project.dbt("build", *SNAPSHOTS_AND_MODELS)
    assert project.scalar("select count(*) from _migration.history_rescans") == 0
    with project.target() as conn:
        for table in TABLES:
            # The index by dbt_scd_id that histories kept before versions were closed by row address.
            stem, history = names[table]["index_stem"], names[table]["history"]
            conn.execute(f'create index "{stem}_scd_id" on {history} (dbt_scd_id) where dbt_valid_to is null')
        # Parts' history as histories were made before they had a fillfactor; Tagged's with a user's own.
        assert _fillfactor(project, names["Parts"]["history"]) == "fillfactor=90"
        conn.execute(f"alter table {names['Parts']['history']} reset (fillfactor)")
        conn.execute(f"alter table {names['Tagged']['history']} set (fillfactor = 70)")
    rng = random.Random(20261126)
    next_ids = dict.fromkeys(TABLES, ROWS + 1)
    for number in range(ROUNDS):
        for table in TABLES:
            next_ids[table] = _change(project, table, rng, next_ids[table])
        if number == ROUNDS - 2:
            done = project.cli("--all", "--full-refresh", "--quiet")
            assert done.returncode == 0, done.stderr[-3000:]
            reasons = project.scalar("select array_agg(distinct reason) from _migration.history_rescans")
            assert reasons == ["full refresh"], reasons
        elif number == 0:
            project.extract()
            project.dbt("build", "--resource-type", "model", "--select", *(n["model"] for n in names.values()))
            for table in TABLES:
                changed = project.scalar(f"select count(*) from {names[table]['changed']}")
                # 8 updated, 2 moved (each its old key too, moved or displaced), 3 inserted, 1 displaced.
                assert changed == 16, (table, changed)
        else:
            project.extract()
        project.dbt("build", *SNAPSHOTS_AND_MODELS)
        assert project.scalar("select count(*) from _migration.history_rescans") == 0
        if number % 2 == 1:
            # Its build takes the histories, and the full snapshots, of the replicas it repairs.
            done = project.cli("reconcile", "--all", "--dbt", "build", "--quiet")
            assert done.returncode == 0, done.stderr[-3000:]
        for table, record_id in TABLES.items():
            assert project.scalar(f"select count(*) from {names[table]['changed']}") == 0
            assert _current_differs(project, names[table]) == [], f"{table}, round {number}"
            if not record_id:
                # With a record id, a moved row's versions move with it: a full snapshot starts a new key.
                assert _versions(project, names[table]["history"]) == _versions(project, names[table]["full"]), (
                    f"{table}, round {number}"
                )
    for table in TABLES:
        assert len(_versions(project, names[table]["history"])) > ROWS + ROUNDS * 10
        # One index: the current versions by key; the one by dbt_scd_id is gone.
        indexes = _indexes(project, names[table]["history"])
        assert [name for name, _ in indexes] == [f"{names[table]['index_stem']}_current"], indexes
        assert indexes[0][1].endswith("USING btree (id) WHERE (dbt_valid_to IS NULL)"), indexes
    assert _fillfactor(project, names["Parts"]["history"]) == "fillfactor=90"
    assert _fillfactor(project, names["Tagged"]["history"]) == "fillfactor=70"

    # A change no merge made (written into the replica by hand) is not compared: the snapshot reads the
    # changed keys only. Asked for, a rescan compares every row and finds it.
    parts = names["Parts"]
    with project.target() as conn:
        conn.execute(
            f"update {parts['replica']} set name = 'by hand' where id = (select min(id) from {parts['replica']})"
        )
    project.dbt("snapshot")
    assert len(_current_differs(project, parts)) == 2
    with project.target() as conn:
        conn.execute(
            "insert into _migration.history_rescans (table_key, reason) values (%s, 'asked')", (parts["table_key"],)
        )
    project.dbt("snapshot")
    assert _current_differs(project, parts) == []


def test_a_history_configured_as_another_kind_of_snapshot_is_refused(project: Project) -> None:
    """tidemark's history materialization makes dbt's check snapshot with hard deletes invalidated; a history
    configured otherwise (by hand, in a generated file) is refused, not built with another meaning."""
    names = _setup(project)
    project.extract()
    snapshots = project.root / "snapshots" / "_replica__snapshots.yml"
    generated = yaml.safe_load(snapshots.read_text())
    generated["snapshots"][0]["config"]["hard_deletes"] = "new_record"
    snapshots.write_text(yaml.safe_dump(generated))
    refused = project.dbt("build", "--select", generated["snapshots"][0]["name"], check=False)
    assert refused.returncode == 1
    assert "not as strategy check with hard_deletes new_record" in refused.stdout, refused.stdout[-2000:]
    assert "`tidemark generate`" in refused.stdout
    history = names["Parts" if generated["snapshots"][0]["name"].endswith("parts__history") else "Tagged"]["history"]
    assert project.scalar(f"select to_regclass('{history}')") is None


def test_the_changed_keys_are_counted_before_the_history_compares_them(project: Project) -> None:
    """The planner knows how many keys changed when the history compares them: the changed-keys table,
    emptied after each comparison, kept the pages of its largest fill, and 10,000 keys of 1,000,000 were
    planned as 40,000 and hash-joined with the whole replica and history (0.5 to 1.6 s, against 0.37)."""
    names = _setup(project)
    project.sync()
    changed_keys = names["Parts"]["changed"]
    for count in (7, 3):
        with project.source() as conn:
            conn.execute(f'update dbo."Parts" set "Qty" = "Qty" + 1, {STAMP} where "Id" <= %s', (count,))
        project.sync()
        assert project.scalar(f"select reltuples from pg_class where oid = to_regclass('{changed_keys}')") == count
        assert project.scalar(f"select count(*) from {changed_keys}") == 0  # emptied after the comparison
