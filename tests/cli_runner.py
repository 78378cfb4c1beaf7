"""`python -m extract ARGS` as the tests run it: a fork of the test worker that runs the command's `main`.

A fresh `python -m extract` spends seconds importing dbt, Spark's Python side and psycopg before it
does anything; a worker has imported them already. The fork is still a process of its own, as a
user's command is: its own environment, working folder, standard streams (file descriptors, so its
JVM's output is the command's too), its own Spark driver JVM, its exit code and atexit handlers.
Nothing of the worker's runs in it but the imported modules: the worker's JVM, Spark session and
exit handlers are forgotten before the command starts.
"""

from __future__ import annotations

import atexit
import gc
import io
import logging
import multiprocessing.util
import os
import select
import signal
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

#: The exit code of a fork that failed before the command ran.
FORK_FAILED = 70
MAIN = Path(__file__).resolve().parent.parent / "extract" / "__main__.py"


def run_cli(
    args: Sequence[str], env: Mapping[str, str], cwd: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run the command in a fork with `env` as its whole environment; what it printed, and its exit code."""
    _import_what_it_needs(args)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(list(args), env, cwd, out.fileno(), err.fileno())
        code = _wait(pid, timeout, args)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    return subprocess.CompletedProcess([sys.executable, "-m", "extract", *args], code, stdout, stderr)


def _import_what_it_needs(args: Sequence[str]) -> None:
    """great_expectations, which a command imports when it needs it, imported by the worker the first time
    one does: it takes seconds, and each fork would import it again."""
    if args and args[0] == "check":
        import extract.quality.checkpoint_run
        import extract.quality.gx_project  # noqa: F401


def _wait(pid: int, timeout: float, args: Sequence[str]) -> int:
    handle = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([handle], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise subprocess.TimeoutExpired([sys.executable, "-m", "extract", *args], timeout)
    finally:
        os.close(handle)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _child(args: list[str], env: Mapping[str, str], cwd: Path, out: int, err: int) -> None:
    try:
        gc.freeze()  # the worker's objects are never collected here: none of its connections is closed
        atexit._clear()  # the worker's exit handlers are the worker's; multiprocessing's own skips them
        atexit.register(multiprocessing.util._exit_function)
        stdin = os.open(os.devnull, os.O_RDONLY)
        os.dup2(stdin, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
        os.chdir(cwd)
        sys.argv = [str(MAIN), *args]
        _as_a_fresh_interpreter()
        os.environ.clear()
        os.environ.update(env)
        for name in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET"):  # not the worker's JVM either
            os.environ.pop(name, None)
        _forget_the_workers_spark()
        from extract.cli import exit_now, main

        exit_now(main(args))
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
    os._exit(FORK_FAILED)


def _as_a_fresh_interpreter() -> None:
    """Undo what pytest set up in the worker: its warning filters, log handlers and signal handlers."""
    warnings.resetwarnings()
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.simplefilter("ignore", category)
    logging.root.handlers.clear()
    logging.root.setLevel(logging.WARNING)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM):
        signal.signal(number, signal.SIG_DFL)


def _forget_the_workers_spark() -> None:
    """The command launches a driver JVM of its own, as `python -m extract` does."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    SparkContext._gateway = None
    SparkContext._jvm = None
    SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
