"""The dbt docs lineage starts at the source: the source's tables as dbt sources (with the system in
their meta) upstream of the replicas, `_migration_state` downstream of every replica, an as-of history
downstream of its replica, a project overview, and column descriptions that say what matters. Checked
in manifest.json, and on the docs site's lineage graph in headless Chromium."""

from __future__ import annotations

import functools
import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.browser import dom, screenshot
from tests.conftest import Project

HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,asof_history"


def _manifest(project: Project) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((project.root / "target" / "manifest.json").read_text())
    return manifest


def test_the_lineage_starts_at_the_source(project: Project, tmp_path: Path) -> None:
    project.keep_dbt_files()  # the lineage is read from dbt's manifest.json
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(
            'create table dbo."Items" ("Id" integer primary key, "Price" numeric, "ModifiedDate" timestamp(3))'
        )
        conn.execute('create table dbo."Tags" ("Code" text primary key, "ModifiedDate" timestamp(3))')
        conn.execute("""insert into dbo."Items" select i, i, clock_timestamp() from generate_series(1, 5) as i""")
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true,true", "dbo,Tags,ModifiedDate,,true,false"], HEADER)
    project.generate()
    project.sync()
    project.dbt("docs", "generate")
    manifest = _manifest(project)
    names = {t: project.planner.plan(project.planner.find(f"dbo.{t}")).names for t in ("Items", "Tags")}
    models = {t: f"model.tidemark_replicas.{n.model_name}" for t, n in names.items()}

    origin = f"source.tidemark_replicas.origin__demo__{project.source_db}__dbo.items"
    source = manifest["sources"][origin]
    assert source["identifier"] == "Items" and source["schema"] == "dbo"
    assert source["source_meta"]["system"] == "PostgreSQL" and source["source_meta"]["database"] == project.source_db
    replica = manifest["nodes"][models["Items"]]
    staging = f"source.tidemark_replicas.{names['Items'].schema}.{names['Items'].staging_table}"
    assert sorted(replica["depends_on"]["nodes"]) == sorted([origin, staging])

    state = manifest["nodes"]["model.tidemark._migration_state"]
    assert set(models.values()) <= set(state["depends_on"]["nodes"])
    history = manifest["nodes"][f"{models['Items']}__asof_history"]
    assert models["Items"] in history["depends_on"]["nodes"]
    assert "doc.tidemark.__overview__" in manifest["docs"]

    columns = replica["columns"]
    assert columns["id"]["description"].endswith(" not null) in the source. The primary key."), columns["id"]
    assert "The cursor: each run reads the rows whose value moved past" in columns["modifieddate"]["description"]
    assert columns["price"]["description"] == (
        "Price (numeric) in the source. Mapped to numeric: unconstrained numeric does not fit Spark's decimal(38)."
    )

    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(project.root / "target"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/index.html#!/model/{models['Items']}?g_v=1"
        page = dom(url, tmp_path / "chromium")
        assert names["Items"].model_name in page
        shot = screenshot(url, tmp_path / "chromium", tmp_path / "lineage.png", "1400,900")
        assert shot.stat().st_size > 20_000
    finally:
        server.shutdown()
        server.server_close()
