#!/usr/bin/env bash
# Build the pinned Luanti release with craftium-ma's patch series, once.
#
#   engine/build.sh              fetch, check, patch and build (no-op when cached)
#   engine/build.sh --print-dir  print the cached build's directory, exit 1 if not built
#
# The result lands in $CACHE/engine/<key>, key = hash(tarball, patches, flags, this script),
# and $CACHE/engine/current names the newest build (craftium_ma reads it).
# CRAFTIUM_MA_LUANTI_TARBALL=path uses a local upstream tarball instead of apt.
set -euo pipefail

LUANTI_VERSION=5.10.0
DEBIAN_VERSION=5.10.0+dfsg-5+deb13u1
DEBIAN_SUITE=trixie
TARBALL_NAME=luanti_${LUANTI_VERSION}+dfsg.orig.tar.xz
TARBALL_SHA256=76f3d212b69c9591f9d7a7b7eeb699d7ec00afe2c2bfb3654081f50d58707937

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${CRAFTIUM_MA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/craftium-ma}
CMAKE_FLAGS=(
  -G Ninja -DCMAKE_BUILD_TYPE=Release -DRUN_IN_PLACE=TRUE
  -DBUILD_CLIENT=TRUE -DBUILD_SERVER=FALSE -DBUILD_UNITTESTS=FALSE -DBUILD_BENCHMARKS=FALSE
  -DENABLE_SOUND=FALSE -DENABLE_LTO=FALSE -DUSE_SDL2=TRUE -DENABLE_GETTEXT=FALSE
  -DENABLE_CURL=FALSE -DENABLE_POSTGRESQL=FALSE -DENABLE_LEVELDB=FALSE -DENABLE_REDIS=FALSE
  -DENABLE_SPATIAL=FALSE -DENABLE_PROMETHEUS=FALSE -DENABLE_CURSES=FALSE
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
)

die() { echo "engine/build.sh: $*" >&2; exit 1; }

key() {
  { echo "$TARBALL_SHA256"; echo "${CMAKE_FLAGS[*]}"; cat "$HERE/build.sh";
    for p in "$HERE"/patches/*.patch; do if [ -e "$p" ]; then basename "$p"; cat "$p"; fi; done
  } | sha256sum | cut -c1-16
}

if [ "${1:-}" = --print-dir ]; then
  d=$CACHE/engine/$(key)
  [ -x "$d/bin/luanti" ] || exit 1
  echo "$d"; exit 0
fi

# Fetch the upstream tarball through apt, from a deb-src entry that reuses this machine's
# Debian mirror, and check it by hash (apt exits non-zero here: the .dsc is gone upstream).
fetch_tarball() {
  local dest=$1 tmp uris
  uris=$(grep -h -E '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
         | grep -o -E 'https?://[^ ]+/debian/?( |$)' | head -n1 | tr -d ' ' || true)
  [ -n "$uris" ] || die "no Debian mirror found in the apt sources; set CRAFTIUM_MA_LUANTI_TARBALL"
  local list=/etc/apt/sources.list.d/craftium-ma-luanti-src.sources sudo
  sudo=$([ "$(id -u)" = 0 ] || echo sudo)
  if [ ! -e "$list" ]; then
    printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$uris" "$DEBIAN_SUITE" | $sudo tee "$list" >/dev/null
    $sudo apt-get update -qq
  fi
  tmp=$(mktemp -d); chmod 755 "$tmp"
  (cd "$tmp" && apt-get source -qq --download-only "luanti=$DEBIAN_VERSION" >/dev/null 2>&1 || true)
  [ -f "$tmp/$TARBALL_NAME" ] || { rm -rf "$tmp"; die "apt-get source luanti=$DEBIAN_VERSION did not bring $TARBALL_NAME"; }
  mv "$tmp/$TARBALL_NAME" "$dest"; rm -rf "$tmp"
}

check_sha() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$TARBALL_SHA256" ] || die "$1 has sha256 $got, expected $TARBALL_SHA256 (wrong or corrupt Luanti tarball)"
}

# minetest_game comes from Debian's minetest-data package, unpacked into the cache.
fetch_game() {
  local dest=$CACHE/games/minetest_game tmp
  [ -f "$dest/game.conf" ] && return 0
  tmp=$(mktemp -d); chmod 755 "$tmp"
  (cd "$tmp" && apt-get download -qq minetest-data >/dev/null) || { rm -rf "$tmp"; die "apt-get download minetest-data failed"; }
  dpkg-deb -x "$tmp"/minetest-data_*.deb "$tmp/x"
  mkdir -p "$CACHE/games"
  rm -rf "$dest"; mv "$tmp/x/usr/share/games/minetest/games/minetest_game" "$dest"
  rm -rf "$tmp"
}

main() {
  mkdir -p "$CACHE/engine" "$CACHE/downloads"
  local tarball=${CRAFTIUM_MA_LUANTI_TARBALL:-$CACHE/downloads/$TARBALL_NAME}
  if [ ! -f "$tarball" ]; then
    [ -z "${CRAFTIUM_MA_LUANTI_TARBALL:-}" ] || die "CRAFTIUM_MA_LUANTI_TARBALL=$tarball does not exist"
    fetch_tarball "$tarball"
  fi
  check_sha "$tarball"
  fetch_game

  local k out work
  k=$(key); out=$CACHE/engine/$k
  if [ -x "$out/bin/luanti" ]; then
    echo "$out" > "$CACHE/engine/current"
    echo "engine: cached build $out"; return 0
  fi
  work=$CACHE/engine/work-$k; rm -rf "$work"; mkdir -p "$work"  # per key: builds of two trees may run at once
  echo "engine: building $out (cold build: about 9 minutes on 2 cores)"
  tar -xf "$tarball" -C "$work"; mv "$work"/luanti-* "$work/src"
  for p in "$HERE"/patches/*.patch; do
    [ -e "$p" ] || continue
    patch -d "$work/src" -p1 --quiet --forward < "$p" || die "patch $(basename "$p") does not apply to Luanti $LUANTI_VERSION"
  done
  export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache} CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=1
  cmake -S "$work/src" -B "$work/build" "${CMAKE_FLAGS[@]}" > "$work/cmake.log" || { cat "$work/cmake.log"; die "cmake failed"; }
  ninja -C "$work/build" -j "$(nproc)" luanti || die "build failed"
  # RUN_IN_PLACE: the binary finds builtin/, client/, textures/, fonts/ beside bin/.
  rm -rf "$work/build" "$work/src/"{android,doc,fastlane,po,src,irr,lib,util,misc,cmake}
  mv "$work/src" "$out"; rm -rf "$work"
  echo "$out" > "$CACHE/engine/current"
  echo "engine: built $out"
}
main "$@"
