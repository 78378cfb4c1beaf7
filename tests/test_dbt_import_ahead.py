"""dbt's process imports dbt ahead of the pass's need only when the pass checks many tables
(DbtProcess.import_ahead_for): a pass of few waits for a check that finds rows, and a loop's process,
made without `import_ahead`, never imports ahead. Asking for the import gets no answer: the pass's next
question still gets its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from extract.runtime.dbt import IMPORT_AHEAD_TABLES

#: dbt's process for a project whose check is vouched (so nothing else makes it import dbt), told of a
#: pass's tables; whether it imported dbt is read from its mapped libraries: dbt's adapter brings
#: psycopg2's, which the pass itself never loads.
_TOLD = """
import json, sys, time
from pathlib import Path
from extract.runtime import dbt_check_record
from extract.runtime.dbt import DbtProcess

project, ahead, tables = Path(sys.argv[1]), sys.argv[2] == "ahead", int(sys.argv[3])
dbt_check_record.remember(project, "vouched")
dbt = DbtProcess(["build"], project, parse_now=False, import_ahead=ahead, fingerprint=lambda args: "vouched")

def imported(pid):
    return "psycopg2" in Path(f"/proc/{pid}/maps").read_text()

assert dbt.vouched and not imported("self")
dbt.import_ahead_for(tables)
deadline = time.monotonic() + (60 if ahead and tables >= int(sys.argv[4]) else 4)
while time.monotonic() < deadline and not imported(dbt._pid):
    time.sleep(0.1)
found = imported(dbt._pid)
dbt.check_arguments()  # answered with its own answer, after the import's message
print(json.dumps({"imported": found}))
dbt.close()
"""


#: A profile for dbt's check of the arguments to find; nothing connects with it.
_PROFILE = """
ahead:
  target: dev
  outputs:
    dev: {type: postgres, host: localhost, port: 5432, user: ahead, password: ahead, dbname: ahead, schema: ahead}
"""


def _imported(project: Path, ahead: bool, tables: int) -> bool:
    (project / "dbt_project.yml").write_text("name: ahead\nversion: '1'\nprofile: ahead\n")
    (project / "profiles.yml").write_text(_PROFILE)
    arguments = [str(project), "ahead" if ahead else "not", str(tables), str(IMPORT_AHEAD_TABLES)]
    done = subprocess.run([sys.executable, "-c", _TOLD, *arguments], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return bool(json.loads(done.stdout.strip().splitlines()[-1])["imported"])


def test_a_pass_of_many_tables_has_dbt_imported_ahead(tmp_path: Path) -> None:
    assert _imported(tmp_path, ahead=True, tables=IMPORT_AHEAD_TABLES)


def test_a_pass_of_few_tables_or_a_loop_s_process_imports_nothing_ahead(tmp_path: Path) -> None:
    assert not _imported(tmp_path, ahead=True, tables=IMPORT_AHEAD_TABLES - 1)
    assert not _imported(tmp_path, ahead=False, tables=1000)
