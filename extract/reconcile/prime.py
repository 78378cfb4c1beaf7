"""After a large table's first sync and its merge: the replica's figures that its first reconcile would
compute, kept now (extract/reconcile/kept_figures.py). That reconcile then hashes the source alone, as
every later one does, instead of both sides' every row; the sync pays for hashing the replica once.

Only for a key of one whole-number column (its places by offset do not move with new keys), and once per
replica: one whose figures are kept already is left alone. Nothing of the source is read: after a first
sync the replica's lowest and highest keys are the source's. Where they are not any more when the
reconcile comes, it finds nothing kept under its own digest and hashes every row, as without this.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import psycopg

from extract.config.settings import Settings
from extract.core.errors import TidemarkError
from extract.core.observer import Note, Observer
from extract.lifecycle.run_result import RunResult
from extract.planning.table_plan import TablePlan
from extract.reconcile.boundary import replica_key_bounds
from extract.reconcile.guards import replica_rows
from extract.reconcile.hashes import row_hashes
from extract.reconcile.kept_figures import KeptFigures, kept_rows
from extract.reconcile.replica_side import compared_replica, comparison_session
from extract.reconcile.tree import HashSpace, Level
from extract.source.dialects import Dialect


def prime(
    settings: Settings, dialect: Dialect, plans: Mapping[str, TablePlan], observer: Observer, results: Iterable[object]
) -> None:
    """Of a pass's `results`, each first sync of at least TIDEMARK_RECONCILE_PRIME_ROWS rows whose replica
    has no figures kept gets them. A failure leaves that table's first reconcile to hash every row: it is
    said, and the pass goes on."""
    for result in results:
        if not isinstance(result, RunResult) or result.table not in plans or result.migration_type != "full":
            continue
        if not settings.reconcile.prime_rows or result.rows_landed < settings.reconcile.prime_rows:
            continue
        try:
            ranges = _prime(settings, dialect, plans[result.table])
        except (psycopg.Error, TidemarkError) as exc:
            observer(Note(result.table, f"its figures for the first reconcile were not kept ({exc})"))
            continue
        if ranges is not None:
            observer(Note(result.table, f"the replica's figures of {ranges:,} ranges kept for its first reconcile"))


def _prime(settings: Settings, dialect: Dialect, plan: TablePlan) -> int | None:
    """As reconcile_repairs compares the replica, its first level only; the number of ranges kept."""
    names, reconcile = plan.names, settings.reconcile
    with psycopg.connect(settings.target.libpq_url, autocommit=False) as conn:
        if kept_rows(conn, names) is not None:
            return None
        comparison_session(conn)
        bounds = replica_key_bounds(conn, plan)
        hashes = row_hashes(dialect, plan, bounds)
        if bounds is None or not hashes.replica_ordered_key:
            return None
        total = replica_rows(conn, plan)
        space = HashSpace.of(reconcile.factor, hashes.key_bits)
        side, last_place = compared_replica(plan, hashes, bounds)
        kept = KeptFigures(conn, names, side, space, True, lambda _: None, last_place)
        return len(kept.first_level(Level(space.first_depth(total, reconcile.leaf_rows), None)))
