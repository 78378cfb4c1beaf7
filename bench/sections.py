"""A benchmark run as sections, one after another, each written down as soon as it is measured.

A section that fails, or one of whose steps runs past the bound (measure.STEP_BOUND_SECONDS) and is
stopped, is recorded with its message under "failed" or "stopped", and the run goes on with the next
section; one that needs a section that did not finish is recorded under "not_run". The run's file
(bench/results/NAME-TIME.json, and NAME-latest.json) is written again after each section, so that a run
stopped from outside keeps what it measured before.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from bench import report
from bench.measure import StepStopped

#: What did not finish: section name -> message, under each of these keys of the results.
UNFINISHED = ("stopped", "failed", "not_run")


class Sections:
    def __init__(
        self, results: dict[str, Any], folder: Path, say: Callable[[str], None], name: str | None = None
    ) -> None:
        self.results = results
        self.say = say
        self.paths = report.result_paths(results, folder, name)
        self.finished: set[str] = set()

    def run(self, name: str, measure: Callable[[], object], needs: Collection[str] = ()) -> bool:
        """Measure section `name` (`measure` puts its figures in the results, as it goes); True when it
        finished. Its outcome is written at once."""
        missing = [need for need in needs if need not in self.finished]
        try:
            if missing:
                self._unfinished("not_run", name, f"needs {', '.join(missing)}, which did not finish")
                return False
            try:
                measure()
            except StepStopped as exc:
                self._unfinished("stopped", name, str(exc))
                return False
            except Exception as exc:
                traceback.print_exc()
                self._unfinished("failed", name, _message(exc))
                return False
            self.finished.add(name)
            return True
        finally:
            self.save()

    def record(self, name: str, exc: Exception) -> None:
        """A part of a section that failed or was stopped while the section went on (a peer, say)."""
        stopped = isinstance(exc, StepStopped)
        self._unfinished("stopped" if stopped else "failed", name, str(exc) if stopped else _message(exc))
        self.save()

    def _unfinished(self, kind: str, name: str, message: str) -> None:
        self.results.setdefault(kind, {})[name] = message
        self.say(f"{name}: {kind.replace('_', ' ')}: {message}")

    def save(self) -> Path:
        return report.save(self.results, self.paths)

    @property
    def complete(self) -> bool:
        return not any(self.results.get(kind) for kind in UNFINISHED)

    def summary(self) -> str:
        """One line per section that did not finish, or a line saying every one did."""
        lines = [
            f"{kind.replace('_', ' ')}: {name}: {message}"
            for kind in UNFINISHED
            for name, message in self.results.get(kind, {}).items()
        ]
        return "\n".join(lines) if lines else "every section finished"


def _message(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def print_finished(results: dict[str, Any], printers: Iterable[Callable[[dict[str, Any]], None]]) -> None:
    """Each printer's tables, or a line saying a section it reads did not finish."""
    for show in printers:
        try:
            show(results)
        except (KeyError, TypeError, IndexError, ZeroDivisionError) as exc:
            print(f"\n({show.__name__}: not printed, a section it reads did not finish: {exc!r})")
