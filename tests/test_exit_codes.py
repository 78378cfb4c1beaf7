"""The exit codes: the README's table is the code's, and the codes no other test reaches: 3 and 130."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

from extract.core.errors import EXIT_CODES
from tests.conftest import REPO, Project
from tests.demo_fixture import demo

__all__ = ["demo"]


def test_the_readme_table_is_the_codes_table() -> None:
    readme = (REPO / "README.md").read_text()
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", readme, flags=re.MULTILINE)
    assert {int(code): meaning for code, meaning in rows} == EXIT_CODES
    help_text = subprocess.run(
        [sys.executable, "-m", "extract", "--help"], cwd=REPO, capture_output=True, text=True, timeout=120
    ).stdout
    for code, meaning in EXIT_CODES.items():
        assert f"{code:>3}  {meaning}" in help_text


def test_an_unreachable_source_exits_3(project: Project) -> None:
    env = {**os.environ, **project.env, "TIDEMARK_SOURCE_URL": "postgresql://127.0.0.1:1/nowhere"}
    result = subprocess.run(
        [sys.executable, "-m", "extract", "--all"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 3, result.stderr[-2000:]
    assert "error: cannot connect to postgres://127.0.0.1:1/nowhere" in result.stderr


def test_an_interrupt_exits_130(demo: Project) -> None:
    env = {**os.environ, **demo.env}
    process = subprocess.Popen(
        [sys.executable, "-m", "extract", "--all", "--every", "1h", "--json"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()  # the first sync is done: the process waits for the next
    assert '"exit_code": 0' in first
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=120) == 130
    assert process.stderr is not None and "interrupted" in process.stderr.read()
