"""`tidemark init` never deletes or overwrites a user's file: tidemark's macros and state model are a
dbt package (namespace tidemark) linked as dbt_packages/tidemark, and a kept dbt_project.yml,
packages.yml or profile that lacks what tidemark needs is named, with nothing written."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.conftest import REPO, Project

USER_PROJECT = """\
name: acme_warehouse
version: "1.0.0"
config-version: 2
profile: acme
macro-paths: ["macros", "macros_generated"]
dispatch:
  - macro_namespace: dbt
    search_order: ["acme_warehouse", "tidemark", "dbt"]
seeds:
  acme_warehouse:
    +schema: _migration
    sync_tables:
      +column_types: {source_schema: text, source_table: text}
"""

# The user's profile reads the same variables tidemark hands dbt, under a name of its own.
USER_PROFILE = """\
acme:
  target: warehouse
  outputs:
    warehouse:
      type: postgres
      host: "{{ env_var('TIDEMARK_TARGET_HOST') }}"
      port: "{{ env_var('TIDEMARK_TARGET_PORT') | as_number }}"
      user: "{{ env_var('TIDEMARK_TARGET_USER') }}"
      password: "{{ env_var('TIDEMARK_TARGET_PASSWORD', '') }}"
      dbname: "{{ env_var('TIDEMARK_TARGET_DBNAME') }}"
      schema: public
      threads: 2
"""

# Files in the folders tidemark's own once lived in, and with the names of tidemark's files.
USER_FILES = {
    "macros/my_cents.sql": "{% macro my_cents(x) %}round({{ x }} * 100){% endmacro %}\n",
    "macros/shared/quote_helper.sql": "{% macro quote_helper(x) %}'{{ x }}'{% endmacro %}\n",
    "macros/distinct_merge/notes.md": "my notes on merging\n",
    "models/state/my_state.sql": "select 1 as state_id\n",
    "models/marts/orders_total.sql": "select {{ my_cents(2.5) }} as cents\n",
    "seeds/my_lookup.csv": "code,label\na,Alpha\n",
    "snapshots/.keep": "",
    "analyses/scratch.sql": "select 1\n",
    "README.md": "Acme's warehouse\n",
}


def _tree(root: Path) -> dict[str, str]:
    """Every file under `root` (links not followed) and its content's hash; not dbt's target/ (artifacts,
    tidemark_run_results.json among them, which every command writes)."""
    files = {}
    for path in sorted(root.rglob("*")):
        if path.relative_to(root).parts[0] == "target":
            continue
        if path.is_file() and not any(p.is_symlink() for p in [path, *path.parents] if p != root):
            files[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def _tidemark(project: Project, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **project.env, "TIDEMARK_PROJECT_DIR": str(root)}
    env.pop("DBT_PROFILES_DIR", None)
    return run_cli(args, env, REPO)


@pytest.fixture
def user_root(project: Project, tmp_path: Path) -> Path:
    root = tmp_path / "acme"
    root.mkdir()
    (root / "dbt_project.yml").write_text(USER_PROJECT)
    (root / "profiles.yml").write_text(USER_PROFILE)
    for name, text in USER_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute('create table dbo."Parts" ("PartID" int primary key, "Name" text)')
        conn.execute("""insert into dbo."Parts" select i, 'part ' || i from generate_series(1, 50) as i""")
    return root


def test_init_twice_and_a_sync_leave_every_user_file_as_it_was(project: Project, user_root: Path) -> None:
    before = _tree(user_root)
    for _ in range(2):
        done = _tidemark(project, user_root, "init")
        assert done.returncode == 0, done.stderr[-3000:]
    after_init = _tree(user_root)
    assert {name: after_init[name] for name in before} == before
    new = sorted(set(after_init) - set(before))
    assert "packages.yml" in new and "seeds/type_map.csv" in new
    assert not [name for name in new if name.startswith(("macros/", "models/"))], new
    assert (user_root / "dbt_packages" / "tidemark").is_symlink()

    (user_root / "seeds" / "sync_tables.csv").write_text("source_schema,source_table\ndbo,Parts\n")
    for args in (["generate"], ["--table", "dbo.Parts", "--dbt", "build"]):
        done = _tidemark(project, user_root, *args)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    after_sync = _tree(user_root)
    assert {name: after_sync[name] for name in before} == before
    assert project.scalar("select count(*) from demo__" + project.source_db + "__dbo.parts") == 50
    # The user's own model (a --table sync builds that table's nodes only), built with the user's macro.
    built = _tidemark(project, user_root, "dbt", "run", "--select", "orders_total")
    assert built.returncode == 0, built.stdout[-3000:]
    assert project.scalar("select cents from public.orders_total") == 250


def test_init_names_what_a_kept_project_lacks_and_writes_nothing(project: Project, user_root: Path) -> None:
    (user_root / "dbt_project.yml").write_text(
        USER_PROJECT.replace('macro-paths: ["macros", "macros_generated"]\n', "").split("dispatch:")[0]
    )
    (user_root / "packages.yml").write_text("packages:\n  - package: dbt-labs/dbt_utils\n    version: 1.3.0\n")
    before = _tree(user_root)
    done = _tidemark(project, user_root, "init")
    assert done.returncode == 2
    first = done.stderr.strip().splitlines()[0]
    assert "dispatch" in first and "macros_generated" in first and "packages.yml" in first, first
    assert "Traceback" not in done.stderr
    assert _tree(user_root) == before
    assert not (user_root / "dbt_packages").exists()


def test_a_profile_that_builds_elsewhere_is_refused_before_anything_lands(project: Project, user_root: Path) -> None:
    assert _tidemark(project, user_root, "init").returncode == 0
    (user_root / "seeds" / "sync_tables.csv").write_text("source_schema,source_table\ndbo,Parts\n")
    assert _tidemark(project, user_root, "generate").returncode == 0
    (user_root / "profiles.yml").write_text(USER_PROFILE.replace("env_var('TIDEMARK_TARGET_DBNAME')", "'warehouse'"))
    done = _tidemark(project, user_root, "--table", "dbo.Parts", "--dbt", "build")
    assert done.returncode == 2, done.stderr[-2000:]
    first = done.stderr.strip().splitlines()[0]
    assert "'acme'" in first and "/warehouse" in first and f"/{project.target_db}" in first, first
    assert project.scalar("select to_regclass('_migration.run_log')") is None  # nothing landed


def test_seeds_pinned_to_another_schema_than_the_state_schema_are_refused(project: Project, user_root: Path) -> None:
    """The user's project pins its seeds to `_migration` by name: right while that is the state schema,
    refused (by init, a sync and `dbt`) once TIDEMARK_STATE_SCHEMA names another, with the line to write."""
    assert _tidemark(project, user_root, "init").returncode == 0
    (user_root / "seeds" / "sync_tables.csv").write_text("source_schema,source_table\ndbo,Parts\n")
    assert _tidemark(project, user_root, "generate").returncode == 0
    project.env["TIDEMARK_STATE_SCHEMA"] = "acme_state"
    before = _tree(user_root)
    for args in (["init"], ["--table", "dbo.Parts", "--dbt", "build"], ["dbt", "seed"]):
        done = _tidemark(project, user_root, *args)
        assert done.returncode == 2, (args, done.stderr[-2000:])
        first = done.stderr.strip().splitlines()[0]
        assert "'_migration'" in first and "'acme_state'" in first and "env_var('TIDEMARK_STATE_SCHEMA'" in first
        assert "Traceback" not in done.stderr
    assert _tree(user_root) == before
    assert project.scalar("select count(*) from pg_namespace where nspname in ('_migration', 'acme_state')") == 0

    text = (user_root / "dbt_project.yml").read_text()
    following = text.replace("+schema: _migration", "+schema: \"{{ env_var('TIDEMARK_STATE_SCHEMA', '_migration') }}\"")
    (user_root / "dbt_project.yml").write_text(following)
    done = _tidemark(project, user_root, "--table", "dbo.Parts", "--dbt", "build")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert project.scalar("select count(*) from acme_state.sync_tables") == 1


def test_init_refuses_a_path_through_a_file_and_follows_a_linked_macros_folder(
    project: Project, user_root: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = _tidemark(project, blocker / "project", "init")
    assert done.returncode == 2 and "is a file, not a folder" in done.stderr and "Traceback" not in done.stderr

    shared_macros = tmp_path / "shared-macros"
    shutil.move(user_root / "macros", shared_macros)
    (user_root / "macros").symlink_to(shared_macros)
    before = _tree(shared_macros)
    done = _tidemark(project, user_root, "init")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (user_root / "macros").is_symlink() and _tree(shared_macros) == before
