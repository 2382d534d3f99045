#!/bin/sh
# Builds the libFuzzer targets (fuzz-*.c) with clang and -fsanitize=fuzzer,address,undefined
# into OUT (default build-fuzz), apart from the meson (gcc) build.  The engine files are
# the ones listed in engine/meson.build, compiled with coverage instrumentation.
# Usage: tests/fuzz/build.sh [OUT]      (FUZZ_CC=clang-14 by default)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build-fuzz}
CC=${FUZZ_CC:-clang-14}
command -v "$CC" >/dev/null || { echo "$CC not found (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 1; }
mkdir -p "$OUT/obj"
case "$OUT" in /*) ;; *) OUT=$(cd "$OUT" && pwd) ;; esac

# the config.h the engine includes (the paths of a build from this tree)
cat > "$OUT/config.h.new" <<CONF
#pragma once
#define ATN_APP_ID "io.github.attnscope.Attnscope"
#define ATN_BUILD_DIR "$OUT"
#define ATN_BUILD_LOCALEDIR "$OUT/po"
#define ATN_INSTALL_DATADIR "/usr/local/share/attnscope"
#define ATN_INSTALL_LIBDIR "/usr/local/lib/attnscope"
#define ATN_LOCALEDIR "/usr/local/share/locale"
#define ATN_SOURCE_DATADIR "$ROOT/data"
#define ATN_VERSION "fuzz"
#define GETTEXT_PACKAGE "attnscope"
CONF
if cmp -s "$OUT/config.h.new" "$OUT/config.h"; then rm "$OUT/config.h.new"; else mv "$OUT/config.h.new" "$OUT/config.h"; fi

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
DEPS_CFLAGS=$(pkg-config --cflags libcjson openblas libpcre2-8)
DEPS_LIBS="$(pkg-config --libs libcjson openblas libpcre2-8) -lm -ldl -lpthread"
CFLAGS="-g -O1 -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE $SAN -I$OUT -I$ROOT/engine -I$ROOT/engine/include $DEPS_CFLAGS"

# engine sources: the files('...') list of engine/meson.build, put in an archive so each
# target links only what it uses.  A file clang cannot compile (it happened with gcc-only
# vector code) is left out with a note: no fuzz target needs the analysis files.
SOURCES=$(sed -n "/^engine_sources = files(/,/^)/p" "$ROOT/engine/meson.build" | grep -o "'[^']*\.c'" | tr -d "'")
newest_header=$(ls -t $(find "$ROOT/engine" -name '*.h' ! -path '*/hub/*' ! -path '*/cuda/*') "$OUT/config.h" | head -n 1)
OBJS=""
for s in $SOURCES; do
  o="$OUT/obj/${s%.c}.o"
  mkdir -p "$(dirname "$o")"
  if [ ! -f "$o" ] || [ "$ROOT/engine/$s" -nt "$o" ] || [ "$newest_header" -nt "$o" ]; then
    echo "CC $s"
    # clang ignores "#pragma GCC target": a file of AVX-512 kernels builds with -mavx512f
    # (only where the CPU has it; the engine checks the CPU before calling them)
    if ! $CC $CFLAGS -fsanitize=fuzzer-no-link -c "$ROOT/engine/$s" -o "$o" 2>"$OUT/obj/${s%.c}.log" &&
       ! { grep -q avx512f /proc/cpuinfo &&
           $CC $CFLAGS -mavx512f -mfma -fsanitize=fuzzer-no-link -c "$ROOT/engine/$s" -o "$o" 2>>"$OUT/obj/${s%.c}.log"; }; then
      echo "  note: $s does not build with $CC; left out (see $OUT/obj/${s%.c}.log)"
      rm -f "$o"
      continue
    fi
  fi
  [ -f "$o" ] && OBJS="$OBJS $o"
done
rm -f "$OUT/libengine-fuzz.a"
ar rcs "$OUT/libengine-fuzz.a" $OBJS

for f in "$ROOT"/tests/fuzz/fuzz-*.c; do
  t=$(basename "$f" .c)
  exe="$OUT/$t"
  if [ -f "$exe" ] && [ ! "$f" -nt "$exe" ] && [ -z "$(find "$OUT/obj" "$ROOT/tests/fuzz" -newer "$exe" -name '*.[cho]')" ]; then
    continue
  fi
  echo "LINK $t"
  $CC $CFLAGS -fsanitize=fuzzer -DATN_FUZZ_SOURCE_ROOT="\"$ROOT\"" "$f" "$OUT/libengine-fuzz.a" $DEPS_LIBS -o "$exe"
done
