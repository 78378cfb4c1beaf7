"""kill -9 in the middle of a file source's landing: the next run resumes it, lands only the files that had
not landed, and the replica holds every file's rows once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

from tests.conftest import REPO, Project

#: Files past Spark's packing size (4 MB): each lands in a task of its own, long enough to be killed in.
FILES, ROWS = 10, 90_000
PROGRESS = re.compile(r"(\d+)/(\d+) file\(s\) landed")


def test_kill_nine_while_files_land(project: Project) -> None:
    (project.root / "seeds" / "file_sources.csv").write_text(
        "replica,location,glob,format\nfiles.events,drops,*.csv,csv\n"
    )
    project.write_sync_tables([])
    project.generate()
    project.env["TIDEMARK_FILES_SETTLE"] = "0s"
    (project.root / "drops").mkdir()
    for n in range(FILES):
        lines = "".join(f"{n},{i},{'x' * 40}\n" for i in range(ROWS))
        (project.root / "drops" / f"{n:03}.csv").write_text("file,line,payload\n" + lines)

    process = subprocess.Popen(
        [sys.executable, "-m", "extract", "--table", "files.events"],
        cwd=REPO,
        env={**os.environ, **project.env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    said = []
    for line in process.stderr:
        said.append(line)
        report = PROGRESS.search(line)
        if report is not None and report.group(1) != report.group(2):
            process.send_signal(signal.SIGKILL)
            break
    assert process.wait() == -signal.SIGKILL, "".join(said[-20:])
    landed_before = project.scalar("select count(*) from _migration.partition_log where landed_at is not null")
    assert 0 < landed_before < FILES

    done = project.cli("--table", "files.events", "--dbt", "build")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "resuming run 1: " in done.stderr
    assert project.scalar("select count(distinct run_id) from _migration.run_log") == 1
    # Nothing landed twice: each file's rows are in staging once, and the replica holds each row once.
    assert project.scalar("select count(*) from files.stg__events") == FILES * ROWS
    with project.target() as conn:
        counts = conn.execute("select file, count(*), count(distinct line) from files.events group by file").fetchall()
    assert sorted(counts) == [(n, ROWS, ROWS) for n in range(FILES)]
