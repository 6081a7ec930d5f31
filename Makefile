# The two README commands. Both work on a fresh machine: they create .venv and install what they need.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
SITE    := site
# The application's exact versions, with hashes (runtime + test extra), made by `make lock`.
# pyproject.toml keeps open ranges for library users; this file is what demo and test install.
LOCK    := requirements.lock
# uv installs the lock (hash-checked, as pip would) in about a tenth of pip's time; itself
# pinned, and installed into the venv by pip (docs/testing.md).
UV_VERSION := 0.13.9
UV      := $(BIN)/uv

.PHONY: demo test test-fast fuzz bench coverage coverage-methods venv clean lint chromium lock dist postgresql axe poppler harfbuzz

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(UV): | $(BIN)/python
	$(BIN)/pip install --quiet 'uv==$(UV_VERSION)'

# Re-install when the lock or the project metadata changes (editable install: code changes need
# nothing). Every dependency comes from the lock, hash-checked; then certgen itself, --no-deps.
# Bytecode is compiled here, once: uv does not by default, and where PYTHONDONTWRITEBYTECODE is
# set (CI images often set it) no process writes it, so every `certgen` run, pool worker and
# test process compiled each module it imported from source again (docs/testing.md).
$(STAMP): pyproject.toml $(LOCK) | $(UV)
	$(UV) pip install --python $(BIN)/python --quiet --require-hashes --compile-bytecode -r $(LOCK)
	$(UV) pip install --python $(BIN)/python --quiet --no-deps -e .
	$(BIN)/python -m compileall -q certgen > /dev/null
	touch $(STAMP)

# Refresh the lock (docs/reproducibility.md): `make lock` adds what pyproject.toml newly asks
# for and keeps every other pin; `make lock UPGRADE=1` moves every pin to the newest allowed
# version, UPGRADE=weasyprint only that package. Universal: one lock for Linux, macOS, Windows.
lock: | $(UV)
	$(UV) pip compile pyproject.toml --extra test --generate-hashes --universal \
	  --python-version 3.11 --custom-compile-command 'make lock' --quiet \
	  $(if $(filter 1,$(UPGRADE)),--upgrade,$(if $(UPGRADE),--upgrade-package $(UPGRADE))) \
	  --output-file $(LOCK)

# The sdist, then the wheel built from it (so a file missing from the sdist is missing from the
# wheel too, and tests/test_wheel.py notices): templates, locales, fonts and rules inside.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

venv: $(STAMP)

# The demo site publishes the certgen wheel it was built with (as `make dist` builds it) on its
# registry; the build's own chatter goes to a log, shown only when it fails.
demo: $(STAMP)
	@echo "building the certgen wheel the registry publishes (dist/)"
	@rm -rf dist && $(BIN)/python -m build --outdir dist . > $(VENV)/dist.log 2>&1 || \
	  { cat $(VENV)/dist.log; exit 1; }
	@$(MAKE) --no-print-directory harfbuzz
	@# Prints progress, what was built and the page to open; library log lines stay off the terminal.
	$(BIN)/python -m certgen demo --out $(SITE) --wheel "$$(ls dist/certgen-*-py3-none-any.whl)"

# worksteal: a worker that runs out of tests takes some of the other's, so one long test at the
# end does not leave a core idle.
test: $(STAMP) chromium postgresql axe poppler harfbuzz
	$(BIN)/python -m pytest -n auto --dist worksteal -q

# The suite without the tests marked slow (tests/slow_tests.txt): under 75 s on 2 cores, for the
# edit-test loop (docs/testing.md). `make test` (and CI) still runs everything.
test-fast: $(STAMP) chromium postgresql axe poppler harfbuzz
	$(BIN)/python -m pytest -n auto --dist worksteal -q -m "not slow"

# The fuzz suite at its long budget (3000 examples per input surface; `make test` runs 20).
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -n auto -q tests/test_fuzz.py

# libharfbuzz-subset0 lets WeasyPrint subset fonts with HarfBuzz: about twice as fast, the same
# bytes. Optional (without it fontTools subsets), installed only as root; demo and test use it.
harfbuzz:
	-@if [ "$$(id -u)" = 0 ] && ! ldconfig -p 2>/dev/null | grep -q libharfbuzz-subset; then \
	  (apt-get install -y -qq libharfbuzz-subset0 >/dev/null 2>&1 || true); fi

# The real-browser test needs Debian's chromium; install it once, before the parallel workers
# start (two workers must not race for the dpkg lock). Without root the test says it did not run.
chromium:
	@command -v chromium >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# axe-core (the browser test's accessibility check) comes from npm, pinned with its hash in
# package-lock.json, into node_modules/. Debian 12 ships node without npm: install both with apt
# when npm is missing and we are root; without root the browser test says it did not run.
axe: node_modules/axe-core/axe.min.js

node_modules/axe-core/axe.min.js: package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }
	@if command -v npm >/dev/null 2>&1; then npm ci --no-audit --no-fund --silent && touch $@; \
	  else echo "npm missing and not root: the accessibility check will be skipped"; fi

# The PostgreSQL fleet tests start their own server from Debian's postgresql binaries; install them
# once before the workers start, as for chromium. Without root the tests say they did not run.
postgresql:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

# The signature tests check certgen's verdicts against an independent verifier, poppler's pdfsig
# (Debian poppler-utils); installed once before the workers start, as for chromium.
poppler:
	@command -v pdfsig >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null; }

# The measurement interval's coverage study (docs/spec/uncertainty.md): 500 simulated captures
# per length, 10,000 resamples each, about a minute on 2 cores; then issue 41's study of one
# capture's studentized interval, repeats and tiers on three generators (500 a cell; the
# single-capture cells take the most: about 15 minutes on 2 cores). The suite runs smaller ones.
coverage: $(STAMP)
	$(BIN)/python bench/coverage.py
	$(BIN)/python bench/coverage_repeats.py

# Other interval methods on the same simulated captures (docs/spec/uncertainty.md, "Other
# methods tried"): about 5 minutes at 7,000 frames, 4 at 20,000 (100 captures, 500 resamples).
coverage-methods: $(STAMP)
	$(BIN)/python bench/coverage_methods.py
	$(BIN)/python bench/coverage_methods.py --frames 20000 --captures 100 --resamples 500

bench: $(STAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/bench_build.py
	$(BIN)/python bench/bench_verify.py
	$(BIN)/python bench/bench_scale.py

lint: $(STAMP)
	$(BIN)/ruff check certgen tests bench
	$(BIN)/mypy certgen

clean:
	rm -rf $(VENV) $(SITE) build dist *.egg-info node_modules
