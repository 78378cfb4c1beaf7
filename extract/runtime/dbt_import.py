"""dbt imported ahead, by the process that will run it, without taking the pass's CPU."""

from __future__ import annotations

import contextlib
import os
import threading

from extract.runtime import dbt_run_overheads
from extract.runtime.heap import long_lived_objects


def import_dbt() -> None:
    """dbt imported (its objects kept out of the collector's way), with dbt_run_overheads in place."""
    with long_lived_objects():
        import dbt.cli.main  # noqa: F401
    dbt_run_overheads.install()


def import_aside() -> threading.Thread:
    """dbt imported on a thread of idle priority (Linux's SCHED_IDLE; a thread has its own): it takes only
    the CPU the pass leaves, so a pass with nothing to land, whose exit kills this process, loses little
    to it (0.06 s on one table, 0.2 s on 1,000), and one that lands finds dbt imported a second sooner.
    The thread ends with the import; what dbt runs later runs at the process's priority."""

    def work() -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setscheduler(threading.get_native_id(), os.SCHED_IDLE, os.sched_param(0))
        try:
            import_dbt()
        except Exception:  # imported again on the first message, which then fails as dbt's import fails
            return

    thread = threading.Thread(target=work, name="dbt-import", daemon=True)
    thread.start()
    return thread
