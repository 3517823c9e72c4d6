#!/usr/bin/env bash
# The test command of the README: pytest and the lit suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pytest -q -n 2 tests
lit -q lit_tests
