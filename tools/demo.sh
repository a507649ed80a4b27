#!/usr/bin/env bash
# Set up what is missing, then run agents with random actions and save their views.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/tools/setup.sh"
cd "$ROOT" && exec .venv/bin/python examples/demo.py "$@"
