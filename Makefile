# tidemark: `make demo` and `make test` set up everything they need.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JDBC_JAR := /usr/share/java/postgresql.jar
export XDG_RUNTIME_DIR ?= /tmp/tidemark-runtime-$(shell id -u)
export PATH := $(CURDIR)/$(BIN):$(PATH)
ENV := source .tidemark/demo.env &&

.PHONY: install demo stop test checks bench bench-history bench-peers docs clean

SPARK_ARCHIVE := $(VENV)/.spark-archive

JAVAC := $(or $(shell command -v javac),/usr/bin/javac)
LANDING_SOURCES := $(wildcard extract/landing/jvm/tidemark/landing/*.java)

# The plotting libraries `python -m extract report` inlines into its page, pinned by the lock file.
REPORT_ASSETS := $(VENV)/report-assets/.installed
NPM := $(or $(shell command -v npm),/usr/bin/npm)
# Headless Chromium opens the report page and the docs in the browser tests.
CHROMIUM := /usr/bin/chromium
# Debian's PostgreSQL 15, with pgcrypto (the embedded server has none): the state key's tests run a target on it.
PG15 := /usr/lib/postgresql/15/bin/pg_ctl

install: $(STAMP) $(JDBC_JAR) $(JAVAC) $(SPARK_ARCHIVE) $(REPORT_ASSETS) $(CHROMIUM) $(PG15)

# uv installs the same pinned set as pip, in half the time (downloads in parallel).
UV_VERSION := 0.13.9

# Bytecode is compiled at install, as pip does (uv does not by default): otherwise every process (each
# sync, each Spark worker) compiles dbt, pyspark and great_expectations again where the environment sets
# PYTHONDONTWRITEBYTECODE, and the first run of each pays for it anyway where it does not.
#
# pyspark comes as a source archive only: the wheel built from it holds about 400 MB of jars, which
# deflating would cost half the install's time, to be inflated again at once; stored, it is the same files.
# uv fetches that archive again at each install and keeps each build (1.4 GB) in its cache; the ones no
# longer in use are pruned (56 of them had filled 53 GB of a disk).
$(STAMP): requirements.txt requirements-dev.txt constraints.txt build-constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -c constraints.txt -b build-constraints.txt \
		--config-setting=--build-option=--compression=stored -r requirements.txt -r requirements-dev.txt
	$(BIN)/uv cache prune --quiet
	@touch $@

# Builds the landing jar (extract/landing/jvm), then the class archive: Spark's driver starts in about
# half the time with its classes in a JVM archive (AppCDS).
$(SPARK_ARCHIVE): $(STAMP) $(JDBC_JAR) $(JAVAC) $(LANDING_SOURCES) extract/runtime/source_class_archive.py
	mkdir -p $(XDG_RUNTIME_DIR)
	$(BIN)/python -m extract spark-archive
	@touch $@

$(REPORT_ASSETS): extract/report_page/package.json extract/report_page/package-lock.json | $(NPM)
	mkdir -p $(VENV)/report-assets
	cp extract/report_page/package.json extract/report_page/package-lock.json $(VENV)/report-assets/
	cd $(VENV)/report-assets && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(NPM):
	@echo "installing Node.js and npm for the report's plotting libraries (Debian packages nodejs, npm)"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm

$(CHROMIUM):
	@echo "installing Chromium for the browser tests (Debian package chromium)"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

$(PG15):
	@echo "installing PostgreSQL 15 with pgcrypto for the state key's tests (Debian package postgresql-15)"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15

$(JAVAC):
	@echo "installing a JDK to compile the landing jar (Debian package openjdk-17-jdk-headless)"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless

$(JDBC_JAR):
	@echo "installing the PostgreSQL JDBC driver (Debian package libpostgresql-jdbc-java)"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpostgresql-jdbc-java

demo: install
	mkdir -p $(XDG_RUNTIME_DIR)
	$(BIN)/python -m extract demo setup --size $${DEMO_SIZE:-2000}
	$(BIN)/python -m extract init
	@echo "== first sync: extract, a snapshot for the as-of history, dbt build, row-count checks, docs"
	$(ENV) $(BIN)/python -m extract --all
	$(ENV) $(BIN)/python -m extract --table dbo.Customers --snapshot-date $$(date -u -d yesterday +%F)
	$(ENV) $(BIN)/dbt build --quiet
	$(ENV) $(BIN)/python -m extract check --all
	$(ENV) $(BIN)/dbt docs generate --quiet
	$(ENV) $(BIN)/python -m extract status
	@echo "== source changes, then an incremental sync"
	$(ENV) $(BIN)/python -m extract demo change --seed $$RANDOM
	$(ENV) $(BIN)/python -m extract --all
	$(ENV) $(BIN)/python -m extract --table dbo.Customers --snapshot-date $$(date -u +%F)
	$(ENV) $(BIN)/dbt build --quiet
	$(ENV) $(BIN)/python -m extract check --all
	$(ENV) $(BIN)/python -m extract verify --all
	$(ENV) $(BIN)/python -m extract status
	@echo "== done. psql into the source and the replicas:  source .tidemark/demo.env && psql \$$TIDEMARK_TARGET_URL"

stop: install
	$(BIN)/python -m extract server stop

# The Python packages install beside the report's (uv keeps one core busy), and the class archives are
# written beside ruff and mypy: each keeps one core busy for about 30 seconds.
test: $(JDBC_JAR) $(JAVAC) $(CHROMIUM) $(PG15)
	mkdir -p $(XDG_RUNTIME_DIR)
	$(MAKE) --no-print-directory -j2 $(STAMP) $(REPORT_ASSETS)
	$(MAKE) --no-print-directory -j2 $(SPARK_ARCHIVE) checks
	$(BIN)/python -m pytest -q -n 2 --dist worksteal

checks: $(STAMP)
	$(BIN)/ruff check extract tests bench docs/examples
	$(BIN)/mypy

# Not part of `make test`: 10M rows by default (BENCH_ROWS=1000000 make bench for a quick run).
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed

bench-peers: $(BENCH_STAMP)

$(BENCH_STAMP): requirements-bench.txt constraints-bench.txt
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints-bench.txt \
		-r requirements-bench.txt
	@touch $@

bench: install bench-peers
	mkdir -p $(XDG_RUNTIME_DIR)
	$(BIN)/python -m bench --rows $${BENCH_ROWS:-10000000}

# 30 snapshot dates of 1,000,000 keys applied to the as-of history in random order.
bench-history: install
	mkdir -p $(XDG_RUNTIME_DIR)
	$(BIN)/python -m bench.asof_history --keys $${BENCH_KEYS:-1000000} --dates $${BENCH_DATES:-30}

docs: install
	$(ENV) $(BIN)/dbt docs generate && $(ENV) $(BIN)/dbt docs serve --port 8080

clean:
	rm -rf target logs .pytest_cache .mypy_cache .ruff_cache
