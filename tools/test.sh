#!/usr/bin/env bash
# Set up what is missing, lint the Python (ruff) and the Lua (luacheck), then run the
# whole test suite; arguments go to pytest (-m "not engine": only the tests without Luanti).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/tools/setup.sh"
cd "$ROOT"
.venv/bin/ruff check --quiet . || { echo "tools/test.sh: ruff check failed" >&2; exit 1; }
if [ -f .luacheckrc ]; then  # the Lua lint's configuration
  luacheck --quiet mods tests/mods || { echo "tools/test.sh: luacheck failed" >&2; exit 1; }
fi
exec .venv/bin/python -m pytest "$@"
