"""What a sync of one stream gives back: its run, what it landed, and the states it read and commits."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RunResult:
    table: str
    target: str
    run_id: int
    migration_type: str
    rows_landed: int
    watermark_used: str | None
    watermark_candidate: str
    #: What this run changed in the replica to follow the source's schema (extract/evolution).
    schema_changes: list[str]
    #: Seed 001's contract: the state the run read from, and the state its merge commits.
    input_state: dict[str, object] | None = None
    output_state: dict[str, object] | None = None
    #: A file source's files that could not be read, each with why: the others landed.
    failed_files: list[str] = field(default_factory=list)
