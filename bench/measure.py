"""Run a command and measure it: wall time, and the peak memory of its process and of its children."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg

SAMPLE_SECONDS = 0.05
#: How long one step (a command the benchmark runs) may take before it is stopped: generous, for the
#: slowest step of a 10,000,000-row run takes minutes. BENCH_STEP_BOUND (seconds) sets it.
STEP_BOUND_SECONDS = float(os.environ.get("BENCH_STEP_BOUND", "3600"))


class StepStopped(RuntimeError):
    """A step ran past the bound and was stopped."""

    def __init__(self, label: str, bound: float, output: str) -> None:
        tail = output.strip().splitlines()[-5:]
        super().__init__(f"{label} ran past the bound of {bound:,.0f} s and was stopped; its last lines: {tail}")


def kill_group(process: subprocess.Popen[str]) -> None:
    """Kill `process` and everything in its process group (it was started in a session of its own)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        return


@dataclass(frozen=True)
class Measured:
    seconds: float
    #: Peak resident memory of the process started (the Python driver, for tidemark).
    peak_rss_main: int
    #: Peak resident memory of everything it started, summed at each sample (JVM, Python workers).
    peak_rss_children: int
    output: str


class _PeakSampler:
    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.main = 0
        self.children = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(SAMPLE_SECONDS):
            try:
                self.main = max(self.main, self.process.memory_info().rss)
                total = 0
                for child in self.process.children(recursive=True):
                    try:
                        total += child.memory_info().rss
                    except psutil.Error:
                        continue
                self.children = max(self.children, total)
            except psutil.Error:
                return


def run(command: Sequence[str], env: Mapping[str, str], cwd: Path, label: str) -> Measured:
    """Run `command` to the end; a non-zero exit stops the benchmark's section with its output, and so
    does a step past the bound (StepStopped), its processes killed."""
    started = time.perf_counter()
    process = subprocess.Popen(
        list(command),
        env=dict(env),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: stopped, the JVMs it started go with it
    )
    sampler = _PeakSampler(process.pid)
    sampler.thread.start()
    try:
        output, _ = process.communicate(timeout=STEP_BOUND_SECONDS)
    except subprocess.TimeoutExpired:
        kill_group(process)
        output, _ = process.communicate()
        raise StepStopped(label, STEP_BOUND_SECONDS, output) from None
    except BaseException:  # interrupted: nothing it started outlives the benchmark
        kill_group(process)
        raise
    finally:
        sampler.stop.set()
        sampler.thread.join()
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{label} failed (exit {process.returncode}):\n{output[-4000:]}")
    return Measured(seconds, sampler.main, sampler.children, output)


def count_rows(url: str, table: str) -> int:
    """Rows in `table`, one of the benchmark's own fixed names (never input)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(f"select count(*) from {table}").fetchone()
    return int(row[0]) if row else 0
