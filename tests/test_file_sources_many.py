"""10,000 small files: every one lands once; a run that finds nothing new reads no file; ten new files
among them land alone (the bench times what these cost: bench/files.py)."""

from __future__ import annotations

from tests.conftest import Project

FILES = 10_000


def test_ten_thousand_small_files(project: Project) -> None:
    (project.root / "seeds" / "file_sources.csv").write_text(
        "replica,location,glob,format,primary_key\nfiles.drops,drops,*.csv,csv,id\n"
    )
    project.write_sync_tables([])
    project.generate()
    project.env["TIDEMARK_FILES_SETTLE"] = "0s"
    drops = project.root / "drops"
    drops.mkdir()
    for n in range(FILES):
        (drops / f"{n:05}.csv").write_text(f"id,value\n{n},{n * 2}\n")

    def sync() -> str:
        done = project.cli("--table", "files.drops", "--dbt", "build")
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stderr

    sync()
    assert project.scalar("select count(*) from files.drops where value = id * 2") == FILES
    assert project.scalar("select count(*) from _migration.file_checkpoint") == FILES

    said = sync()
    assert "no file new, changed or gone since the checkpoint" in said
    assert project.scalar("select count(distinct run_id) from _migration.run_log") == 1

    for n in range(FILES, FILES + 10):
        (drops / f"{n:05}.csv").write_text(f"id,value\n{n},{n * 2}\n")
    said = sync()
    assert "10 file(s) to land, 0 the same, 0 removed" in said
    assert project.scalar("select count(*) from files.drops") == FILES + 10
    assert (
        project.scalar(
            "select sum(rows_landed) from _migration.runs where run_id = (select max(run_id) from _migration.runs)"
        )
        == 10
    )
