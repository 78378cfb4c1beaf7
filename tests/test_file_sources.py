"""File drops as a source (seeds/file_sources.csv, extract/files): each run lands the files new or changed
since the checkpoint, whatever their times say; an identical upload is not read again; a file modified in
place is upserted with a key and replaced without one."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import Project

SOURCES = """replica,location,glob,format,primary_key,on_file_removed
files.orders,drops/orders,*.csv,csv,id,
files.events,drops/events,*.csv,csv,,delete
"""


@pytest.fixture
def drops(project: Project) -> Project:
    (project.root / "seeds" / "file_sources.csv").write_text(SOURCES)
    for folder in ("orders", "events"):
        (project.root / "drops" / folder).mkdir(parents=True)
    project.env["TIDEMARK_FILES_SETTLE"] = "0s"
    project.write_sync_tables([])
    project.generate()
    return project


def write(project: Project, name: str, rows: list[str], mtime: float | None = None) -> Path:
    path = project.root / "drops" / name
    header = "id,customer,amount" if name.startswith("orders") else "kind,amount"
    path.write_text(header + "\n" + "".join(row + "\n" for row in rows))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def sync(project: Project, *streams: str) -> str:
    args = [a for stream in streams or ("files.orders", "files.events") for a in ("--table", stream)]
    done = project.cli(*args, "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]

    return done.stderr


def rows(project: Project, table: str, order: str) -> list[tuple[object, ...]]:
    with project.target() as conn:
        return [tuple(r) for r in conn.execute(f"select * from files.{table} order by {order}").fetchall()]


def runs(project: Project, table_key: str) -> int:
    return int(
        project.scalar("select count(distinct run_id) from _migration.run_log where table_key = %s", (table_key,))
    )


def test_new_late_identical_and_changed_files_of_a_keyed_source(drops: Project) -> None:
    first = write(drops, "orders/2026-01-02.csv", ["1,ann,10.5", "2,bob,20"])
    sync(drops, "files.orders")
    assert [r[:3] for r in rows(drops, "orders", "id")] == [(1, "ann", 10.5), (2, "bob", 20.0)]
    assert rows(drops, "orders", "id")[0][3] == f"file:{first}"

    # A late file whose time is older than the first's still lands: the checkpoint is a set of files.
    write(drops, "orders/2026-01-01.csv", ["3,cid,30"], mtime=first.stat().st_mtime - 86_400)
    sync(drops, "files.orders")
    assert [r[0] for r in rows(drops, "orders", "id")] == [1, 2, 3]

    # The same content uploaded again (a new time) is not read again: no run lands anything.
    before = runs(drops, "files.orders")
    write(drops, "orders/2026-01-02.csv", ["1,ann,10.5", "2,bob,20"], mtime=first.stat().st_mtime + 60)
    sync(drops, "files.orders")
    landed = drops.scalar(
        "select coalesce(sum(rows_landed), 0) from _migration.runs where table_key = 'files.orders' and run_id > "
        "(select max(run_id) from _migration.runs where table_key = 'files.orders' and rows_landed > 0)"
    )
    assert landed == 0 and runs(drops, "files.orders") <= before + 1

    # Modified in place, with a key: its rows are upserts (a key it no longer holds stays).
    write(drops, "orders/2026-01-02.csv", ["2,bob,25", "4,dan,40"], mtime=first.stat().st_mtime + 120)
    sync(drops, "files.orders")
    assert [r[:3] for r in rows(drops, "orders", "id")] == [
        (1, "ann", 10.5),
        (2, "bob", 25.0),
        (3, "cid", 30.0),
        (4, "dan", 40.0),
    ]


def test_a_file_modified_in_place_without_a_key_replaces_its_rows(drops: Project) -> None:
    first = write(drops, "events/a.csv", ["click,1", "view,2", "click,3"])
    write(drops, "events/b.csv", ["view,9"])
    sync(drops, "files.events")
    assert drops.scalar("select count(*) from files.events") == 4

    write(drops, "events/a.csv", ["click,1", "buy,7"], mtime=first.stat().st_mtime + 60)
    sync(drops, "files.events")
    found = rows(drops, "events", "_tidemark_file, _tidemark_row")
    assert [(r[0], r[1], r[2].rsplit("/", 1)[-1], r[3]) for r in found] == [
        ("click", 1, "a.csv", 1),
        ("buy", 7, "a.csv", 2),
        ("view", 9, "b.csv", 1),
    ]
    history = drops.scalar("select count(*) from files.events__history where dbt_valid_to is not null")
    assert history == 2  # the row that changed, and the row that went


def test_a_bad_file_fails_alone_and_is_read_again_once_mended(drops: Project) -> None:
    write(drops, "orders/1.csv", ["1,ann,10"])
    sync(drops, "files.orders")
    write(drops, "orders/2.csv", ["2,bob,20", "x3,cid,30"])
    write(drops, "orders/3.csv", ["4,dan,40"])
    done = drops.cli("--table", "files.orders", "--dbt", "build")

    assert done.returncode != 0
    assert [r[0] for r in rows(drops, "orders", "id")] == [1, 4]
    assert "2.csv: line 3, column id: 'x3' does not read as int" in done.stderr
    write(drops, "orders/2.csv", ["2,bob,20", "3,cid,30"])
    sync(drops, "files.orders")
    assert [r[0] for r in rows(drops, "orders", "id")] == [1, 2, 3, 4]


def test_a_removed_file_keeps_its_rows_unless_the_source_deletes_them(drops: Project) -> None:
    write(drops, "orders/a.csv", ["1,ann,10", "2,bob,20"])
    write(drops, "orders/b.csv", ["3,cid,30"])
    write(drops, "events/a.csv", ["click,1", "view,2"])
    write(drops, "events/b.csv", ["buy,3"])
    sync(drops)
    (drops.root / "drops" / "orders" / "a.csv").unlink()
    (drops.root / "drops" / "events" / "a.csv").unlink()
    sync(drops)
    assert [r[0] for r in rows(drops, "orders", "id")] == [1, 2, 3]  # kept, the default
    assert [r[0] for r in rows(drops, "events", "kind")] == ["buy"]
    deleted = drops.scalar("select count(*) from _migration.delete_log where table_key = 'files.events'")
    assert deleted == 2
    kept = drops.scalar("select count(*) from _migration.file_checkpoint where table_key = 'files.events'")
    assert kept == 1


def test_files_still_being_written_or_named_as_temporary_wait(drops: Project) -> None:
    drops.env["TIDEMARK_FILES_SETTLE"] = "1s"
    for name in ("orders/c.csv.tmp", "orders/_c.csv", "orders/.c.csv", "orders/c.csv._COPYING_"):
        write(drops, name, ["9,tmp,9"])
    growing = drops.root / "drops" / "orders" / "d.csv"
    growing.write_text("id,customer,amount\n")
    stop = threading.Event()
    written = [0]

    def grow() -> None:
        while not stop.is_set():
            written[0] += 1
            with growing.open("a") as out:
                out.write(f"{written[0]},grower,{written[0]}\n")
            time.sleep(0.05)

    writer = threading.Thread(target=grow)
    writer.start()
    try:
        said = sync(drops, "files.orders")
    finally:
        stop.set()
        writer.join()
    assert "d.csv is still being written" in said
    assert drops.scalar("select to_regclass('files.orders')") is None  # nothing landed: no replica yet
    sync(drops, "files.orders")
    assert drops.scalar("select count(*) from files.orders") == written[0]


def test_status_and_state_show_the_checkpoint(drops: Project) -> None:
    write(drops, "orders/a.csv", ["1,ann,10"])
    newest = write(drops, "orders/b.csv", ["2,bob,20", "3,cid,30"])
    os.utime(newest, (time.time() + 60, time.time() + 60))
    sync(drops, "files.orders")
    digest = hashlib.sha256(newest.read_bytes()).hexdigest()

    status = drops.cli("status", "--json")
    assert status.returncode == 0, status.stderr
    (source,) = json.loads(status.stdout)["file_sources"]
    assert (source["file_source"], source["files"], source["rows_landed"]) == ("files.orders", 2, 3)
    assert (source["newest_file"], source["newest_sha256"]) == (f"file:{newest}", digest)

    shown = drops.cli("state", "show", "files.orders", "--json", "--verbose")
    assert shown.returncode == 0, shown.stderr
    state = json.loads(shown.stdout)
    assert state["state"]["reader"] == "files"
    assert state["state"]["cursor_value"] == f"file:{newest}#sha256={digest}"
    assert [f["path"].rsplit("/", 1)[-1] for f in state["checkpoint"]["every_file"]] == ["a.csv", "b.csv"]


def test_parquet_with_a_new_column_and_gzipped_json_lines(drops: Project) -> None:
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    (drops.root / "seeds" / "file_sources.csv").write_text(
        "replica,location,glob,format,primary_key\n"
        "files.items,drops/items,*.parquet,parquet,sku\n"
        "files.logs,drops/logs,*.json.gz,json,\n"
    )
    drops.generate()
    for folder in ("items", "logs"):
        (drops.root / "drops" / folder).mkdir()
    dims = pa.array([{"w": 1.5, "h": 2}, None], type=pa.struct([("w", pa.float64()), ("h", pa.int32())]))
    pq.write_table(
        pa.table({"sku": ["a", "b"], "qty": pa.array([1, 2], pa.int32()), "dims": dims}),
        drops.root / "drops" / "items" / "1.parquet",
    )
    with gzip.open(drops.root / "drops" / "logs" / "1.json.gz", "wt") as out:
        out.write('{"level": "info", "at": "2026-01-01T00:00:00Z", "tags": ["a", "b"]}\n{"level": "warn"}\n')
    sync(drops, "files.items", "files.logs")

    pq.write_table(
        pa.table({"sku": ["b", "c"], "qty": pa.array([5, 3], pa.int32()), "color": ["red", None]}),
        drops.root / "drops" / "items" / "2.parquet",
    )
    said = sync(drops, "files.items", "files.logs")
    assert "color" in said  # the new column, added as the source's policy (evolve) says
    with drops.target() as conn:
        items = conn.execute("select sku, qty, dims::text, color from files.items order by sku").fetchall()
        logs = conn.execute("select level, tags::text from files.logs order by _tidemark_row").fetchall()
    assert items == [
        ("a", 1, '{"h": 2, "w": 1.5}', None),
        ("b", 5, None, "red"),
        ("c", 3, None, None),
    ]
    assert logs == [("info", '["a", "b"]'), ("warn", None)]


def test_a_reset_state_reads_every_file_again_and_a_cursor_is_refused(drops: Project) -> None:
    write(drops, "orders/a.csv", ["1,ann,10"])
    write(drops, "orders/b.csv", ["2,bob,20"])
    sync(drops, "files.orders")
    refused = drops.cli("state", "set", "files.orders", "--cursor", "2026-01-01")
    assert refused.returncode == 2 and "is a file source" in refused.stderr
    reset = drops.cli("state", "reset", "files.orders")
    assert reset.returncode == 0, reset.stderr
    assert drops.scalar("select count(*) from _migration.file_checkpoint") == 0
    said = sync(drops, "files.orders")
    assert "2 file(s) to land" in said
    assert drops.scalar("select rows_unchanged from _migration.merge_log order by merge_id desc limit 1") == 2
    assert drops.scalar("select count(*) from _migration.file_checkpoint") == 2


@pytest.mark.parametrize(
    ("row", "named"),
    [
        ("files.orders,drops/orders,*.csv,xlsx,id,", "format must be one of csv, parquet, json, not 'xlsx'"),
        ("orders,drops/orders,*.csv,csv,id,", "replica 'orders' must name a schema and a table"),
        ("files.orders,drops/orders,*.csv,csv,id,sometimes", "on_file_removed must be one of keep, delete"),
    ],
)
def test_a_bad_file_source_row_is_refused_with_what_is_wrong(drops: Project, row: str, named: str) -> None:
    (drops.root / "seeds" / "file_sources.csv").write_text(SOURCES.splitlines()[0] + "\n" + row + "\n")
    done = drops.cli("--all")
    assert done.returncode == 2 and named in done.stderr, done.stderr
    assert drops.scalar("select to_regclass('_migration.run_log')") is None  # nothing written


def test_a_location_that_does_not_exist_is_named(drops: Project) -> None:
    (drops.root / "seeds" / "file_sources.csv").write_text(SOURCES.replace("drops/orders", "drops/nowhere"))
    done = drops.cli("--table", "files.orders")
    assert done.returncode != 0
    assert "drops/nowhere does not exist" in done.stderr, done.stderr


def test_a_key_in_two_files_keeps_the_newest_and_a_file_with_an_empty_key_fails_alone(drops: Project) -> None:
    older = write(drops, "orders/b.csv", ["1,from-b,10", "2,from-b,20"])
    write(drops, "orders/a.csv", ["1,from-a,11"], mtime=older.stat().st_mtime + 60)  # newer, first by name
    write(drops, "orders/c.csv", ["3,cid,30", ",nokey,40"])
    done = drops.cli("--table", "files.orders", "--dbt", "build")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "c.csv: 1 row(s) without their key (id empty)" in done.stderr
    assert [r[:2] for r in rows(drops, "orders", "id")] == [(1, "from-a"), (2, "from-b")]


def test_declared_columns_keep_what_a_guess_would_lose(drops: Project) -> None:
    (drops.root / "seeds" / "file_sources.csv").write_text(
        "replica,location,glob,format,primary_key,columns\n"
        'files.orders,drops/orders,*.csv,csv,id,"id bigint|customer string|amount decimal(10, 2)"\n'
    )
    drops.generate()
    write(drops, "orders/a.csv", ["1,00042,10.50", "2,00007,3"])
    sync(drops, "files.orders")
    with drops.target() as conn:
        found = conn.execute("select customer, amount::text from files.orders order by id").fetchall()
        kind = conn.execute(
            "select format_type(atttypid, atttypmod) from pg_attribute where attname = 'amount'"
            " and attrelid = 'files.orders'::regclass"
        ).fetchone()
    assert found == [("00042", "10.50"), ("00007", "3.00")]  # a guess reads 00042 as the number 42
    assert kind == ("numeric(10,2)",)


def test_quoted_values_with_line_breaks_delimiters_and_quotes(drops: Project) -> None:
    path = drops.root / "drops" / "orders" / "a.csv"
    path.write_text('id,customer,amount\n1,"Smith, John\nsecond line",10\n2,"say ""hi""",20\n')
    sync(drops, "files.orders")
    assert [r[:2] for r in rows(drops, "orders", "id")] == [(1, "Smith, John\nsecond line"), (2, 'say "hi"')]


def test_json_fields_in_their_own_case_land_on_later_runs_too(drops: Project) -> None:
    (drops.root / "seeds" / "file_sources.csv").write_text(
        "replica,location,glob,format,primary_key\nfiles.logs,drops/logs,*.json,json,EventId\n"
    )
    drops.generate()
    (drops.root / "drops" / "logs").mkdir()
    (drops.root / "drops" / "logs" / "1.json").write_text('{"EventId": 1, "Level": "info"}\n')
    sync(drops, "files.logs")
    (drops.root / "drops" / "logs" / "2.json").write_text('{"EventId": 2, "Level": "warn"}\n')
    sync(drops, "files.logs")
    with drops.target() as conn:
        found = conn.execute("select eventid, level from files.logs order by eventid").fetchall()
    assert found == [(1, "info"), (2, "warn")]


def test_a_file_column_named_as_tidemark_or_dbt_columns_is_refused(drops: Project) -> None:
    # The replica's history adds dbt_valid_to; tidemark's own columns and statements use _tidemark_...
    for column in ("dbt_valid_to", "_tidemark_outcome"):
        (drops.root / "drops" / "events" / "a.csv").write_text(f"kind,{column}\nclick,1\n")
        done = drops.cli("--table", "files.events", "--dbt", "build")
        assert done.returncode == 1  # the table fails, as with a bad file; others would still run
        assert f"files.events: column '{column}' has a name tidemark or dbt use" in done.stderr, done.stderr[-2000:]
        assert "rename it in the files to sync them" in done.stderr
        assert drops.scalar("select to_regclass('files.events')") is None
