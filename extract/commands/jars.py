"""`python -m extract jars`: the jars a Spark session of the extract needs, for spark-submit."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from extract.spark import jar_paths


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m extract jars",
        description="Print tidemark's landing jar (compiled first if missing) and the JDBC drivers, "
        "TIDEMARK_JARS included: for spark-submit's --jars (comma-separated, the default) and "
        "--driver-class-path (--separator :).",
    )
    parser.add_argument("--separator", default=",", help="between paths (default ',')")
    args = parser.parse_args(argv)
    extra = tuple(j for j in os.environ.get("TIDEMARK_JARS", "").split(":") if j)
    print(args.separator.join(jar_paths(extra)))
    return 0
