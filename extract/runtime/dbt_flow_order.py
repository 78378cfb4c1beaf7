"""The order in which dbt's threads take the nodes of a flowing run (runtime/dbt_flow.py): the history
and the tests of a table that has landed before the replicas of the tables still landing.

dbt takes ready nodes by their depth in the graph (lowest first), and hands each to its threads' own
queue (first in, first out) as soon as it is ready. In a flow every replica is ready from the start:
all of them would be handed out, each waiting for its table, before any history could come. So the
depths of the nodes that follow a replica are put below every replica's (in the same order among
themselves), and dbt takes a node off its queue only once one of its threads is free.
"""

from __future__ import annotations

import threading
from typing import Any


class FlowOrder:
    """What a flow does to dbt's queue before dbt takes a node off it."""

    def __init__(self) -> None:
        self._ordering = threading.Lock()
        self._ordered = False
        #: dbt's threads (its opening event says how many).
        self.threads = 1

    def before_taking(self, queue: Any) -> None:
        """Put followers first (once), then wait until one of dbt's threads is free."""
        with self._ordering:
            if not self._ordered:
                self._ordered = True
                scores: dict[Any, int] = queue._scores
                deepest = max(scores.values(), default=0)
                for node, score in scores.items():
                    if score > 0:
                        scores[node] = score - deepest - 1
        with queue.lock:
            queue.some_task_done.wait_for(lambda: len(queue.in_progress) < self.threads)
