"""dbt names the module that declared each of an adapter's behavior flags by walking the stack with
`inspect.stack()`, which first reads the source file and line of every frame, then looks at a few. A test
worker's stack (pytest and xdist, whose frames have no file, each a scan of every imported module) is
deep, and the commands the tests fork inherit it: sampled over a third of the suite, that walk took 79 of
the 125 seconds the forked commands spent in Python.

`look_up_flag_sources_lazily` gives dbt the same answer, the first module on the stack other than
dbt's own flags module, from the frames it looks at alone."""

from __future__ import annotations

import inspect
import sys


def look_up_flag_sources_lazily() -> None:
    from dbt_common import behavior_flags

    def first_other_module() -> str:
        frame = sys._getframe(1)
        while frame is not None:
            module = inspect.getmodule(frame)
            if module is not None and module.__name__ != behavior_flags.__name__:
                return module.__name__
            frame = frame.f_back
        return "Unknown"

    behavior_flags.BehaviorFlagRendered._default_source = staticmethod(first_other_module)  # type: ignore[method-assign]
