"""What a reconcile of one table found and did, and the options it ran with."""

from __future__ import annotations

from dataclasses import dataclass, field

from extract.reconcile.classify import Repairs


@dataclass(frozen=True)
class ReconcileOptions:
    dry_run: bool = False
    allow_mass_delete: bool = False
    #: A new state for the stream, read before the comparison, that the run commits even when it finds the
    #: replica exact; with the reason the state audit gives (a Change Tracking version that expired).
    restart_at: str | None = None
    restart_reason: str | None = None


@dataclass
class ReconcileResult:
    table: str
    target: str
    run_id: int
    status: str  # exact, landed (repairs wait for the merge), reported (--dry-run)
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    boundary_deleted: int = 0
    left_to_sync: int = 0
    unsettled_ranges: int = 0
    vanished: int = 0
    rows_landed: int = 0
    ranges_compared: int = 0
    levels: int = 0
    #: Some keys of each kind of repair; withheld (how many, as text) unless --verbose.
    samples: dict[str, list[str] | str] = field(default_factory=dict)
    input_state: dict[str, object] | None = None
    output_state: dict[str, object] | None = None

    def fill(self, repairs: Repairs) -> None:
        self.inserted, self.updated, self.deleted = repairs.inserted, repairs.changed, repairs.deleted
        self.left_to_sync, self.unsettled_ranges = repairs.left_to_sync, repairs.unsettled
        self.samples = {kind: keys for kind, keys in repairs.samples.items()}

    def withhold_keys(self) -> None:
        """Key values reach the console only with --verbose: without it, each kind's sample says how many."""
        self.samples = {
            kind: keys if isinstance(keys, str) else f"{len(keys)} key(s): --verbose shows them"
            for kind, keys in self.samples.items()
        }


def summary(result: ReconcileResult) -> str:
    found = (
        f"{result.inserted:,} missing, {result.updated:,} different, "
        f"{result.deleted + result.boundary_deleted:,} deleted in the source"
    )
    then = {
        "exact": "the replica is exact",
        "reported": "dry run: nothing landed",
        "landed": "repairs landed; dbt build applies them",
        "failed": "failed",
    }[result.status]
    extra = f"; {result.left_to_sync:,} recent change(s) left to the sync" if result.left_to_sync else ""
    return f"run {result.run_id}: {found}{extra}; {then}"
