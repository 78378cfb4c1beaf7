"""What dbt does before a run's first node is the same with extract/runtime/dbt_run_overheads.py in place:
the graph summary it writes, and the relations its cache holds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from extract.runtime import dbt_run_overheads

PROFILE = """\
small:
  target: dev
  outputs:
    dev: {type: postgres, host: 127.0.0.1, port: 5432, user: nobody, password: "", dbname: none, schema: s, threads: 1}
"""
FILES = {
    "dbt_project.yml": "name: small\nversion: '1.0.0'\nprofile: small\n",
    "models/sources.yml": "version: 2\nsources:\n  - name: raw\n    tables: [{name: orders}]\n",
    "models/orders.sql": "select * from {{ source('raw', 'orders') }}",
    "models/totals.sql": "select count(*) as n from {{ ref('orders') }}",
    "models/schema.yml": (
        "version: 2\nmodels:\n  - name: orders\n    columns:\n"
        "      - name: id\n        data_tests: [not_null, unique]\n"
    ),
    "seeds/codes.csv": "code,label\n1,one\n",
    "snapshots/orders_history.yml": (
        "snapshots:\n  - name: orders_history\n    relation: ref('orders')\n"
        "    config: {strategy: check, unique_key: id, check_cols: all}\n"
    ),
    "tests/no_negative_totals.sql": "select * from {{ ref('totals') }} where n < 0",
}


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A small project of every kind of node, parsed by dbt (no database needed)."""
    from dbt.cli.main import dbtRunner

    root = tmp_path_factory.mktemp("small")
    (root / "profiles.yml").write_text(PROFILE)
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    args = ["parse", "--project-dir", str(root), "--profiles-dir", str(root), "--no-write-json", "--quiet"]
    result = dbtRunner().invoke(args)
    assert result.success, result.exception
    return result.result


def _originals() -> tuple[Any, Any]:
    from dbt.adapters.cache import RelationsCache
    from dbt.compilation import Linker

    summary, add = Linker.get_graph_summary, RelationsCache.add
    return getattr(summary, "__wrapped__", summary), getattr(add, "__wrapped__", add)


def test_the_graph_summary_is_dbt_s_own(manifest: Any) -> None:
    from dbt.compilation import Linker

    dbt_summary, _ = _originals()
    linker = Linker()
    linker.link_graph(manifest)
    assert {node["type"] for node in dbt_summary(linker, manifest).values()} >= {"model", "source", "snapshot"}
    assert dbt_run_overheads.graph_summary(linker, manifest) == dbt_summary(linker, manifest)

    manifest.build_parent_and_child_maps()
    linker.add_test_edges(manifest)  # as dbt's build does, before its second summary
    summary = dbt_run_overheads.graph_summary(linker, manifest)
    assert any(node["type"] == "test" and node.get("succ") for node in summary.values())
    assert summary == dbt_summary(linker, manifest)


@pytest.fixture
def cache_events() -> Iterator[list[str]]:
    """The names of the cache events dbt makes while the test runs."""
    from dbt_common.events.event_manager_client import get_event_manager

    manager = get_event_manager()
    seen: list[str] = []

    def note(event: Any) -> None:
        if event.info.name.startswith("Cache"):
            seen.append(event.info.name)

    manager.add_callback(note)
    yield seen
    manager.callbacks.remove(note)


def _relations() -> list[Any]:
    from dbt.adapters.postgres.relation import PostgresRelation

    return [
        PostgresRelation.create(database="db", schema=schema, identifier=name, type=kind)
        for schema, name, kind in [("a", "t1", "table"), ("a", "v1", "view"), ("B", "T2", "table")]
    ]


def test_the_relation_cache_holds_what_dbt_s_own_holds(cache_events: list[str]) -> None:
    from dbt.adapters.cache import RelationsCache

    _, dbt_add = _originals()
    dbt_run_overheads.install()
    dbt_run_overheads.install()  # twice is once
    ours, theirs = RelationsCache(log_cache_events=False), RelationsCache(log_cache_events=False)
    for relation in _relations():
        ours.add(relation)
        dbt_add(theirs, relation)
    assert cache_events.count("CacheAction") == 3  # dbt's own add made its events; ours none
    assert ours.dump_graph() == theirs.dump_graph() and ours.schemas == theirs.schemas
    assert ("db", "b") in ours.schemas and len(ours.relations) == 3

    logged = RelationsCache(log_cache_events=True)  # asked to log them: dbt's own add, events and all
    logged.add(_relations()[0])
    assert cache_events.count("CacheAction") == 4
    assert RelationsCache.add.__wrapped__ is dbt_add  # type: ignore[attr-defined]
