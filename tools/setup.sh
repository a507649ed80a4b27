#!/usr/bin/env bash
# Idempotent set-up on Debian 12: apt packages, the patched engine build (cached
# under ~/.cache/craftium-ma) and the virtualenv .venv. A warm run takes seconds.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

APT_PACKAGES=(
  cmake g++ ninja-build ccache pkgconf patch xz-utils python3-venv
  libfreetype-dev libgl-dev libgmp-dev libjpeg-dev libjsoncpp-dev libluajit-5.1-dev
  libpng-dev libsqlite3-dev libxi-dev zlib1g-dev libzstd-dev libsdl2-dev libzmq3-dev
  libegl-dev libgl1-mesa-dri libegl-mesa0
  chromium chromium-driver  # the live viewer's browser tests (headless, driven by Selenium)
  lua-check luajit  # tools/test.sh lints the Lua (luacheck); the Lua unit tests run on LuaJIT
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

bash "$ROOT/engine/build.sh"

VENV=$ROOT/.venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
fi
if [ ! -f "$VENV/.installed" ] || [ "$ROOT/pyproject.toml" -nt "$VENV/.installed" ]; then
  "$VENV/bin/pip" install -q -e "$ROOT[test]"
  touch "$VENV/.installed"
fi
