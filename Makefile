# The two README commands. Both work on a fresh machine: they create .venv and install what they need.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
SITE    := site

.PHONY: demo test bench venv clean lint chromium postgresql

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Re-install when the project metadata changes (editable install: code changes need nothing).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	@# libharfbuzz-subset0 makes WeasyPrint faster and byte-stable; optional, root only.
	-@if [ "$$(id -u)" = 0 ] && ! ldconfig -p 2>/dev/null | grep -q libharfbuzz-subset; then \
	  (apt-get install -y -qq libharfbuzz-subset0 >/dev/null 2>&1 || true); fi
	@# Prints progress, what was built and the page to open; library log lines stay off the terminal.
	$(BIN)/python -m certgen demo --out $(SITE)

test: $(STAMP) chromium postgresql
	$(BIN)/python -m pytest -n auto -q

# The real-browser test needs Debian's chromium; install it once, before the parallel workers
# start (two workers must not race for the dpkg lock). Without root the test says it did not run.
chromium:
	@command -v chromium >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The PostgreSQL fleet tests start their own server from Debian's postgresql binaries; install them
# once before the workers start, as for chromium. Without root the tests say they did not run.
postgresql:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

bench: $(STAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/bench_build.py
	$(BIN)/python bench/bench_scale.py

lint: $(STAMP)
	$(BIN)/pip install --quiet ruff mypy
	$(BIN)/ruff check certgen tests bench
	$(BIN)/mypy certgen

clean:
	rm -rf $(VENV) $(SITE) build dist *.egg-info
