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
# workers than cores fill the cores' idle time (fresh clones on a 2-core VM, 2026-11-28/29:
# 14 min 37 s on two workers, 11 min 18 s on three, 10 min 51 s on four with 1,390 tests;
# with 1,485 tests 12 min 19 s of pytest on four and 11 min 50 s on five, the MySQL 9.7
# and MariaDB 11.8 roots already built, whose first build adds about 35 s;
# docs/developing.md).
test: lint
	@scripts/setup-test-extras.sh
	$(VENV)/pytest -q -n 5 --dist loadfile --durations=15

clean:
	$(VENV)/encbench clean
