"""Where pyspark is installed and which version, without importing it: `import pyspark` loads its whole
SQL layer (about half a second), which a pass that starts no Spark does without."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from functools import cache
from pathlib import Path

from extract.core.errors import TidemarkError


@cache
def pyspark_dir() -> Path:
    """The pyspark package's folder (its jars/, bin/)."""
    found = importlib.util.find_spec("pyspark")
    if found is None or not found.submodule_search_locations:
        raise TidemarkError("pyspark is not installed in this Python environment (pip install pyspark)")
    return Path(next(iter(found.submodule_search_locations)))


@cache
def pyspark_version() -> str:
    return importlib.metadata.version("pyspark")
