"""Python's cyclic garbage collector around dbt's large, long-lived objects.

dbt's parsed project (a manifest of every node) is hundreds of thousands of objects that live as long
as the process. Each full collection walks all of them: reading the parse of a project of 1,000 tables
took twice as long with the collector on (2.6 s against 1.3 s), and every later collection of a run
walks the manifest again. So the collector is paused while dbt is imported and the project read, and
what is alive then is frozen: later collections look only at what was made after it.

Frozen garbage is never freed. Reading a saved parse leaves little (6,000 of 675,000 objects on that
project); a full parse leaves most of what it made (3.5 of 4.2 million): a block that made more
objects than `COLLECT_ABOVE` is collected once before its objects are frozen.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Objects a paused block may leave behind without a collection before they are frozen.
COLLECT_ABOVE = 1_000_000

#: How many objects were frozen before tidemark first froze any (None: it has not yet). A process forked
#: from one that froze its own objects (a fork server) must not collect them: their connections are the
#: parent's.
_frozen_before_ours: int | None = None


@contextmanager
def long_lived_objects() -> Iterator[None]:
    """Pause the collector while the block builds objects meant to live (process-wide: other threads'
    garbage waits too, for the few seconds of a parse), then freeze them out of later collections."""
    global _frozen_before_ours
    if _frozen_before_ours is None:
        _frozen_before_ours = gc.get_freeze_count()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] > COLLECT_ABOVE:
            gc.collect()
        gc.freeze()
        if was_enabled:
            gc.enable()


def release_frozen() -> None:
    """Give frozen objects back to the collector, and collect: before a new parse replaces the old one
    (in a long-running process), whose cycles would otherwise never be freed. Only when every frozen object
    is tidemark's: not before it froze any, nor when others froze theirs first (thawing would free those)."""
    if _frozen_before_ours != 0:
        return
    gc.unfreeze()
    gc.collect()
