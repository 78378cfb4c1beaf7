"""`make bench` keeps what it measured: each section is written down as soon as it ends, a section that
fails or runs past the bound is recorded as such and the next one runs, and a step past the bound is
stopped with everything it started."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import psutil
import pytest

from bench import measure
from bench.measure import StepStopped
from bench.sections import Sections


def _written(sections: Sections) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(sections.paths[0].read_text())
    assert json.loads(sections.paths[1].read_text()) == loaded
    return loaded


def test_each_section_is_written_as_it_ends_and_a_failure_does_not_stop_the_run(tmp_path: Path) -> None:
    results: dict[str, object] = {"rows": 10}
    said: list[str] = []
    sections = Sections(results, tmp_path, said.append)
    seen_before_next: list[dict[str, object]] = []

    def first() -> None:
        results["first"] = {"seconds": 1.5}

    def failing() -> None:
        seen_before_next.append(_written(sections))  # the first section is on disk already
        raise RuntimeError("'<' not supported between instances of 'str' and 'NoneType'")

    def stopped() -> None:
        raise StepStopped("reladiff", 5.0, "line one\nline two\n")

    assert sections.run("first", first)
    assert not sections.run("second", failing)
    assert not sections.run("third", stopped)
    assert not sections.run("fourth", lambda: None, needs=["second"])
    assert sections.run("fifth", lambda: results.update(fifth=5))

    assert seen_before_next[0]["first"] == {"seconds": 1.5}
    on_disk = _written(sections)
    assert on_disk["fifth"] == 5 and on_disk["first"] == {"seconds": 1.5}
    assert on_disk["failed"] == {"second": "RuntimeError: '<' not supported between instances of 'str' and 'NoneType'"}
    assert "ran past the bound of 5 s" in on_disk["stopped"]["third"]  # type: ignore[index]
    assert "line two" in on_disk["stopped"]["third"]  # type: ignore[index]
    assert on_disk["not_run"] == {"fourth": "needs second, which did not finish"}
    assert not sections.complete and "failed: second" in sections.summary()
    assert any("second: failed" in line for line in said)


def test_a_part_that_fails_is_recorded_while_its_section_goes_on(tmp_path: Path) -> None:
    results: dict[str, object] = {"rows": 10}
    sections = Sections(results, tmp_path, lambda _: None)

    def with_a_failing_peer() -> None:
        sections.record("dlt incremental round 2", RuntimeError("dlt failed (exit 1)"))
        results["rounds"] = [1.0, 2.0]

    assert sections.run("rounds", with_a_failing_peer)
    on_disk = _written(sections)
    assert on_disk["rounds"] == [1.0, 2.0]
    assert on_disk["failed"] == {"dlt incremental round 2": "RuntimeError: dlt failed (exit 1)"}


def test_a_step_past_the_bound_is_stopped_with_what_it_started(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(measure, "STEP_BOUND_SECONDS", 2.0)
    pid_file = tmp_path / "child.pid"
    # A step that starts a process of its own (as tidemark starts a JVM) and never ends.
    script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n"
    )
    started = time.perf_counter()
    with pytest.raises(StepStopped, match="slow step ran past the bound of 2 s") as stopped:
        measure.run([sys.executable, "-c", script], {}, tmp_path, "slow step")
    assert time.perf_counter() - started < 30
    assert "started" in str(stopped.value)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while psutil.pid_exists(child) and psutil.Process(child).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the step's own process outlived it"
        time.sleep(0.1)
