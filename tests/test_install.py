"""tidemark as a user installs it: `pip install` into a fresh venv outside the repo, `tidemark init` in a
dbt project folder of the user's, then landing, merging and verifying a table with only
TIDEMARK_SOURCE_URL and TIDEMARK_TARGET_URL set."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from extract import __version__
from tests.conftest import REPO, Project

pytestmark = pytest.mark.slow

NOT_SHIPPED = {
    *(".venv", ".venv-bench", ".tidemark", "build", "target", "logs", "tests", "bench", ".git"),
    *(".mypy_cache", ".ruff_cache", ".pytest_cache"),
}


def _installed(tmp: Path) -> Path:
    """A fresh venv with tidemark installed from a copy of the checkout (so no build leftovers leak in).

    Its dependencies are the pinned set this checkout runs on (`make install` installs them from
    constraints.txt), seen through a .pth file rather than installed again: pip builds and installs
    tidemark alone, and `pip check` then proves that what tidemark declares is met by those pins."""
    checkout = tmp / "checkout"
    shutil.copytree(
        REPO, checkout, ignore=lambda folder, names: [n for n in names if n in NOT_SHIPPED or n.endswith(".egg-info")]
    )
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "pinned_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "install", "--quiet", "--no-deps", str(checkout)], capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stderr[-3000:]
    checked = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-3000:]
    return venv / "bin"


def test_pip_installed_tidemark_lands_merges_and_verifies(project: Project, tmp_path: Path) -> None:
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute('create table dbo."Parts" ("PartID" int primary key, "Name" text, "ModifiedDate" timestamp)')
        conn.execute("""insert into dbo."Parts" select i, 'part ' || i, timestamp '2026-01-01' + i * interval '1 minute'
                        from generate_series(1, 500) as i""")
    bin_dir = _installed(tmp_path)
    user_project = tmp_path / "my-replicas"  # outside the repo, and not the current folder either
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "TIDEMARK_SOURCE_URL": project.source_url,
        "TIDEMARK_TARGET_URL": project.target_url,
        "TIDEMARK_SAFETY_WINDOW": "0s",
        "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp"),
    }

    def tidemark(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(bin_dir / "tidemark"), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"tidemark {' '.join(args)}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        return done

    assert tidemark("--version").stdout.strip() == f"tidemark {__version__}"
    tidemark("init", "--project-dir", str(user_project))
    package = user_project / "dbt_packages" / "tidemark"
    assert (package / "macros" / "distinct_merge").is_dir() and (package / "models" / "state").is_dir()
    assert not (user_project / "macros").exists()  # a project's macros folder is its own
    assert (user_project / "gx" / "great_expectations.yml").is_file()
    (user_project / "seeds" / "sync_tables.csv").write_text(
        "source_schema,source_table\ndbo,Parts\n"  # the documented minimal seed
    )
    env["TIDEMARK_PROJECT_DIR"] = str(user_project)
    tidemark("generate")
    tidemark("--table", "dbo.Parts", "--dbt", "build")
    with project.source() as conn:
        conn.execute('update dbo."Parts" set "Name" = \'renamed\', "ModifiedDate" = now() where "PartID" <= 7')
    tidemark("--table", "dbo.Parts", "--dbt", "build", "--quiet")
    verified = tidemark("verify", "--table", "dbo.Parts")
    checked = tidemark("check", "--table", "dbo.Parts", "--json")
    # dbt alone, configured by the URL too; its state view then shows the merged run.
    tidemark("dbt", "build", "--select", "_migration_state")

    assert "same" in verified.stdout, verified.stdout
    assert json.loads(checked.stdout)["success"] is True
    assert (user_project / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").is_file()
    gx_config = (user_project / "gx" / "great_expectations.yml").read_text()
    assert "connection_string: ${TIDEMARK_GX_TARGET_URL}" in gx_config
    schema = project.scalar(
        "select table_schema from information_schema.tables where table_name = 'parts' and table_type = 'BASE TABLE'"
    )
    assert project.scalar(f'select count(*) from "{schema}".parts') == 500
    assert project.scalar(f"select count(*) from \"{schema}\".parts where name = 'renamed'") == 7
    assert project.scalar("select sync_status from _migration._migration_state") == "success"
