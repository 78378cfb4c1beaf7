"""A run of dbt that merges each table as soon as it has landed, while the others still land.

On a pass that lands many tables, dbt's run is seconds of Python per hundred nodes, and the landing is
mostly waiting on the databases and the JVM: one after the other, neither uses the second core. So
the run is started for every table the pass is about to land (runtime/dbt_gate.py), and goes on at
once: each replica model of a table that is landing waits, before dbt starts it, for the pass's word
on that table. A table that landed is merged
(its history and tests follow as dbt orders them); one that failed, found nothing after all, or whose
schema changed (its files are written again after the landing) is skipped with what follows only from
it (its history, its tests), and left to the run the pass makes after the landing. A node skipped so
is not a failure of the run. The pass lands its tables in dbt's order of the replicas (by name), so
that dbt seldom waits; dbt's threads take the histories of the tables landed meanwhile
(runtime/dbt_flow_order.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from multiprocessing.connection import Connection
from typing import Any

from extract.runtime.dbt_flow_order import FlowOrder
from extract.runtime.dbt_replacements import in_place, put_in_place

Word = tuple[Any, ...]


class Flow(FlowOrder):
    """The word on each table of a flowing run (by its replica model's name), as the pass sends it, and
    the nodes skipped for it."""

    def __init__(self, landing: Collection[str]) -> None:
        super().__init__()
        self._landing = frozenset(landing)
        self._words: dict[str, bool] = {}
        self._over = False
        self._heard = threading.Condition()
        #: The replicas skipped, for the pass to merge after the landing if they still need it.
        self.skipped: set[str] = set()
        #: The nodes skipped (by unique id): those replicas and what follows only from them.
        self._skipped_nodes: set[str] = set()

    def hear(self, connection: Connection) -> Word:
        """The pass's words until the landing is over: ("landed", model, mergeable) for each table, then
        ("flowed",), or ("drop",) when the pass failed. A table not heard of by then is not merged."""
        word: Word = ("drop",)
        try:
            while True:
                message = connection.recv()
                if message[0] == "landed":
                    with self._heard:
                        self._words[message[1]] = bool(message[2])
                        self._heard.notify_all()
                elif message[0] in {"flowed", "drop"}:
                    word = message
                    break
        except (EOFError, OSError):
            pass  # the pass has ended: nothing more will land
        with self._heard:
            self._over = True
            self._heard.notify_all()
        return word

    def skips(self, node: Any) -> bool:
        """Whether dbt is to skip `node`: a replica whose table is landing, once the pass has said it did
        not land as parsed (waits until it has said); a node whose parents (sources aside) were all
        skipped."""
        kind = str(getattr(node.resource_type, "value", node.resource_type))
        if kind == "model" and node.name in self._landing:
            with self._heard:
                self._heard.wait_for(lambda: node.name in self._words or self._over)
                skip = not self._words.get(node.name, False)
                if skip:
                    self.skipped.add(node.name)
        else:
            depends_on = getattr(getattr(node, "depends_on", None), "nodes", None) or []  # a seed has none
            parents = [parent for parent in depends_on if not parent.startswith("source.")]
            skip = bool(parents) and all(parent in self._skipped_nodes for parent in parents)
        if skip:
            with self._heard:
                self._skipped_nodes.add(node.unique_id)
        return skip

    def skipped_here(self, unique_id: str) -> bool:
        """Whether the node was skipped by this flow (whose children it decides itself: `skips`)."""
        return unique_id in self._skipped_nodes

    def counted(self, results: list[Any]) -> list[Any]:
        """dbt's results but for the nodes skipped here, which are no failure of the run."""
        return [result for result in results if result.node.unique_id not in self._skipped_nodes]


#: The flow of the run under way in this process (one dbt run at a time).
_active: list[Flow] = []


def flowing(flow: Flow | None) -> None:
    """Make `flow` the run's (None: the run is over)."""
    _active[:] = [] if flow is None else [flow]


def install() -> None:
    """Make dbt's task ask the active flow before it starts a node, leave the children of a node the
    flow skipped to it, and count its results without those nodes; make dbt's queue hand out nodes in
    the flow's order (dbt imported)."""
    from dbt.graph.queue import GraphQueue
    from dbt.task.runnable import GraphRunnableTask

    dbt_call_runner: Callable[[Any, Any], Any] = GraphRunnableTask.call_runner
    if in_place(dbt_call_runner):
        return
    dbt_interpret: Callable[[Any, Any], bool] = GraphRunnableTask.interpret_results.__func__  # type: ignore[attr-defined]
    dbt_get: Callable[..., Any] = GraphQueue.get
    dbt_mark: Callable[..., None] = GraphRunnableTask._mark_dependent_errors

    def call_runner(task: Any, runner: Any) -> Any:
        if _active and _active[0].skips(runner.node):
            runner.do_skip(cause=None)  # dbt says SKIP, as for the children of a failed node
        return dbt_call_runner(task, runner)

    def mark_dependent_errors(task: Any, node_id: str, result: Any, cause: Any) -> None:
        # dbt's build skips every descendant of a skipped node, the state model of all tables with it.
        if not (_active and _active[0].skipped_here(node_id)):
            dbt_mark(task, node_id, result, cause)

    def interpret_results(task_class: Any, results: Any) -> bool:
        counted = _active[0].counted(results) if _active and results is not None else results
        return dbt_interpret(task_class, counted)

    def get(queue: Any, block: bool = True, timeout: float | None = None) -> Any:
        if _active:
            _active[0].before_taking(queue)
        return dbt_get(queue, block, timeout)

    put_in_place(
        [
            (GraphRunnableTask, "call_runner", call_runner),
            (GraphRunnableTask, "interpret_results", classmethod(interpret_results)),
            (GraphRunnableTask, "_mark_dependent_errors", mark_dependent_errors),
            (GraphQueue, "get", get),
        ]
    )
