"""`python -m bench.asof_history [--keys N] [--dates N]`: applying snapshots to the as-of history.

Lands `--dates` full snapshots of a table of `--keys` keys (1,000,000 and 30 by
default) in random date order, then times the `dbt run` of the history model that
applies them all. Each day about 1% of keys change for good, 0.5% change for that
day only, and 1% are absent (and come back later), so versions open, close, split
and reopen. The same snapshots are then applied in date order, and the two
histories must be equal. The snapshots are generated straight into the landing
table: the extract's landing speed is measured by `python -m bench`.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from bench import databases, report, workload
from bench.measure import Measured, run
from bench.tidemark_sync import DBT, REPO, TidemarkProject

SYNC_TABLES = "source_schema,source_table,cursor_column,primary_key,enabled,asof_history\nbench,Items,,,true,true\n"
FIRST_DATE = date(2026, 1, 1)

# Day `day` of key i: the source row with a lasting change once (1% of keys a day), a
# one-day status (0.5%), and absent on 1% of days.
_LAND = """
insert into {landing} (id, customerid, amount, status, note, modifieddate, _tidemark_run_id, _tidemark_page)
select
    i.id,
    i.customerid,
    i.amount + floor((%(day)s + i.id %% 100) / 100),
    case when (i.id * 7 + %(day)s) %% 200 = 0 then 'on hold' else i.status end,
    i.note,
    i.modifieddate,
    %(run_id)s,
    1
from {replica} as i
where (i.id * 31 + %(day)s) %% 100 <> 0
"""

_LOG = """
insert into _migration.snapshot_log (run_id, table_key, as_of, origin, status, rows_landed, started_at, landed_at)
values (%s, %s, %s, 'bench', 'landed', %s, now(), now())
"""


def _say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


class Tables:
    """The replica, its snapshot landing table and its as-of history, named as the extract named them."""

    def __init__(self, schema: str, table: str) -> None:
        self.table_key = f"{schema}.{table}"
        self.model = f"{schema}__{table}__asof_history"
        self.replica = sql.Identifier(schema, table)
        self.landing = sql.Identifier(schema, "snap__" + table)
        self.history = sql.Identifier(schema, table + "__asof_history")


def _reset(conn: psycopg.Connection, tables: Tables) -> None:
    conn.execute(sql.SQL("drop table if exists {}").format(tables.history))
    conn.execute(sql.SQL("truncate {}").format(tables.landing))
    conn.execute("delete from _migration.history_dates")
    conn.execute("delete from _migration.snapshot_log")


def _land(conn: psycopg.Connection, tables: Tables, days: list[int]) -> int:
    """Land one snapshot per day, in the order given; returns the rows landed."""
    land = sql.SQL(_LAND).format(landing=tables.landing, replica=tables.replica)
    total = 0
    for day in days:
        run_id = conn.execute("select nextval('_migration.run_id_seq')").fetchone()
        assert run_id is not None
        rows = conn.execute(land, {"day": day, "run_id": run_id[0]}).rowcount
        conn.execute(_LOG, (run_id[0], tables.table_key, FIRST_DATE + timedelta(days=day), rows))
        total += rows
    conn.execute(sql.SQL("analyze {}").format(tables.landing))
    return total


def _apply(project: TidemarkProject, tables: Tables) -> Measured:
    command = [DBT, "run", "--project-dir", str(project.root), "--select", tables.model]
    return run(command, project.env, project.root, "dbt run of the as-of history")


def _applied(conn: psycopg.Connection) -> list[float]:
    rows = conn.execute("select apply_seconds from _migration.snapshot_log order by applied_at").fetchall()
    if any(r[0] is None for r in rows):
        raise RuntimeError("a landed snapshot was not applied")
    return [float(r[0]) for r in rows]


def _history_size(conn: psycopg.Connection, tables: Tables) -> tuple[int, int]:
    row = conn.execute(sql.SQL("select count(*), count(distinct id) from {}").format(tables.history)).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.asof_history", description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--dates", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args()
    if args.keys < 100 or not 2 <= args.dates <= 365:
        parser.error(f"--keys must be at least 100 (not {args.keys}) and --dates 2 to 365 (not {args.dates})")

    bench_db = databases.start()
    results: dict[str, Any] = {"keys": args.keys, "dates": args.dates, "machine": report.machine()}
    try:
        with psycopg.connect(bench_db.source_url, autocommit=True) as conn:
            workload.create(conn, args.keys)
        project = TidemarkProject(databases.WORK_DIR / "asof-history", bench_db.env, bench_db.target_url, SYNC_TABLES)
        _say("a first sync: the replica the snapshots are made from, and the snapshot landing table")
        project.sync()
        days = list(range(args.dates))
        shuffled = random.Random(args.seed).sample(days, len(days))
        results["random_order"] = [(FIRST_DATE + timedelta(days=d)).isoformat() for d in shuffled]
        tables = Tables(*project.replica())
        with psycopg.connect(bench_db.target_url, autocommit=True) as conn:
            figures = {}
            for label, order in (("random", shuffled), ("date", days)):
                _reset(conn, tables)
                _say(f"landing {len(order)} snapshots of {args.keys:,} keys, in {label} order")
                landed = _land(conn, tables, order)
                if landed < args.keys * len(order) * 0.9:
                    raise RuntimeError(f"landed {landed:,} rows, expected about 99% of {args.keys * len(order):,}")
                _say(f"applying them: dbt run of {tables.model}")
                measured = _apply(project, tables)
                per_date = _applied(conn)
                versions, keys = _history_size(conn, tables)
                figures[label] = {
                    "rows_landed": landed,
                    "dbt_run_seconds": measured.seconds,
                    "apply_seconds": sum(per_date),
                    "apply_seconds_per_date": per_date,
                    "versions": versions,
                    "keys": keys,
                }
                kept = sql.Identifier(f"history_{label}_order")
                conn.execute(sql.SQL("drop table if exists {}").format(kept))
                conn.execute(sql.SQL("create table {} as select * from {}").format(kept, tables.history))
            differ = conn.execute(
                "select count(*) from ("
                "(select * from history_random_order except all select * from history_date_order) union all"
                " (select * from history_date_order except all select * from history_random_order)) as d"
            ).fetchone()
        results["orders"] = figures
        results["histories_equal"] = differ is not None and differ[0] == 0
        if not results["histories_equal"]:
            raise RuntimeError(f"random and date order gave different histories ({differ} rows differ)")
    finally:
        databases.stop()
    _report(results, args.out)
    return 0


def _report(results: dict[str, Any], folder: Path) -> None:
    rows = []
    for label, f in results["orders"].items():
        per_date = sorted(f["apply_seconds_per_date"])
        rows.append(
            (
                f"{label} order",
                f"{f['dbt_run_seconds']:.1f}",
                f"{f['apply_seconds']:.1f}",
                f"{per_date[0]:.1f} / {per_date[len(per_date) // 2]:.1f} / {per_date[-1]:.1f}",
                f"{f['versions']:,}",
            )
        )
    report.print_table(
        f"Applying {results['dates']} snapshots of {results['keys']:,} keys to the as-of history",
        ("order", "dbt run s", "apply s", "per date min / median / max s", "versions"),
        rows,
    )
    print(f"  histories equal: {results['histories_equal']}")
    folder.mkdir(parents=True, exist_ok=True)
    path = report.write(results, folder, f"asof-history-{results['keys']}x{results['dates']}")
    print(f"\nwritten to {path}")


if __name__ == "__main__":
    sys.exit(main())
