"""Import great_expectations wherever tidemark runs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def main_module_named() -> Iterator[None]:
    """great_expectations imports pyspark.sql.connect, which takes a __main__ without a spec
    or a file (``python -c``, a pytest-xdist worker, some schedulers' workers) for a doctest
    run and exits the process with status 0; a name for __main__ during the import avoids it."""
    main = sys.modules["__main__"]
    unnamed = getattr(main, "__spec__", None) is None and not hasattr(main, "__file__")
    if unnamed:
        main.__file__ = "<tidemark>"
    try:
        yield
    finally:
        if unnamed:
            del main.__file__
