"""Two costs dbt 1.11 pays before every run's first node, in proportion to the project's size, removed
without changing what dbt writes, logs or runs.

- **The graph summary** (target/graph_summary.json, written at each compile, twice for `build`): dbt
  reads each node's type by serializing the whole node to a dict (`to_dict`) and taking one key of it.
  On 1,000 replicas (4,000 nodes with their sources and histories) that is 8,000 serializations, about
  0.25 s of every run. The type is an attribute of the node: read there, the file is the same.
- **The relation cache** (dbt's list of the relations in every schema a run selects a node in): each
  relation added makes a CacheAction event, which dbt writes nowhere unless asked to log cache events
  (`--log-cache-events`), yet builds all the same. On a schema of 4,000 relations (replicas, their
  staging, history and bookkeeping tables) the events cost about 0.3 s of every run. Unless cache events
  are logged, a relation is added without its event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from extract.runtime.dbt_replacements import in_place, put_in_place


def graph_summary(linker: Any, manifest: Any) -> dict[int, dict[str, Any]]:
    """What dbt's `Linker.get_graph_summary` returns: each node by its index, with its name, its type as
    dbt serializes it (the enum's value) and, when it has any, the indexes of its successors."""
    graph = linker.graph
    index = {name: number for number, name in enumerate(graph)}
    summary: dict[int, dict[str, Any]] = {}
    for name, number in index.items():
        kind = manifest.expect(name).resource_type
        entry: dict[str, Any] = {"name": name, "type": getattr(kind, "value", kind)}
        successors = [index[successor] for successor in graph.successors(name)]
        if successors:
            entry["succ"] = successors
        summary[number] = entry
    return summary


def install() -> None:
    """Put both in place of dbt's own, in the process that runs dbt (dbt imported)."""
    from dbt.adapters.cache import RelationsCache, _CachedRelation
    from dbt.compilation import Linker

    if in_place(Linker.get_graph_summary):
        return
    add_with_event: Callable[[Any, Any], None] = RelationsCache.add

    def get_graph_summary(self: Any, manifest: Any) -> dict[int, dict[str, Any]]:
        return graph_summary(self, manifest)

    def add(self: Any, relation: Any) -> None:
        if self.log_cache_events:
            add_with_event(self, relation)
            return
        cached = _CachedRelation(relation)
        with self.lock:
            self._setdefault(cached)

    replacements: list[tuple[type, str, Callable[..., Any]]] = [
        (Linker, "get_graph_summary", get_graph_summary),
        (RelationsCache, "add", add),
    ]
    put_in_place(replacements)
