"""What a sync of one stream gives back: its run, what it landed, and the states it read and commits."""

from __future__ import annotations

from dataclasses import dataclass, field

from extract.state.run_log import RunRecord


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

    @classmethod
    def of(
        cls, table: str, record: RunRecord, schema_changes: list[str], failed_files: list[str] | None = None
    ) -> RunResult:
        """The result of the run `record` of `table` (its replica is the run's), as it ended."""
        return cls(
            table=table,
            target=record.table_key,
            run_id=record.run_id,
            migration_type=record.migration_type,
            rows_landed=record.rows_landed or 0,
            watermark_used=record.watermark_used,
            watermark_candidate=record.watermark_candidate or "",
            schema_changes=schema_changes,
            input_state=record.input_state,
            output_state=record.output_state,
            failed_files=failed_files or [],
        )
