"""The reconcile section of `make bench`: differences a cursor cannot see, planted in bench.Items (a
third each: deletes, inserts stamped in the past, updates that leave the cursor) at 0, 100, 10,000
and 1% of the rows. At each level, on the same differences and in this order: `count(*)` on both
sides; a full key scan (Sling's `delete_missing`: every source key copied into the target, then
anti-joins both ways); reladiff finding them; tidemark's reconcile finding and repairing them (with
the merge, in one command).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from bench.databases import BenchDatabases
from bench.measure import Measured, run
from bench.peers.runner import BENCH_VENV
from bench.tidemark_sync import MERGE, PYTHON, REPO, TidemarkProject

FIXED_LEVELS = (0, 100, 10_000)

_DELETE = 'delete from bench."Items" where "Id" in (select generate_series(%s::bigint, %s::bigint, %s::bigint))'
_BACKDATE = """
update bench."Items" set "Note" = 'corrected ' || "Id"
where "Id" in (select generate_series(%s::bigint, %s::bigint, %s::bigint))
"""
_INSERT_LATE = """
insert into bench."Items"
select i, 1, 1.00, 'late', 'committed late', timestamp '2026-01-01'
from generate_series(%s::bigint, %s::bigint) as i
"""


def levels(rows: int) -> list[int]:
    return [*FIXED_LEVELS, rows // 100]


def plant(source_url: str, rows: int, count: int, level: int) -> dict[str, int]:
    """`count` differences spread over the key range; `level` shifts them off earlier levels' keys."""
    third = count // 3
    planted = {"deleted": 0, "updated": 0, "inserted": 0}
    with psycopg.connect(source_url, autocommit=True) as conn:
        if third:
            stride = max(1, rows // third)
            planted["deleted"] = conn.execute(_DELETE, (1 + level, rows, stride)).rowcount
            planted["updated"] = conn.execute(_BACKDATE, (1 + level + stride // 2, rows, stride)).rowcount
        inserts = count - 2 * third
        if inserts:
            row = conn.execute('select max("Id") from bench."Items"').fetchone()
            top = int(row[0]) if row and row[0] is not None else 0
            planted["inserted"] = conn.execute(_INSERT_LATE, (top + 1, top + inserts)).rowcount
        conn.execute('analyze bench."Items"')
    return planted


def _timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


SOURCE_TABLE = sql.Identifier("bench", "Items")


def count_both(source_url: str, target_url: str, replica: sql.Identifier) -> tuple[float, tuple[int, int]]:
    def counts() -> tuple[int, int]:
        found = []
        for url, table in ((source_url, SOURCE_TABLE), (target_url, replica)):
            with psycopg.connect(url) as conn:
                row = conn.execute(sql.SQL("select count(*) from {}").format(table)).fetchone()
                found.append(int(row[0]) if row else 0)
        return found[0], found[1]

    return _timed(counts)


def key_scan(source_url: str, target_url: str, replica: sql.Identifier) -> tuple[float, tuple[int, int]]:
    """Every source key streamed into a temporary table of the target, then the keys only in the
    replica (to delete) and only in the source (to insert) counted."""

    def scan() -> tuple[int, int]:
        with psycopg.connect(source_url) as source, psycopg.connect(target_url) as target:
            target.execute("create temp table source_keys (id bigint)")
            with (
                source.cursor().copy('copy (select "Id" from bench."Items") to stdout') as out,
                target.cursor().copy("copy source_keys from stdin") as into,
            ):
                for block in out:
                    into.write(block)
            target.execute("analyze source_keys")
            absent = sql.SQL("select count(*) from {} as a where not exists (select 1 from {} as b where b.id = a.id)")
            keys = sql.Identifier("source_keys")
            only_replica = target.execute(absent.format(replica, keys)).fetchone()
            only_source = target.execute(absent.format(keys, replica)).fetchone()
        return int(only_replica[0]) if only_replica else 0, int(only_source[0]) if only_source else 0

    return _timed(scan)


def reladiff(databases: BenchDatabases, replica: tuple[str, str]) -> tuple[Measured, dict[str, Any]]:
    command = [
        str(BENCH_VENV / "bin" / "python"),
        str(REPO / "bench" / "peers" / "reladiff_diff.py"),
        "--source",
        databases.source_url,
        "--target",
        databases.target_url,
        "--replica",
        ".".join(replica),
        "--threads",
        "2",
    ]
    measured = run(command, databases.env, REPO, "reladiff")
    return measured, json.loads(measured.output.strip().splitlines()[-1])


def nothing_planted_seconds(project: TidemarkProject, databases: BenchDatabases) -> float:
    """Seconds of a reconcile with nothing planted, after a checkpoint."""
    databases.settle()
    measured, _ = tidemark_reconcile(project)
    return measured.seconds


def tidemark_reconcile(project: TidemarkProject) -> tuple[Measured, dict[str, Any]]:
    command = [PYTHON, "-m", "extract", "reconcile", "--table", "bench.Items", "--allow-mass-delete"]
    measured = run([*command, "--dbt", MERGE, "--json"], project.env, REPO, "tidemark reconcile")
    text = measured.output
    report, _ = json.JSONDecoder().raw_decode(text[text.index("{") :])
    table: dict[str, Any] = report["tables"][0]
    return measured, table


def measure(
    project: TidemarkProject,
    databases: BenchDatabases,
    rows: int,
    say: Callable[[str], None],
    peers: bool = True,
    section: dict[str, Any] | None = None,
    on_peer_failure: Callable[[str, Exception], None] | None = None,
    after_changes: bool = False,
) -> dict[str, Any]:
    """Every level's figures, put in `section` (when given) as each level is measured; first, the one
    reconcile of the replica as it stands: `first_seconds`, of a fresh replica, or with
    `after_changes` `after_changes_seconds`, of a replica incremental rounds changed in every key range
    (the figures its first sync kept hold for none). Without `peers`, reladiff (installed with
    them) is left out; a level where it fails says so (`reladiff_failed`), is reported to
    `on_peer_failure`, and the levels go on (without `on_peer_failure`, its failure ends the section)."""
    section = {} if section is None else section
    replica_names = project.replica()
    replica = sql.Identifier(*replica_names)
    which = "since the rounds changed the replica" if after_changes else "of the fresh replica"
    say(f"reconcile: the first one {which}")
    section["after_changes_seconds" if after_changes else "first_seconds"] = nothing_planted_seconds(project, databases)
    found: list[dict[str, Any]] = []
    section["levels"] = found
    for level, count in enumerate(levels(rows)):
        planted = plant(databases.source_url, rows, count, level)
        say(f"reconcile: {sum(planted.values()):,} differences planted {planted}")
        databases.settle()
        counted = count_both(databases.source_url, databases.target_url, replica)
        scanned = key_scan(databases.source_url, databases.target_url, replica)
        theirs, their_report, their_failure = None, None, None
        if peers:
            try:
                theirs, their_report = reladiff(databases, replica_names)
            except Exception as exc:
                if on_peer_failure is None:
                    raise
                their_failure = f"{type(exc).__name__}: {exc}"
                on_peer_failure(f"reladiff at {sum(planted.values()):,} differences", exc)
        ours, our_report = tidemark_reconcile(project)
        found.append(
            {
                "differences": sum(planted.values()),
                "planted": planted,
                "count_seconds": counted[0],
                "counts": list(counted[1]),
                "key_scan_seconds": scanned[0],
                "key_scan_found": list(scanned[1]),
                "reladiff_seconds": None if theirs is None else theirs.seconds,
                "reladiff_keys": None if their_report is None else their_report["keys_different"],
                "reladiff_failed": their_failure,
                "tidemark_seconds": ours.seconds,
                "tidemark_peak_rss_driver": ours.peak_rss_main,
                "tidemark_found": {k: our_report[k] for k in ("inserted", "updated", "deleted", "boundary_deleted")},
                "tidemark_levels": our_report.get("levels"),
            }
        )
    return section


def memory_probe(project: TidemarkProject, databases: BenchDatabases, rows: int) -> list[dict[str, int]]:
    """Peak driver memory of a reconcile of `rows` rows at each level's differences, planted as `measure`
    plants them, after a first reconcile: what a larger table's levels are compared with."""
    tidemark_reconcile(project)
    peaks = []
    for level, count in enumerate(levels(rows)):
        planted = plant(databases.source_url, rows, count, level)
        databases.settle()
        measured, _ = tidemark_reconcile(project)
        peaks.append({"differences": sum(planted.values()), "peak_rss_driver": measured.peak_rss_main})
    return peaks


def level_peaks(section: dict[str, Any]) -> list[dict[str, int]]:
    """The driver's peak at each level `measure` measured, as `memory_probe` gives them."""
    return [
        {"differences": level["differences"], "peak_rss_driver": level["tidemark_peak_rss_driver"]}
        for level in section["levels"]
    ]


def memory_figures(peaks: list[dict[str, int]]) -> dict[str, Any]:
    """A size's entry of `driver_memory`, for the reconcile: its peak at each level, and the highest."""
    return {"reconcile_levels": peaks, "reconcile_peak_rss_driver": max(level["peak_rss_driver"] for level in peaks)}
