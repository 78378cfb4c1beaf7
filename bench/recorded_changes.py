"""The recorded-changes section of `make bench`: the bench table with 1% of its rows changed, a third of
those deleted, brought to the replica in one run by each reader, each timed as one command with the
merge alone:

- the clock-watermark sync, which reads the updated rows and cannot see the deletes;
- the reconcile after it, which finds the deletes by hashing every source row;
- the Change Tracking sync, which reads the changed keys' rows and tombstones the deleted ones;
- the CDC sync, which reads the last image of each changed key from the change rows.

Change Tracking and CDC are emulated in the stand-in source (extract/devtools). Each reader's change is
of other rows, of the same shape. For each it reports the rows it read from the source. The goals: the
Change Tracking sync takes at most 1.2 times the clock sync and is at least 10 times faster than the
sync and reconcile together.

`python -m bench.recorded_changes [--rows N]` runs this section alone against the bench's server.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from bench import databases, workload
from bench.alone import run_section
from bench.databases import BenchDatabases
from bench.measure import count_rows
from bench.report import print_table
from bench.tidemark_sync import MERGE, TidemarkProject
from extract.devtools.cdc import enable_table, install_cdc
from extract.devtools.change_tracking import enable_change_tracking, install_change_tracking

GOAL_VS_CLOCK = 1.2
GOAL_VS_RECONCILE = 10.0
HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,reader\n"

# Of every hundredth row (shifted by a round's offset): two in three updated, with a fresh stamp, the third
# deleted.
_UPDATE = """
update bench."Items"
set "Amount" = "Amount" + 1, "Status" = 'amended',
    "ModifiedDate" = cast(clock_timestamp() at time zone 'UTC' as timestamp(3))
where ("Id" + %(offset)s) %% %(every)s = 0 and ("Id" + %(offset)s) %% (3 * %(every)s) <> 0
"""
_DELETE = """delete from bench."Items" where ("Id" + %(offset)s) %% (3 * %(every)s) = 0"""

_LAST_MERGE = "select rows_deleted, rows_in_batch from _migration.merge_log order by merge_id desc limit 1"


def _change(source_url: str, percent: int, offset: int) -> dict[str, int]:
    values = {"offset": offset, "every": max(1, 100 // percent)}
    with psycopg.connect(source_url, autocommit=True) as conn:
        updated = conn.execute(_UPDATE, values).rowcount
        deleted = conn.execute(_DELETE, values).rowcount
        conn.execute('vacuum analyze bench."Items"')
    return {"updated": updated, "deleted": deleted}


def _merged(project: TidemarkProject) -> tuple[int, int]:
    """(rows deleted, rows in the batch) of the latest merge."""
    with psycopg.connect(project.target_url) as conn:
        row = conn.execute(_LAST_MERGE).fetchone()
    assert row is not None, "no merge logged"
    return int(row[0]), int(row[1])


def measure(
    bench_db: BenchDatabases,
    work: Path,
    rows: int,
    say: Callable[[str], None],
    percent: int = 1,
    section: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The section's figures, filled in `section` (when given) as each is timed: a failure later keeps them."""
    section = {} if section is None else section
    section.update({"rows": rows, "percent_changed": percent})
    bench_db.recreate()
    say(f'recorded changes: generating {rows:,} rows in bench."Items", Change Tracking and CDC on it')
    with psycopg.connect(bench_db.source_url, autocommit=True) as conn:
        workload.create(conn, rows)
        install_change_tracking(conn)
        enable_change_tracking(conn, workload.SCHEMA, workload.TABLE)
        install_cdc(conn)
        enable_table(conn, workload.SCHEMA, workload.TABLE)
    clock_seed = HEADER + "bench,Items,,,true,clock\n"
    project = TidemarkProject(work / "tidemark-recorded", bench_db.env, bench_db.target_url, clock_seed)
    say("recorded changes: the clock reader's first sync (not timed)")
    project.sync()
    section["clock_changes"] = _change(bench_db.source_url, percent, 0)
    bench_db.settle(vacuum=True)
    say("recorded changes: the clock-watermark sync")
    clock = project.sync()
    bench_db.settle()
    say("recorded changes: the reconcile that finds the deletes")
    reconciled = project.command("reconcile", "--table", "bench.Items", "--dbt", MERGE)
    deleted, batch = _merged(project)
    section["clock"] = {"seconds": clock.seconds, "rows_read": clock.rows_landed}
    section["reconcile"] = {
        "seconds": reconciled.seconds,
        # Every source row is hashed; the rows that differ are read again.
        "rows_read": count_rows(bench_db.source_url, 'bench."Items"') + batch,
        "rows_deleted": deleted,
    }
    for offset, reader in enumerate(("change_tracking", "cdc"), start=1):
        (project.root / "seeds" / "sync_tables.csv").write_text(HEADER + f"bench,Items,,,true,{reader}\n")
        say(f"recorded changes: the {reader} reader's first sync, of every row (not timed)")
        project.sync()
        section[f"{reader}_changes"] = _change(bench_db.source_url, percent, offset)
        bench_db.settle(vacuum=True)
        say(f"recorded changes: the {reader} sync")
        synced = project.sync()
        deleted, _ = _merged(project)
        section[reader] = {"seconds": synced.seconds, "rows_read": synced.rows_landed + deleted}
    held = count_rows(bench_db.target_url, '"{}"."{}"'.format(*project.replica()))
    source_rows = count_rows(bench_db.source_url, 'bench."Items"')
    if held != source_rows:
        raise RuntimeError(f"the replica holds {held:,} rows, the source {source_rows:,}")
    return section


def print_recorded_changes(results: dict[str, Any]) -> None:
    section = results.get("recorded_changes")
    if not section:
        return
    changes = section["change_tracking_changes"]
    changed = changes["updated"] + changes["deleted"]
    clock, reconcile, tracked = section["clock"], section["reconcile"], section["change_tracking"]
    captured = section["cdc"]
    title = (
        f"Recorded changes: {section['rows']:,} rows, {changed:,} changed ({changes['deleted']:,} of them"
        " deleted), one command each with the merge alone"
    )
    rows = [
        ("clock-watermark sync (no deletes)", f"{clock['seconds']:.1f}", f"{clock['rows_read']:,}"),
        ("reconcile after it (finds the deletes)", f"{reconcile['seconds']:.1f}", f"{reconcile['rows_read']:,}"),
        ("sync + reconcile", f"{clock['seconds'] + reconcile['seconds']:.1f}", ""),
        ("Change Tracking sync (deletes too)", f"{tracked['seconds']:.1f}", f"{tracked['rows_read']:,}"),
        ("CDC sync (deletes too)", f"{captured['seconds']:.1f}", f"{captured['rows_read']:,}"),
    ]
    print_table(title, ("", "seconds", "rows read from the source"), rows)
    vs_clock = tracked["seconds"] / clock["seconds"]
    vs_both = (clock["seconds"] + reconcile["seconds"]) / tracked["seconds"]
    print(f"  Change Tracking sync / clock sync: {vs_clock:.2f} (goal at most {GOAL_VS_CLOCK})")
    print(f"  sync + reconcile / Change Tracking sync: {vs_both:.1f} (goal at least {GOAL_VS_RECONCILE})")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recorded_changes", description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    args = parser.parse_args()
    if args.rows < 1000:
        parser.error(f"--rows must be at least 1000 (not {args.rows})")
    return run_section(
        "recorded_changes",
        f"recorded-changes-{args.rows}",
        lambda bench_db, say, section, _: measure(bench_db, databases.WORK_DIR, args.rows, say, section=section),
        print_recorded_changes,
    )


if __name__ == "__main__":
    sys.exit(main())
