"""The peers tidemark is measured against, each run in its own environment (.venv-bench)."""
