#!/bin/sh
# Prints "1" when LeakSanitizer works here, "0" when it cannot (some containers forbid what
# it needs to stop the threads: "LeakSanitizer has encountered a fatal error").  make
# test-asan then runs with detect_leaks=0 and says so, instead of failing every test.
set -u
dir=$(mktemp -d) || { echo 1; exit 0; }
trap 'rm -rf "$dir"' EXIT
printf '#include <stdlib.h>\nint main(void) { void *p = malloc(7); return p == 0; }\n' > "$dir/p.c"
if ! ${CC:-cc} -fsanitize=address -g "$dir/p.c" -o "$dir/p" 2>/dev/null; then
  echo 1   # no ASan compiler here: the build itself will say so
  exit 0
fi
out=$(ASAN_OPTIONS=detect_leaks=1 "$dir/p" 2>&1)
case $out in
  *"LeakSanitizer has encountered a fatal error"*|*"LeakSanitizer does not work"*) echo 0 ;;
  *) echo 1 ;;
esac
