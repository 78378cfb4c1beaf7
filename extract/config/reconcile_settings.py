"""How a reconcile bisects and what it refuses to delete: settings from the environment."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from extract.core.errors import TidemarkError

#: A differing range splits into this many (reladiff splits by 32 too).
DEFAULT_FACTOR = "32"
#: A differing range of at most this many rows on each side is compared key by key.
DEFAULT_LEAF_ROWS = "256"
#: A source of at most this many rows answers a reconcile's queries from the driver, in one query each:
#: the answers are aggregates, and starting Spark costs more than the parallel scan saves (1,000,000
#: rows: 1.9 s from the driver, 9.4 s through 20 Spark tasks on two cores).
DEFAULT_DRIVER_ROWS = "2000000"
#: A reconcile refuses to delete more than this share of a replica, unless --allow-mass-delete.
DEFAULT_MAX_DELETE_SHARE = "10%"
#: The most rows whose (key, hash) pairs are fetched at once: differing ranges holding more are
#: compared in turns, so the driver's memory stays bounded however dense the differences.
DEFAULT_PAIRS_ROWS = "1000000"
_SHARE = re.compile(r"^(?P<number>\d{1,3}(?:\.\d{1,6})?)(?P<percent>%?)$")


@dataclass(frozen=True)
class ReconcileSettings:
    factor: int
    leaf_rows: int
    max_delete_share: float  # 0..1
    driver_rows: int
    pairs_rows: int = int(DEFAULT_PAIRS_ROWS)


def _factor(text: str) -> int:
    value = int(text) if text.strip().isdigit() else 0
    if value < 2 or value > 1024 or value & (value - 1):
        raise TidemarkError(f"TIDEMARK_RECONCILE_FACTOR must be a power of two from 2 to 1024, not {text!r}")
    return value


def _leaf_rows(text: str) -> int:
    value = int(text) if text.strip().isdigit() else 0
    if not 1 <= value <= 1_000_000:
        raise TidemarkError(f"TIDEMARK_RECONCILE_LEAF_ROWS must be a whole number from 1 to 1,000,000, not {text!r}")
    return value


def _driver_rows(text: str) -> int:
    value = int(text) if text.strip().isdigit() else -1
    if value < 0:
        raise TidemarkError(f"TIDEMARK_RECONCILE_DRIVER_ROWS must be a whole number of rows, not {text!r}")
    return value


def _pairs_rows(text: str) -> int:
    value = int(text) if text.strip().isdigit() else 0
    if not 1000 <= value <= 100_000_000:
        raise TidemarkError(
            f"TIDEMARK_RECONCILE_PAIRS_ROWS must be a whole number from 1,000 to 100,000,000, not {text!r}"
        )
    return value


def _share(text: str) -> float:
    match = _SHARE.match(text.strip())
    value = -1.0 if match is None else float(match["number"]) / (100 if match["percent"] else 1)
    if not 0 <= value <= 1:
        raise TidemarkError(
            f"TIDEMARK_RECONCILE_MAX_DELETE_SHARE must be a share of the replica such as 10% or 0.1, not {text!r}"
        )
    return value


def reconcile_settings(env: Mapping[str, str]) -> ReconcileSettings:
    return ReconcileSettings(
        factor=_factor(env.get("TIDEMARK_RECONCILE_FACTOR", DEFAULT_FACTOR)),
        leaf_rows=_leaf_rows(env.get("TIDEMARK_RECONCILE_LEAF_ROWS", DEFAULT_LEAF_ROWS)),
        max_delete_share=_share(env.get("TIDEMARK_RECONCILE_MAX_DELETE_SHARE", DEFAULT_MAX_DELETE_SHARE)),
        driver_rows=_driver_rows(env.get("TIDEMARK_RECONCILE_DRIVER_ROWS", DEFAULT_DRIVER_ROWS)),
        pairs_rows=_pairs_rows(env.get("TIDEMARK_RECONCILE_PAIRS_ROWS", DEFAULT_PAIRS_ROWS)),
    )
