"""`make bench`: tidemark against raw COPY, dlt and Sling on one generated table (not part of `make test`)."""
