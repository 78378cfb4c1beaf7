"""tidemark extract: read changed rows from SQL Server and land them in Postgres staging."""

__version__ = "0.1.0"
