#!/usr/bin/env bash
# Set up what is missing, then run the whole test suite.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/tools/setup.sh"
cd "$ROOT" && exec .venv/bin/python -m pytest "$@"
