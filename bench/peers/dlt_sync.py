"""One dlt sync of bench.Items: sql_database source, pyarrow backend, incremental on ModifiedDate,
merged into Postgres on Id. Run with the bench environment's python; state lives in --pipelines-dir,
so a second call is dlt's incremental sync.

    python dlt_sync.py --source URL --target URL --pipelines-dir DIR
"""

from __future__ import annotations

import argparse
import json
import time

import dlt
from dlt.sources.sql_database import sql_table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--pipelines-dir", required=True)
    args = parser.parse_args()
    started = time.perf_counter()
    items = sql_table(
        credentials=args.source,
        schema="bench",
        table="Items",
        backend="pyarrow",
        chunk_size=100_000,
        incremental=dlt.sources.incremental("ModifiedDate"),
    )
    items.apply_hints(primary_key="Id", write_disposition="merge")
    pipeline = dlt.pipeline(
        pipeline_name="bench_items",
        destination=dlt.destinations.postgres(args.target),
        dataset_name="dlt_bench",
        pipelines_dir=args.pipelines_dir,
    )
    # COPY-based csv is dlt's fastest way into Postgres.
    pipeline.run(items, loader_file_format="csv")
    rows = pipeline.last_trace.last_normalize_info.row_counts.get("items", 0)
    print(json.dumps({"rows": rows, "seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main()
