"""What dbt 1.11 pays for each of its events, cut without changing what it logs or what a callback sees.

dbt makes tens of events per node (each query, its status, each connection), and writes every one to
logs/dbt.log (its file log is at debug level by default). The four costs below grow with them. On the
first pass over 300 tables (605 nodes), with them cut, dbt's process took 21 to 24 s of CPU instead of
27 to 30 s.

- **The event** (`BaseEvent.__init__`) turns its fields into a protobuf message through protobuf's JSON
  parser (`ParseDict`). The message's own constructor takes the same fields, nested ones included, and
  builds the same message about six times faster; fields it refuses go to dbt's own code.
- **The message a logger and a callback receive** (`msg_from_base_event`) is built the same way, from a
  dict with the time as text. Its fields are set directly here, the time as the same microsecond.
- **Each line logged** is cleared of secrets (the values of `DBT_ENV_SECRET_` variables), which dbt
  finds by decoding every variable of the environment, for every line of every log. They are found
  again here only when the environment has changed since they were last found.
- **dbt's file log** asks, before each line, whether the file must roll over: two looks at the file's
  path, the line formatted, a seek and a text stream's position. The same question is asked of the open
  file's size (one `fstat`), with the same limit and the same line length.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from logging import LogRecord
from logging.handlers import RotatingFileHandler
from typing import Any

from extract.config.environment import environment_as_held
from extract.runtime.dbt_replacements import in_place, put_in_place


class SizedRotatingFileHandler(RotatingFileHandler):
    """dbt's rotating file log, told when to roll over by the open file's size."""

    def shouldRollover(self, record: LogRecord) -> bool:
        if self.stream is None:  # opened on first use, as RotatingFileHandler does
            self.stream = self._open()
        if self.maxBytes <= 0:
            return False
        status = os.fstat(self.stream.fileno())
        if not stat.S_ISREG(status.st_mode):  # a log sent to a device or a pipe never rolls over
            return False
        return status.st_size + len(self.format(record)) + 1 >= self.maxBytes


def event_message(event: Any, level: Any = None) -> Any:
    """What dbt_common's `msg_from_base_event` returns: the event's message with its info (level, text,
    invocation, metadata, time, process, thread, code, name), built field by field."""
    from dbt_common.events.base_types import get_global_metadata_vars
    from dbt_common.invocation import get_invocation_id

    kind = type(event).__name__
    message = getattr(event.PROTO_TYPES_MODULE, f"{kind}Msg")()
    info = message.info
    info.level = level.value if level else event.level_tag().value
    info.msg = event.message()
    info.invocation_id = get_invocation_id()
    info.extra.update(get_global_metadata_vars())
    microseconds = time.time_ns() // 1000  # dbt's time is to the microsecond
    info.ts.seconds, info.ts.nanos = divmod(microseconds, 1_000_000)
    info.ts.nanos *= 1000
    info.pid = os.getpid()
    info.thread = threading.current_thread().name
    info.code = event.code()
    info.name = kind
    message.data.CopyFrom(event.pb_msg)
    return message


class EnvironmentSecrets:
    """dbt_common's `env_secrets`, found again only when the environment differs from the one they were
    found in (a comparison of the two, in C, costs far less than decoding every variable)."""

    def __init__(self, find: Callable[[], list[str]]) -> None:
        self._find = find
        self._found: tuple[dict[Any, Any] | None, list[str]] = (None, [])

    def __call__(self) -> list[str]:
        environment = environment_as_held()
        if environment is None:  # not CPython's os.environ: nothing to compare with
            return self._find()
        seen, secrets = self._found  # one tuple, so that threads never pair one's secrets with another's
        if seen != environment:
            seen = dict(environment)
            secrets = self._find()
            self._found = (seen, secrets)
        return list(secrets)


def event_init(dbt_init: Callable[..., None]) -> Callable[..., None]:
    """BaseEvent's constructor: the message built by its constructor from the same fields, as dbt's
    would; positional text, and fields the constructor refuses as they are, by dbt's own."""

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        kind = type(self).__name__
        if args:  # dbt's Formatting event takes its text so
            dbt_init(self, *args, **kwargs)
            return
        try:
            built = getattr(self.PROTO_TYPES_MODULE, kind)(**kwargs)
        except Exception:  # a value the constructor will not take as it is: dbt's own parse decides
            dbt_init(self, *args, **kwargs)
            return
        object.__setattr__(self, "pb_msg", built)

    return init


def install() -> None:
    """Put the four in place of dbt's own, in the process that runs dbt (dbt imported)."""
    from dbt_common.events import event_manager, functions, logger
    from dbt_common.events.base_types import BaseEvent
    from dbt_common.exceptions import env_secrets

    if in_place(BaseEvent.__init__):
        return
    init = event_init(BaseEvent.__init__)
    replacements: list[tuple[Any, str, Any]] = [
        (event_manager, "msg_from_base_event", event_message),
        (BaseEvent, "__init__", init),
        (logger, "RotatingFileHandler", SizedRotatingFileHandler),
        (functions, "env_secrets", EnvironmentSecrets(env_secrets)),
    ]
    put_in_place(replacements)
