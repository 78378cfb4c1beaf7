"""Prometheus metrics of an `--every` process (`--metrics-port`, or TIDEMARK_METRICS_PORT), served by
prometheus_client: a collector reads them from the state in the target at each scrape, so that they hold
for every process that syncs there:

- `tidemark_lag_seconds{table}`: seconds since the committed watermark was read from the source (the
  start of the latest merged run), or since a later pass found nothing to read: how old the newest
  change the replica surely holds can be;
- `tidemark_rows_landed_total{table}` and `tidemark_rows_merged_total{table,change}`;
- `tidemark_last_success_timestamp_seconds{table}`: when its latest merge committed;
- `tidemark_runs_failed_total{table}` and `tidemark_last_run_failed{table}`;
- `tidemark_syncs_total` and `tidemark_sync_failures_total`: this process's passes.

It listens on TIDEMARK_METRICS_HOST (default 127.0.0.1): set 0.0.0.0 for a Prometheus on another host."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable, Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

import psycopg
from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, ThreadingWSGIServer

from extract.config.spec import METRICS_HOST, METRICS_PORT
from extract.config.urls import DatabaseUrl
from extract.core.errors import TidemarkError
from extract.core.state_schema import StateSchema

_PER_TABLE = """
select
    runs.source_schema || '.' || runs.source_table as source_table,
    coalesce(sum(runs.rows_landed) filter (where runs.status = 'landed'), 0) as rows_landed,
    count(*) filter (where runs.status = 'failed') as runs_failed,
    (array_agg(runs.status order by runs.run_id desc))[1] = 'failed' as last_failed,
    coalesce(merged.inserted, 0) as inserted,
    coalesce(merged.updated, 0) as updated,
    coalesce(merged.deleted, 0) as deleted,
    merged.last_success,
    extract(epoch from clock_timestamp() - fresh.fresh_as_of) as lag
from {runs} as runs
left join (
    select
        m.table_key,
        sum(m.rows_inserted) as inserted,
        sum(m.rows_updated) as updated,
        sum(m.rows_deleted) as deleted,
        extract(epoch from max(m.merged_at)) as last_success
    from {merge_log} as m
    group by m.table_key
) as merged on runs.table_key = merged.table_key
left join {freshness} as fresh on runs.table_key = fresh.table_key
where runs.migration_type <> 'reconcile'
group by runs.source_schema, runs.source_table, merged.inserted, merged.updated, merged.deleted,
    merged.last_success, fresh.fresh_as_of
order by 1
"""


def metrics_port_setting(given: str | None, every: bool) -> int | None:
    """--metrics-port, else TIDEMARK_METRICS_PORT; None when neither is set, or without --every."""
    if given is not None and not every:
        raise TidemarkError("--metrics-port serves an --every process's metrics: give --every too")
    if not every:
        return None
    return METRICS_PORT.read() if given is None else METRICS_PORT.parse(given, "--metrics-port")


def metrics_host() -> str:
    return METRICS_HOST.value()


class _Families:
    """This scrape's metric families, filled row by row."""

    def __init__(self) -> None:
        table = ["table"]
        self.lag = GaugeMetricFamily(
            "tidemark_lag_seconds", "Seconds since the committed watermark was read from the source.", labels=table
        )
        self.landed = CounterMetricFamily(
            "tidemark_rows_landed_total", "Rows landed in staging by runs that landed.", labels=table
        )
        self.merged = CounterMetricFamily(
            "tidemark_rows_merged_total",
            "Rows the merges inserted, updated or deleted in the replica.",
            labels=[*table, "change"],
        )
        self.last_success = GaugeMetricFamily(
            "tidemark_last_success_timestamp_seconds", "When the table's latest merge committed.", labels=table
        )
        self.failed = CounterMetricFamily("tidemark_runs_failed_total", "Runs of the table that failed.", labels=table)
        self.last_failed = GaugeMetricFamily(
            "tidemark_last_run_failed", "1 when the table's latest run failed.", labels=table
        )

    def add(self, row: tuple[Any, ...]) -> None:
        table, landed, failed, last_failed, inserted, updated, deleted, last_success, lag = row
        at = [str(table)]
        self.landed.add_metric(at, float(landed))
        for change, value in (("inserted", inserted), ("updated", updated), ("deleted", deleted)):
            self.merged.add_metric([*at, change], float(value))
        self.failed.add_metric(at, float(failed))
        self.last_failed.add_metric(at, 1.0 if last_failed else 0.0)
        if last_success is not None:
            self.last_success.add_metric(at, float(last_success))
        if lag is not None:
            self.lag.add_metric(at, float(lag))

    def all(self) -> Iterator[Metric]:
        yield from (self.lag, self.landed, self.merged, self.last_success, self.failed, self.last_failed)


class Metrics:
    """A prometheus_client collector: each scrape runs the query on the state; the process counts its passes here."""

    def __init__(self, target: DatabaseUrl, state: StateSchema, port: int) -> None:
        self.target = target
        self.state = state
        self.port = port
        self.syncs = 0
        self.failures = 0
        self._lock = threading.Lock()
        self.registry = CollectorRegistry()
        self.registry.register(self)

    def count_pass(self, exit_code: int) -> None:
        with self._lock:
            self.syncs += 1
            self.failures += exit_code != 0

    def collect(self) -> Iterable[Metric]:
        """Raises psycopg.Error when the target cannot be read: the scrape then fails as a whole."""
        with psycopg.connect(self.target.libpq_url, autocommit=True) as conn:
            rows = conn.execute(self.state.sql(_PER_TABLE)).fetchall() if self.state.has(conn, "runs") else []
        families = _Families()
        for row in rows:
            families.add(row)
        yield from families.all()
        with self._lock:
            syncs, failures = self.syncs, self.failures
        yield CounterMetricFamily("tidemark_syncs_total", "Sync passes of this process.", value=syncs)
        yield CounterMetricFamily(
            "tidemark_sync_failures_total",
            "Sync passes of this process that did not end with exit code 0.",
            value=failures,
        )


def _app(metrics: Metrics) -> WSGIApplication:
    """prometheus_client's app at /metrics, answering 503 while the target cannot be read (rather than an
    error page, and a traceback on the console at every scrape)."""
    serve: WSGIApplication = make_wsgi_app(metrics.registry)

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != "/metrics":
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"metrics are at /metrics\n"]
        try:
            return serve(environ, start_response)
        except psycopg.Error as exc:  # the target down for a while: say so, keep serving
            start_response("503 Service Unavailable", [("Content-Type", CONTENT_TYPE_PLAIN_0_0_4)])
            return [f"# target unreachable: {type(exc).__name__}\n".encode()]

    return app


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # a scrape every few seconds is not worth a line on the console


class MetricsServer:
    """`GET /metrics` on host:port, served by prometheus_client in a thread of its own, until `stop`."""

    def __init__(self, metrics: Metrics, host: str) -> None:
        port = metrics.port
        try:
            # As prometheus_client's start_http_server: an IPv6 host listens on IPv6.
            family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
            server_class = type("MetricsHTTPServer", (ThreadingWSGIServer,), {"address_family": family})
            self._server: WSGIServer = make_server(host, port, _app(metrics), server_class, handler_class=_QuietHandler)
        except OSError as exc:
            raise TidemarkError(f"metrics port {port} on {host}: {exc.strerror or exc}") from None
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
