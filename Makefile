# One command per job: `make run` chats in the terminal, `make test` runs every check.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test check lint types unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/mnemogate chat --jobs inline

lint: install
	$(BIN)/ruff check gateway workers providers tests
	$(BIN)/ruff format --check gateway workers providers tests

types: install
	$(BIN)/mypy

unit: install
	$(BIN)/pytest -m "not integration"

test: lint types
	$(BIN)/pytest

check: test

bench: install
	$(BIN)/python -m tests.benchmarks

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
