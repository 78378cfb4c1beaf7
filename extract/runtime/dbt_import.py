"""dbt imported ahead, by the process that will run it, without taking the pass's CPU."""

from __future__ import annotations

import contextlib
import os
import threading

from extract.runtime import (
    dbt_connection_reuse,
    dbt_event_overheads,
    dbt_flow,
    dbt_node_overheads,
    dbt_run_overheads,
)
from extract.runtime.heap import long_lived_objects

#: The import thread's niceness (0 is the process's own, 19 the lowest priority).
IMPORT_NICENESS = 15
#: Set once `import_dbt` has put everything in place in this process (or the one it was forked from).
_IMPORTED = threading.Event()


def import_dbt() -> None:
    """dbt imported (its objects kept out of the collector's way), with the costs dbt_run_overheads,
    dbt_event_overheads and dbt_node_overheads cut, connections kept between nodes
    (dbt_connection_reuse), and dbt_flow's wait in place. Whether dbt is in `sys.modules` does not tell:
    a process forked from one that imported dbt on its own (a test's runner) has dbt without them."""
    if _IMPORTED.is_set():
        return
    with long_lived_objects():
        import dbt.cli.main  # noqa: F401
    dbt_run_overheads.install()
    dbt_event_overheads.install()
    dbt_node_overheads.install()
    dbt_connection_reuse.install()
    dbt_flow.install()
    _IMPORTED.set()


def dbt_imported() -> bool:
    """Whether `import_dbt` has run to its end."""
    return _IMPORTED.is_set()


def import_aside() -> threading.Thread:
    """dbt imported on a thread of low priority (`IMPORT_NICENESS`; on Linux a thread has its own): on a
    core the pass leaves idle it runs at full speed, and where the pass wants the core it takes a small
    share. Asked for by a pass of many tables only (DbtProcess.import_ahead_for): one with nothing to
    land, whose exit kills this process, loses a little to it (about 0.15 s on one table, not measurable
    on 1,000), and one that lands finds dbt imported sooner. Linux's idle policy
    (SCHED_IDLE) took 0.04 s and 0.08 s less from those passes but starved the import while the checks
    and the landing ran: on 1,000 tables with 10 changed, dbt started its run after the landing had
    ended, and the pass took 5.7 s against 5.2 to 5.4 s at niceness 10 to 15. The thread ends with the
    import; what dbt runs later runs at the process's priority (a thread cannot take back a priority it
    gave up, so the import cannot be sped up once the pass knows it needs dbt)."""

    def work() -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), IMPORT_NICENESS)
        try:
            import_dbt()
        except Exception:  # imported again on the first message, which then fails as dbt's import fails
            return

    thread = threading.Thread(target=work, name="dbt-import", daemon=True)
    thread.start()
    return thread
