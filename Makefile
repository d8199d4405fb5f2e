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

# Two workers, each taking whole test files (module fixtures start their servers once): the
# integration tests mostly wait on servers, clusters and fixed-length runs, so two at once
# halve the wall time on two cores (17 min 53 s serial, 10 min 8 s so, measured).
test: lint
	@scripts/setup-test-extras.sh
	$(VENV)/pytest -q -n 2 --dist loadfile --durations=30

clean:
	$(VENV)/encbench clean
