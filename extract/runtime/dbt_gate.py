"""A run of dbt started while the pass still lands, held before it touches the database until the pass
says what landed, or let go at once to merge each table as it lands (runtime/dbt_flow.py).

A run's first second is dbt's own Python: the graph of the project and the nodes its selection picks
(each selector matched against every node). Once the pass knows which tables will land (every one its
check found rows for), that second can overlap the landing. dbt touches no database before the event
that opens the run of the nodes (ConcurrencyLine, before the schemas, the relation cache and the
on-run-start hooks), so the run waits there for the pass's word: ("go", models, quiet, stdout_is_data),
or ("drop",) when nothing is to run after all, or ("flow",) to go on at once as a flow. When the word
asks for the run as it was started, the run goes on; otherwise it is stopped there (nothing ran,
nothing was written) and the word is run afresh. dbt's output is held until the run goes on, so that a
stopped run prints nothing.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TextIO

from extract.runtime.dbt_flow import Flow, flowing

#: The dbt commands whose run can be held: they build the graph and select before any query.
HELD_COMMANDS = frozenset({"build", "run", "test", "snapshot", "seed"})
#: Those whose run can flow (runtime/dbt_flow.py): they merge the replicas, each as its table lands.
FLOWING_COMMANDS = frozenset({"build", "run"})
#: dbt's event that opens the run of the nodes: none of the run's queries has been sent yet.
OPENING_EVENT = "ConcurrencyLine"

Word = tuple[Any, ...]


class Stopped(Exception):
    """The held run is not the one the pass asks for: stopped before it touched the database."""


class HeldOutput(io.TextIOBase):
    """dbt's standard output, held until the run goes on (`release`), then written through."""

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self._held: list[str] | None = []

    def write(self, text: str) -> int:
        if self._held is None:
            self._target.write(text)
        else:
            self._held.append(text)
        return len(text)

    def flush(self) -> None:
        if self._held is None:
            self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()

    def release(self) -> None:
        held, self._held = self._held or [], None
        self._target.write("".join(held))
        self._target.flush()


class Gate:
    """Holds a run started for `started` at dbt's opening event until the pass's word; `same` says
    whether a word asks for that run, as the project is now."""

    def __init__(self, connection: Connection, started: Word, same: Callable[[Word, Word], bool]) -> None:
        self._connection = connection
        self._started = started
        self._same = same
        #: The pass's word, once heard (for a flow, its last: flowed or drop).
        self.word: Word | None = None
        self.opened = False
        self.stopped = False
        self.output: HeldOutput | None = None
        #: The run's flow, when the pass asked for one (`flow_over`: the pass's words on it all heard).
        self.flow: Flow | None = None
        self._flow_over: threading.Thread | None = None
        self._heard_all = False

    def hold(self, target: TextIO) -> HeldOutput:
        self.output = HeldOutput(target)
        return self.output

    def _first_word(self) -> Word:
        """The pass's first word. Asks the run has answered already (check, parse) are passed over;
        EOFError when the pass has ended."""
        while self.word is None:
            message = self._connection.recv()
            if message[0] in {"go", "drop", "flow"}:
                self.word = message
                self.flow = Flow(self._started[1]) if message[0] == "flow" else None
        return self.word

    def wait(self) -> Word:
        """The pass's word; for a flow, its last, once all its words are heard."""
        word = self._first_word()
        if self.flow is not None and not self._heard_all:
            if self._flow_over is None:  # the run never went on: the words are heard all the same
                self.word = self.flow.hear(self._connection)
            else:
                self._flow_over.join()
            self._heard_all = True
        return self.word or word

    def callback(self, event: Any) -> None:
        """dbt's callback: at the opening event, wait for the word, then go on (as a flow when asked) or
        stop the run."""
        if self.opened or self.stopped or event.info.name != OPENING_EVENT:
            return
        word = self._first_word()
        if word[0] == "flow":
            word = ("go", *self._started[1:])  # the run as started, its tables merged as they land
        if not self._same(self._started, word):
            self.stopped = True
            raise Stopped("the pass asks for another run")
        self.opened = True
        if self.flow is not None:
            self.flow.threads = max(1, int(getattr(event.data, "num_threads", 1) or 1))
            flowing(self.flow)
            self._flow_over = threading.Thread(target=self._hear_flow, name="dbt-flow", daemon=True)
            self._flow_over.start()
        self.release()

    def _hear_flow(self) -> None:
        assert self.flow is not None
        self.word = self.flow.hear(self._connection)

    def unmerged(self) -> tuple[str, ...]:
        """The run is over (its flow, if any, no longer asked): for a flow, the replicas it did not merge,
        those it skipped, or all when it never went on."""
        flowing(None)
        if self.flow is None:
            return ()
        return tuple(sorted(self.flow.skipped if self.opened else self._started[1]))

    def release(self) -> None:
        """What the run printed so far, written out."""
        if self.output is not None:
            self.output.release()
