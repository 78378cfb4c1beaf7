"""A pass's dbt gets ahead while the tables land: it reads the parse an earlier pass kept, as long as no
file of the project changed, and starts its run, which waits before its first query for what landed
and runs only that."""

from __future__ import annotations

import stat

from extract.core.quoting import postgres_identifier
from extract.state.waiting import tables_waiting
from tests.conftest import Project
from tests.items_fixture import items_table, quoted_replica
from tests.two_tables_waiting import run_script, two_tables_waiting

#: A held run started for some models, then told which to run: what the pass does, in a fresh interpreter
#: (dbt's process is forked before any thread starts).
_HELD = """
import json, sys
from extract.config.settings import load_settings
from extract.runtime.dbt_setup import dbt_process

started, asked = json.loads(sys.argv[1]), json.loads(sys.argv[2])
dbt = dbt_process(["build"], load_settings())
assert dbt is not None
dbt.start(True, False, started)
print(json.dumps({"ok": dbt.run(True, False, models=asked), "ran_with": dbt.ran_with}))
"""


def _rename(project: Project, table: str) -> None:
    with project.source() as conn:
        relation = f"dbo.{postgres_identifier(table)}"
        changed = """set "Name" = 'renamed', "ModifiedDate" = clock_timestamp() where "Id" <= 5"""
        conn.execute(f"update {relation} {changed}")


def _pass(project: Project) -> None:
    result = project.cli("--all", "--dbt", "build")
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_next_pass_reads_the_kept_parse_until_a_file_of_the_project_changes(project: Project) -> None:
    items_table(project, 50)
    _pass(project)
    kept = project.root / "target" / "tidemark_parse.pickle"
    assert kept.is_file(), "the pass's parse was not kept"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    written = kept.stat().st_mtime_ns

    _rename(project, "Items")
    _pass(project)
    assert kept.stat().st_mtime_ns == written, "the second pass parsed again instead of reading the kept parse"
    replica = quoted_replica(project)
    assert project.scalar(f"""select count(*) from {replica} where "name" = 'renamed'""") == 5

    model = project.root / "models" / "replica" / f"{project.model_name('dbo.Items')}.sql"
    model.write_text(model.read_text() + "\n-- edited\n")
    with project.source() as conn:
        conn.execute("""update dbo."Items" set "Name" = 'again', "ModifiedDate" = clock_timestamp() where "Id" > 45""")
    _pass(project)
    assert kept.stat().st_mtime_ns != written, "an edited project was not parsed again"
    assert project.scalar(f"""select count(*) from {replica} where "name" = 'again'""") == 5


def test_a_kept_parse_others_can_write_is_not_read(project: Project) -> None:
    items_table(project, 10)
    _pass(project)
    kept = project.root / "target" / "tidemark_parse.pickle"
    kept.chmod(0o620)
    written = kept.stat().st_mtime_ns
    _rename(project, "Items")
    _pass(project)
    assert kept.stat().st_mtime_ns != written, "a parse others can write was read instead of parsed again"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


def _held_run(project: Project, started: list[str], asked: list[str]) -> dict[str, object]:
    return run_script(project, _HELD, started, asked)


def test_a_run_started_for_more_tables_than_landed_merges_only_those_that_landed(project: Project) -> None:
    items, other, (items_key, other_key) = two_tables_waiting(project)
    keys = {"dbo.Items": items_key, "dbo.Other": other_key}
    settings = project.settings

    answer = _held_run(project, [items, other], [items])
    ran_with = answer["ran_with"]
    assert answer["ok"] is True and isinstance(ran_with, list)
    assert f"{items}+" in ran_with and not any(other in argument for argument in ran_with), ran_with
    waiting = tables_waiting(settings.target, settings.state_schema, keys.values())
    assert waiting == {keys["dbo.Other"]}, "the held run merged a table the pass did not ask for"

    answer = _held_run(project, [other], [])  # nothing to merge after all: the held run is dropped
    assert answer == {"ok": True, "ran_with": None}
    assert tables_waiting(settings.target, settings.state_schema, keys.values()) == {keys["dbo.Other"]}

    answer = _held_run(project, [other], [other])  # asked as started: it goes on
    assert answer["ok"] is True
    assert tables_waiting(settings.target, settings.state_schema, keys.values()) == set()
