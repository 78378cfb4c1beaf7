"""How a reconcile bisects and what it refuses to delete: settings from the environment (spec.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from extract.config import spec


@dataclass(frozen=True)
class ReconcileSettings:
    factor: int
    leaf_rows: int
    max_delete_share: float  # 0..1
    max_delete_rows: int
    driver_rows: int
    source_queries: int
    pairs_rows: int
    #: A first sync of at least this many rows keeps the replica's figures for its first reconcile (0: none).
    prime_rows: int


def reconcile_settings(env: Mapping[str, str]) -> ReconcileSettings:
    return ReconcileSettings(
        factor=spec.RECONCILE_FACTOR.value(env),
        leaf_rows=spec.RECONCILE_LEAF_ROWS.value(env),
        max_delete_share=spec.RECONCILE_MAX_DELETE_SHARE.value(env),
        max_delete_rows=spec.RECONCILE_MAX_DELETE_ROWS.value(env),
        driver_rows=spec.RECONCILE_DRIVER_ROWS.value(env),
        source_queries=spec.RECONCILE_SOURCE_QUERIES.value(env),
        pairs_rows=spec.RECONCILE_PAIRS_ROWS.value(env),
        prime_rows=spec.RECONCILE_PRIME_ROWS.value(env),
    )
