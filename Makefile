# The two commands of the README: `make demo` runs the main job, `make test` the tests.
# Both do the set-up first (idempotent, quick when already done).
.PHONY: setup demo test lint unit integration clean

VENV := .venv/bin

setup:
	@scripts/setup.sh

demo: setup
	$(VENV)/encbench run

lint: setup
	$(VENV)/ruff check encbench tests benchmarks
	$(VENV)/ruff format --check encbench tests benchmarks
	$(VENV)/mypy encbench

unit: setup
	$(VENV)/pytest -q -m "not integration"

integration: setup
	$(VENV)/pytest -q -m integration

# Five workers, each taking whole test files (module fixtures start their servers once):
# the integration tests mostly wait on servers, clusters and fixed-length runs, so more
# workers than cores fill the cores' idle time (a fresh clone, 2026-11-29: 10 min 16 s in all
# on one 2-core VM, 11 min 53 s to 12 min 51 s on a slower one; docs/developing.md has the
# runs on 2 to 5 workers).
test: lint
	@scripts/setup-test-extras.sh
	$(VENV)/pytest -q -n 5 --dist loadfile --durations=15

clean:
	$(VENV)/encbench clean
