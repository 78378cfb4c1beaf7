"""dbt as the tests run it: the real dbt, invoked in the test worker's own process.

A `dbt` process spends seconds importing dbt before it reads a project; a worker imports it once.
Each call still parses the test's own project, with the test's own environment, and returns what
the command would have printed, as a finished process does. The Spark target starts a Spark
session of dbt-spark's own, which must not meet the worker's: it runs as a process.
"""

from __future__ import annotations

import io
import itertools
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

from extract.runtime.dbt_worker import ignore_absent_seed_columns


def run_dbt(args: list[str], env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`dbt ARGS` in `cwd` with `env` as its whole environment."""
    if _targets_spark(args):
        return _as_process(args, env, cwd)
    from dbt.cli.main import dbtRunner

    out, err = io.StringIO(), io.StringIO()
    with _environment(env), _working_directory(cwd), redirect_stdout(out), redirect_stderr(err):
        ignore_absent_seed_columns()
        result = dbtRunner().invoke(list(args))
    # dbt's own exit codes: 1 when nodes failed, 2 when dbt itself could not run.
    code = 0 if result.success else (2 if result.exception is not None else 1)
    if result.exception is not None:
        err.write(f"{type(result.exception).__name__}: {result.exception}\n")
    return subprocess.CompletedProcess(["dbt", *args], code, out.getvalue(), err.getvalue())


def _targets_spark(args: list[str]) -> bool:
    return any(a == "--target" and b == "spark" for a, b in itertools.pairwise(args)) or "--target=spark" in args


def _as_process(args: list[str], env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    dbt = Path(sys.executable).with_name("dbt")
    return subprocess.run(
        [str(dbt), *args], env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


@contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    saved = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(saved)
