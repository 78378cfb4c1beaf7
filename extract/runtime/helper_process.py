"""A helper process forked from this one, that ends with it.

Forked, not started afresh: it begins with the modules this process imported, at no cost. It must be
forked before this process starts a thread (a lock another thread holds would stay held in the fork)
or opens a connection (the fork would share it).
"""

from __future__ import annotations

import atexit
import ctypes
import multiprocessing.util
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing import Pipe
from multiprocessing.connection import Connection

#: prctl's option that has the kernel signal a process when the one that forked it ends.
_PR_SET_PDEATHSIG = 1


def fork_helper(serve: Callable[[Connection], None]) -> tuple[int, Connection]:
    """Fork a process that runs `serve` with its end of a pipe, and ends when it returns, when this
    process closes the pipe or when this process ends (even by SIGKILL). Its process id and our end.
    It runs multiprocessing's clean-up as it ends (semaphores it made are unlinked), none of ours."""
    if threading.active_count() > 1:
        raise RuntimeError("a helper process is forked before any thread starts")
    ours, theirs = Pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid != 0:
        theirs.close()
        return pid, ours
    code = 0
    try:
        ours.close()
        _end_with(parent)
        atexit._clear()  # the exit handlers are the pass's, for its connections and JVM
        multiprocessing.util._finalizer_registry.clear()  # type: ignore[attr-defined]
        # SIGTERM and SIGUSR1 are the pass's to act on (--every ends after its sync, or syncs now): the
        # helper goes on with what it was asked, and ends with the pass.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        serve(theirs)
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # said on stderr; the pass sees the pipe close
        traceback.print_exc()
        code = 1
    finally:
        # What it made that outlives it otherwise (dbt's semaphores, which multiprocessing's resource
        # tracker would report as leaked); not the interpreter's whole tear-down, which changes nothing.
        multiprocessing.util._exit_function()  # type: ignore[attr-defined]
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _end_with(parent: int) -> None:
    """Have the kernel kill this process when `parent` ends, where it can (Linux); elsewhere it ends when
    it finds the pipe closed."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the call above
        os._exit(0)


def end_helper(pid: int, connection: Connection, grace: float) -> None:
    """Close the pipe, so that the helper ends once it is done with what it does; after `grace` seconds
    it is killed. Then reap it."""
    connection.close()
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                return
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        return
