"""The SQL we ship is sqlfluff-clean under the project's .sqlfluff (dbt templater, postgres)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, Project
from tests.demo_fixture import demo

__all__ = ["demo"]


def test_models_are_sqlfluff_clean(demo: Project) -> None:
    demo.sync()  # the dbt templater compiles against a live target
    config = (REPO / ".sqlfluff").read_text().replace("profiles_dir = .tidemark", "profiles_dir = .")
    (demo.root / ".sqlfluff").write_text(config)
    sqlfluff = Path(sys.executable).with_name("sqlfluff")
    env = {**demo.env, "PATH": str(sqlfluff.parent), "HOME": str(demo.root)}
    result = subprocess.run(
        [str(sqlfluff), "lint", "models"], cwd=demo.root, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
