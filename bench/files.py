"""The file-source section of `make bench`: 1,000 CSV files of 10,000 rows each in a folder, replicated by a
file source (seeds/file_sources.csv, keyed by id), each step timed as a user runs it:

- a raw COPY of the same files into an unlogged table, one after another (what a loop of `\\copy` does);
- tidemark's first landing of the 1,000 files (`python -m extract --table files.drops`), then its merge;
- a run with nothing new: the listing of 1,000 files and the checkpoint's comparison alone;
- a run after 10 new files came among them: the listing and those 10 files, not a read of the others (the
  rows it read are shown), then their merge (`dbt build`).

`python -m bench.files [--files N] [--rows N]` runs this section alone against the bench's server.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from bench import databases
from bench.alone import Say, run_section
from bench.databases import BenchDatabases
from bench.measure import count_rows
from bench.report import print_table
from bench.tidemark_sync import BUILD, TidemarkProject

FILES, ROWS, NEW_FILES = 1_000, 10_000, 10
SOURCES = "replica,location,glob,format,primary_key\nfiles.drops,{folder},*.csv,csv,id\n"
_RAW = "create unlogged table raw_drops (id bigint, customer text, amount numeric(12, 2), placed_at timestamp)"


def write_files(folder: Path, first: int, count: int, rows: int) -> None:
    """Files first..first+count-1, each of `rows` rows with keys of their own."""
    rng = random.Random(first)
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(first, first + count):
        base = number * rows
        lines = [
            f"{base + i},customer {rng.randrange(100_000)},{rng.randrange(1_000_000) / 100:.2f},"
            f"2026-11-{1 + i % 28:02d} {i % 24:02d}:{i % 60:02d}:00\n"
            for i in range(rows)
        ]
        (folder / f"orders-{number:05d}.csv").write_text("id,customer,amount,placed_at\n" + "".join(lines))


def raw_copy(target_url: str, folder: Path) -> float:
    """Seconds to COPY every file of `folder` into a fresh unlogged table, one after another."""
    with psycopg.connect(target_url, autocommit=True) as conn:
        conn.execute("drop table if exists raw_drops")
        conn.execute(_RAW)
        started = time.perf_counter()
        for path in sorted(folder.glob("*.csv")):
            with conn.cursor().copy("copy raw_drops from stdin (format csv, header)") as copy:
                copy.write(path.read_bytes())
        seconds = time.perf_counter() - started
        conn.execute("drop table raw_drops")
    return seconds


def _last_run_rows(target_url: str) -> int:
    with psycopg.connect(target_url) as conn:
        row = conn.execute("select rows_landed from _migration.runs order by run_id desc limit 1").fetchone()
    return 0 if row is None else int(row[0])


def measure(
    bench_db: BenchDatabases, work: Path, say: Say, section: dict[str, Any], files: int = FILES, rows: int = ROWS
) -> dict[str, Any]:
    """The section's figures, filled in `section` as each is timed."""
    section.update({"files": files, "rows_per_file": rows, "new_files": NEW_FILES})
    bench_db.recreate()
    folder = work / "file-drops"
    say(f"files: writing {files:,} CSV files of {rows:,} rows")
    for old in folder.glob("*.csv") if folder.exists() else ():
        old.unlink()
    write_files(folder, 0, files, rows)
    section["raw_copy_seconds"] = raw_copy(bench_db.target_url, folder)
    say(f"files: raw COPY {section['raw_copy_seconds']:.1f} s")
    project = TidemarkProject(
        work / "tidemark-files",
        bench_db.env,
        bench_db.target_url,
        "source_schema,source_table\n",
        SOURCES.format(folder=folder),
    )
    bench_db.settle()
    say("files: tidemark's first landing")
    section["first_landing_seconds"] = project.command("--table", "files.drops").seconds
    say("files: its merge (dbt build), not timed")
    project.command("dbt", "build")
    say("files: a run with nothing new")
    section["nothing_new_seconds"] = project.command("--table", "files.drops").seconds
    write_files(folder, files, NEW_FILES, rows)
    bench_db.settle()
    say(f"files: a run after {NEW_FILES} new files")
    section["new_files_seconds"] = project.command("--table", "files.drops").seconds
    section["new_files_rows_read"] = _last_run_rows(bench_db.target_url)
    say("files: their merge (dbt build)")
    section["new_files_merge_seconds"] = project.command("dbt", BUILD).seconds
    held = count_rows(bench_db.target_url, "files.drops")
    if held != (files + NEW_FILES) * rows:
        raise RuntimeError(f"the replica holds {held:,} rows, the files {(files + NEW_FILES) * rows:,}")
    return section


def print_files(results: dict[str, Any]) -> None:
    section = results.get("files")
    if not section or "new_files_seconds" not in section:
        return
    files, rows, raw = section["files"], section["rows_per_file"], section["raw_copy_seconds"]
    first = section["first_landing_seconds"]
    title = f"Files: {files:,} CSV files of {rows:,} rows ({files * rows:,} rows)"
    new, read = section["new_files"], section["new_files_rows_read"]
    table = [
        ("raw COPY of every file, one after another", f"{raw:.1f}", "1.00", f"{files * rows:,}"),
        (
            "tidemark's first landing (python -m extract --table files.drops)",
            f"{first:.1f}",
            f"{first / raw:.2f}",
            f"{files * rows:,}",
        ),
        (f"a run with nothing new (listing {files:,} files)", f"{section['nothing_new_seconds']:.1f}", "", "0"),
        (f"a run after {new} new files", f"{section['new_files_seconds']:.1f}", "", f"{read:,}"),
        ("their merge (dbt build)", f"{section['new_files_merge_seconds']:.1f}", "", ""),
    ]
    print_table(title, ("", "seconds", "/ raw COPY", "rows read"), table)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.files", description=__doc__)
    parser.add_argument("--files", type=int, default=FILES)
    parser.add_argument("--rows", type=int, default=ROWS)
    args = parser.parse_args()
    if args.files < 1 or args.rows < 1:
        parser.error(f"--files and --rows must be at least 1 (not {args.files} and {args.rows})")
    return run_section(
        "files",
        f"files-{args.files}x{args.rows}",
        lambda bench_db, say, section, _: measure(bench_db, databases.WORK_DIR, say, section, args.files, args.rows),
        print_files,
    )


if __name__ == "__main__":
    sys.exit(main())
