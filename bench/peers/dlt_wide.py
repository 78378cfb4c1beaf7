"""One dlt sync of every table of a schema: sql_database source, pyarrow backend, each table incremental
on ModifiedDate and merged into Postgres on its primary key. Run with the bench environment's python;
state lives in --pipelines-dir, so a second call is dlt's incremental sync.

    python dlt_wide.py --source URL --schema NAME --target URL --pipelines-dir DIR
"""

from __future__ import annotations

import argparse
import json
import time

import dlt
import sqlalchemy
from dlt.sources.sql_database import sql_database


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--pipelines-dir", required=True)
    args = parser.parse_args()
    started = time.perf_counter()
    # One engine for every table: given a URL, dlt opens connections per table, and a schema of 1,000
    # tables runs the server out of connections.
    engine = sqlalchemy.create_engine(args.source, pool_size=4)
    source = sql_database(credentials=engine, schema=args.schema, backend="pyarrow", chunk_size=100_000)
    for resource in source.resources.values():
        resource.apply_hints(
            incremental=dlt.sources.incremental("ModifiedDate"), primary_key="id", write_disposition="merge"
        )
    pipeline = dlt.pipeline(
        pipeline_name="bench_wide",
        destination=dlt.destinations.postgres(args.target),
        dataset_name="dlt_wide",
        pipelines_dir=args.pipelines_dir,
    )
    pipeline.run(source, loader_file_format="csv")
    rows = sum(pipeline.last_trace.last_normalize_info.row_counts.values())
    print(json.dumps({"rows": rows, "seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main()
