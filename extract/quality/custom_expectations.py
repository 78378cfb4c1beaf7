"""tidemark's own expectations, registered with great_expectations when this module is imported:

- `expect_replica_content_to_match_source`: the replica's row count and content checksum (the
  figures `verify` compares, computed in the target over the batch) equal the source's, which the
  checkpoint passes as suite parameters;
- `expect_committed_watermark_to_be_recent`: the table's committed watermark was read from the
  source no longer ago than a limit, from the state tidemark keeps in the target."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import sqlalchemy as sa
from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.execution_engine.sqlalchemy_execution_engine import SqlAlchemyExecutionEngine
from great_expectations.expectations.expectation import BatchExpectation
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider
from great_expectations.render.components import LegacyRendererType, RenderedStringTemplateContent
from great_expectations.render.renderer.renderer import renderer

from extract.core.state_schema import DEFAULT_STATE_SCHEMA, StateSchema
from extract.project.verify import CANONICAL_KINDS
from extract.source.dialects.postgres import PostgresDialect
from extract.source.dialects.postgres_canonical import canonical_text

_TARGET = PostgresDialect()

# The watermark's age: since the start of the run whose watermark is committed, or a later check that
# found the source unchanged (as the lag metric).
_WATERMARK_AGE = (
    "select extract(epoch from clock_timestamp() - fresh.fresh_as_of) "
    "from {freshness} as fresh where fresh.table_key = :table_key"
)


def _watermark_age(state_schema: str | None) -> sa.TextClause:
    return sa.text(StateSchema(state_schema or DEFAULT_STATE_SCHEMA).text(_WATERMARK_AGE))


def canonical_texts(canonical_columns: list[list[Any]]) -> list[str]:
    """[[column, kind, length], ...] as written in a suite -> the replica side's canonical texts."""
    texts = []
    for column, kind, length in canonical_columns:
        if kind not in CANONICAL_KINDS or not (length is None or isinstance(length, int)):
            raise ValueError(f"canonical column {column!r}: unknown form {kind!r} (length {length!r})")
        texts.append(canonical_text(_TARGET.quote(str(column)), kind, length))
    return texts


class ReplicaContentChecksum(TableMetricProvider):
    metric_name = "tidemark.content_checksum"
    value_keys = ("canonical_columns",)

    @metric_value(engine=SqlAlchemyExecutionEngine)
    def _sqlalchemy(
        cls,
        execution_engine: SqlAlchemyExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> dict[str, Any]:
        batch, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
        aggregates = _TARGET.checksum_aggregates(canonical_texts(metric_value_kwargs["canonical_columns"]))
        rows, checksum = execution_engine.execute_query(
            sa.select(sa.literal_column(aggregates)).select_from(batch)
        ).one()
        return {"rows": int(rows), "checksum": str(checksum)}


class CommittedWatermarkAge(TableMetricProvider):
    metric_name = "tidemark.committed_watermark_age"
    value_keys = ("table_key", "state_schema")

    @metric_value(engine=SqlAlchemyExecutionEngine)
    def _sqlalchemy(
        cls,
        execution_engine: SqlAlchemyExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> float | None:
        row = execution_engine.execute_query(
            _watermark_age(metric_value_kwargs.get("state_schema")).bindparams(
                table_key=metric_value_kwargs["table_key"]
            )
        ).one_or_none()
        return None if row is None or row[0] is None else round(float(row[0]), 1)


class _SentenceExpectation(BatchExpectation):
    """What tidemark's expectations share: Data Docs show each as one sentence of its arguments."""

    sentence: ClassVar[str]
    library_metadata: ClassVar[dict[str, Any]] = {"maturity": "production", "tags": ["tidemark"]}

    @abstractmethod
    def _validate(
        self, metrics: dict[str, Any], runtime_configuration: dict[str, Any] | None = None, execution_engine: Any = None
    ) -> dict[str, Any]: ...

    @classmethod
    @renderer(renderer_type=LegacyRendererType.PRESCRIPTIVE)
    def _prescriptive_renderer(
        cls, configuration: Any = None, result: Any = None, runtime_configuration: Any = None, **kwargs: Any
    ) -> list[RenderedStringTemplateContent]:
        params = dict(configuration.kwargs) if configuration is not None else {}
        return [
            RenderedStringTemplateContent(
                content_block_type="string_template",
                string_template={"template": cls.sentence, "params": params, "styling": {}},
            )
        ]


class ExpectReplicaContentToMatchSource(_SentenceExpectation):
    """The replica's rows and content checksum equal the source's."""

    canonical_columns: list[list[Any]]
    source_rows: int | SuiteParameterDict  # type: ignore[type-arg]  # GX's alias of a bare dict
    source_checksum: str | SuiteParameterDict  # type: ignore[type-arg]

    metric_dependencies = ("tidemark.content_checksum",)
    success_keys = ("canonical_columns", "source_rows", "source_checksum")
    args_keys = ("source_rows", "source_checksum")
    sentence = "Content must match the source: $source_rows rows, checksum $source_checksum."

    def _validate(
        self, metrics: dict[str, Any], runtime_configuration: dict[str, Any] | None = None, execution_engine: Any = None
    ) -> dict[str, Any]:
        observed = metrics["tidemark.content_checksum"]
        expected = self._get_success_kwargs()
        same = observed["rows"] == expected["source_rows"] and observed["checksum"] == str(expected["source_checksum"])
        seen = f"{observed['rows']} rows, checksum {observed['checksum']}"
        return {"success": same, "result": {"observed_value": seen}}


class ExpectCommittedWatermarkToBeRecent(_SentenceExpectation):
    """The table's committed watermark was read from the source at most max_age_seconds ago."""

    table_key: str
    max_age_seconds: float
    #: The project's state schema (TIDEMARK_STATE_SCHEMA), which holds the committed watermarks.
    state_schema: str = DEFAULT_STATE_SCHEMA

    metric_dependencies = ("tidemark.committed_watermark_age",)
    success_keys = ("table_key", "max_age_seconds", "state_schema")
    args_keys = ("table_key", "max_age_seconds")
    sentence = "The committed watermark must be at most $max_age_seconds seconds old."

    def _validate(
        self, metrics: dict[str, Any], runtime_configuration: dict[str, Any] | None = None, execution_engine: Any = None
    ) -> dict[str, Any]:
        age = metrics["tidemark.committed_watermark_age"]
        limit = self._get_success_kwargs()["max_age_seconds"]
        observed = "no committed watermark" if age is None else f"{age} s"
        return {"success": age is not None and age <= limit, "result": {"observed_value": observed}}
