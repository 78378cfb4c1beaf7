"""Whether tidemark's seeds are in the target. The state model reads them, and a dbt command that loads no
seeds (`run`) fails on it in a project whose seeds were never built: its failure then says how to load them."""

from __future__ import annotations

import psycopg

from extract.config.seed_schema import TIDEMARK_SEEDS
from extract.config.urls import DatabaseUrl
from extract.core.state_schema import StateSchema


def unloaded_seeds_hint(target: DatabaseUrl, state: StateSchema) -> str:
    """'; the seeds … were never loaded …' when some of tidemark's seeds are missing from the target, else ""
    (also when the target cannot be asked: the failure above it says enough)."""
    try:
        with psycopg.connect(target.libpq_url, autocommit=True) as conn:
            missing = [seed for seed in TIDEMARK_SEEDS if not state.has(conn, seed)]
    except psycopg.Error:
        return ""
    if not missing:
        return ""
    return (
        f"; the seeds {', '.join(missing)} were never loaded into the target: `--dbt build` loads them"
        " (or `tidemark dbt seed` once)"
    )
