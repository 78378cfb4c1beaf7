"""Which dbt nodes a pass's `--dbt ARGS` runs: the replicas with runs waiting for a merge and what
follows from them, unless the arguments choose nodes themselves."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

#: dbt's options that choose nodes, and the commands that take them.
SELECTION_OPTIONS = frozenset({"--select", "-s", "--models", "-m", "--exclude", "--selector", "--inline"})
SELECTING_COMMANDS = frozenset({"build", "run", "test", "snapshot", "compile", "seed", "list", "ls"})

#: The materialization of every replica model tidemark generates (dbt_package/macros/distinct_merge/).
REPLICA_MATERIALIZATION = "tidemark_replica"


def chooses_nodes(args: list[str]) -> bool:
    """Whether `args` say which nodes to run themselves (or run a command that runs no nodes)."""
    if args[0] not in SELECTING_COMMANDS:
        return True
    return any(a in SELECTION_OPTIONS or a.split("=", 1)[0] in SELECTION_OPTIONS for a in args)


def arguments_for(args: list[str], models: Collection[str], every_replica: Collection[str] = ()) -> list[str] | None:
    """`args` with a selection of `models` (the replicas with runs waiting for a merge) and what follows
    from them (their history, the state model, their tests), and the seed of the configured tables that
    the state model reads. Arguments that choose nodes themselves are kept as they are. None: nothing
    waits, and dbt need not run.

    When `models` are all of the project's replicas (`every_replica`, as a first pass has them), they are
    selected as one: dbt matches each selector against every node, so a thousand names would cost a
    thousand scans of a project of thousands of nodes (over a minute), where one selector costs one."""
    if chooses_nodes(args):
        return args
    if not models:
        return None
    if every_replica and set(models) >= set(every_replica):
        return [*args, "--select", f"config.materialized:{REPLICA_MATERIALIZATION}+", "sync_tables"]
    return [*args, "--select", *(f"{model}+" for model in sorted(models)), "sync_tables"]


def replica_models(manifest: Any) -> set[str]:
    """The names of the replica models of dbt's parsed `manifest` (none: not parsed)."""
    nodes = getattr(manifest, "nodes", None) or {}
    return {
        node.name
        for node in nodes.values()
        if getattr(getattr(node, "config", None), "materialized", None) == REPLICA_MATERIALIZATION
    }
