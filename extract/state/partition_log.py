"""The partition plan of a run in the state schema's partition_log: written before reading, ticked off as each lands.

Its positions are key values: stored through tidemark_protect (encrypted in a protected schema, see
extract/state/protection.py), read through tidemark_reveal."""

from __future__ import annotations

import json
from dataclasses import dataclass

import psycopg

from extract.core.state_schema import StateSchema
from extract.partitions.plan import Partition


@dataclass(frozen=True)
class Progress:
    partitions_landed: int
    rows_landed: int
    #: Where the landed prefix of the plan ends: partitions up to here all landed.
    last_position: str | None


def _position(values: tuple[str, ...] | None) -> str | None:
    return None if values is None else json.dumps(list(values))


def _values(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(str(v) for v in json.loads(text))


def record_plan(conn: psycopg.Connection, state: StateSchema, run_id: int, partitions: list[Partition]) -> None:
    """Insert the plan; the caller commits it together with the run event that announces it."""
    with conn.cursor() as cursor:
        cursor.executemany(
            state.sql(
                "insert into {partition_log} (run_id, partition_no, segment, start_position, end_position)"
                " values (%s, %s, %s, {tidemark_protect}(%s), {tidemark_protect}(%s))"
            ),
            [(run_id, p.number, p.segment, _position(p.start), _position(p.end)) for p in partitions],
        )


def load_plan(conn: psycopg.Connection, state: StateSchema, run_id: int) -> tuple[list[Partition], set[int]]:
    """A run's partitions in order, and the numbers of those that landed."""
    rows = conn.execute(
        state.sql(
            "select partition_no, segment, {tidemark_reveal}(start_position), {tidemark_reveal}(end_position),"
            " landed_at is not null from {partition_log} where run_id = %s order by partition_no"
        ),
        (run_id,),
    ).fetchall()
    conn.commit()
    partitions = [Partition(r[0], r[1], _values(r[2]), _values(r[3])) for r in rows]
    return partitions, {r[0] for r in rows if r[4]}


def progress(conn: psycopg.Connection, state: StateSchema, run_id: int) -> Progress:
    rows = conn.execute(
        state.sql(
            "select partition_no, segment, {tidemark_reveal}(end_position), rows_landed, landed_at is not null"
            " from {partition_log} where run_id = %s order by partition_no"
        ),
        (run_id,),
    ).fetchall()
    conn.commit()
    landed = [r for r in rows if r[4]]
    prefix_end: str | None = None
    for number, segment, end, _, is_landed in rows:
        if not is_landed:
            break
        # "through": the position the landed prefix reaches, null for the end of its segment.
        prefix_end = json.dumps({"segment": segment, "partition": number, "through": json.loads(end) if end else None})
    return Progress(len(landed), sum(int(r[3] or 0) for r in landed), prefix_end)


def mark_landed_jdbc(state: StateSchema) -> str:
    """Run by the landing task (JDBC) in the transaction of its COPY: parameters rows, run id, partition."""
    return state.text(
        "update {partition_log} set rows_landed = ?, landed_at = clock_timestamp()"
        " where run_id = ? and partition_no = ? and landed_at is null"
    )
