#!/bin/bash
# `make test-package`: installs the .deb that `make package` built into a fresh Debian 12
# chroot (debootstrap --variant=minbase; apt installs what the package declares) and runs the
# installed program there: `attnscope models`, `attnscope devices` (no GPU, no CUDA runtime),
# `attnscope run` on the demo model compared with the torch figures committed with it
# (data/models/demo/train/check), `attnscope export heatmap`, the window started by the
# desktop file's Exec line under Xvfb (a screenshot), and lintian on the package.
#
# Usage: tools/test-package.sh BUILD PKGDIR   (BUILD: a build tree with tests/cli/npy-diff)
# Writes PKGDIR/testlog.json (meson's format, one line per check, for tools/test-summary.py)
# and PKGDIR/window.png; prints "N passed, N failed, N skipped".  Needs root (chroot, mount).
# The minbase tree is debootstrapped once and kept as a tarball in $ATTNSCOPE_CHROOT_CACHE
# (default /var/cache/attnscope); every run unpacks a fresh copy of it.
set -u
root_dir=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: test-package.sh BUILD PKGDIR}
pkgdir=${2:?usage: test-package.sh BUILD PKGDIR}
cache=${ATTNSCOPE_CHROOT_CACHE:-/var/cache/attnscope}
log="$pkgdir/testlog.json"
chroot_dir="$pkgdir/chroot"
: > "$log" 2>/dev/null || { echo "test-package: cannot write $log" >&2; exit 2; }

record() {   # NAME RESULT(OK|FAIL|SKIP) [DETAIL]
  printf '{"name": "package-%s", "result": "%s"}\n' "$1" "$2" >> "$log"
  echo "test-package: $1: $2${3:+ ($3)}"
}
finish() {
  if mountpoint -q "$chroot_dir/proc" 2>/dev/null; then umount "$chroot_dir/proc"; fi
  python3 "$root_dir/tools/test-summary.py" "$log"
  exit $?
}

deb=$(ls "$pkgdir"/attnscope_*_amd64.deb 2>/dev/null | head -n 1)
if [ -z "$deb" ]; then
  record build FAIL "no attnscope_*_amd64.deb in $pkgdir: run make package"
  finish
fi
record build OK "$(basename "$deb")"

changes=$(ls "$pkgdir"/attnscope_*_amd64.changes 2>/dev/null | head -n 1)
if lintian --fail-on error,warning "${changes:-$deb}" > "$pkgdir/lintian.txt" 2>&1; then
  record lintian OK "$(grep -c '^[EW]:' "$pkgdir/lintian.txt") errors or warnings; $(grep -c '^[IP]:' "$pkgdir/lintian.txt") notes"
else
  sed 's/^/  /' "$pkgdir/lintian.txt"
  record lintian FAIL "see $pkgdir/lintian.txt"
fi

if [ "$(id -u)" != 0 ]; then
  record chroot SKIP "needs root for chroot and mount"
  finish
fi

# ---- a fresh Debian 12 minbase ------------------------------------------------------------
mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}
base="$cache/bookworm-minbase.tar"
if [ ! -s "$base" ]; then
  mkdir -p "$cache"
  tmp="$cache/bookworm-minbase.tmp"
  rm -rf "$tmp"
  echo "test-package: debootstrap --variant=minbase bookworm from $mirror (once; kept in $base)"
  if ! debootstrap --variant=minbase bookworm "$tmp" "$mirror" > "$pkgdir/debootstrap.log" 2>&1; then
    tail -n 5 "$pkgdir/debootstrap.log"
    if grep -Eq "Couldn.t download|Failed getting release" "$pkgdir/debootstrap.log"; then
      record chroot SKIP "debootstrap could not download from $mirror"
    else
      record chroot FAIL "debootstrap failed: see $pkgdir/debootstrap.log"
    fi
    finish
  fi
  tar -C "$tmp" -cf "$base.part" . && mv "$base.part" "$base" && rm -rf "$tmp"
fi
if grep -q " $chroot_dir/" /proc/mounts; then umount "$chroot_dir/proc" || { record chroot FAIL "$chroot_dir/proc stays mounted"; finish; }; fi
rm -rf "$chroot_dir"
mkdir -p "$chroot_dir"
tar -C "$chroot_dir" -xf "$base"
[ -f /etc/apt/sources.list.d/debian.sources ] && cp /etc/apt/sources.list.d/debian.sources "$chroot_dir/etc/apt/sources.list.d/" &&
  rm -f "$chroot_dir/etc/apt/sources.list"
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf" 2>/dev/null
mount -t proc proc "$chroot_dir/proc"
trap finish INT TERM
in_chroot() { chroot "$chroot_dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

cp "$deb" "$chroot_dir/tmp/attnscope.deb"
# A mirror that cannot be reached is this machine's problem, not the package's: SKIP.
network_error() { grep -Eq "Temporary failure resolving|Could not (connect|resolve)|Unable to connect|Failed to fetch|Connection (timed out|refused)" "$1"; }
echo "test-package: apt-get install ./attnscope.deb in the chroot"
if ! in_chroot apt-get update -qq > "$pkgdir/apt.log" 2>&1 || network_error "$pkgdir/apt.log"; then
  tail -n 5 "$pkgdir/apt.log"
  record install SKIP "the package mirror could not be reached from the chroot"
  finish
fi
if in_chroot sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
     /tmp/attnscope.deb xvfb xauth x11-apps fonts-dejavu-core' >> "$pkgdir/apt.log" 2>&1; then
  record install OK "$(in_chroot dpkg-query -W -f='${Version}' attnscope)"
elif network_error "$pkgdir/apt.log"; then
  tail -n 5 "$pkgdir/apt.log"; record install SKIP "downloads from the mirror failed"; finish
else
  tail -n 15 "$pkgdir/apt.log"
  record install FAIL "see $pkgdir/apt.log"
  finish
fi

# ---- the installed program ----------------------------------------------------------------
out=$(in_chroot attnscope models 2>&1)
if echo "$out" | grep -q '^ *demo ' && echo "$out" | grep -q 'worked-example'; then record models OK
else echo "$out"; record models FAIL "demo and worked-example not listed"; fi

out=$(in_chroot attnscope devices 2>&1); rc=$?
if [ $rc = 0 ] && echo "$out" | grep -qi 'cpu' && echo "$out" | grep -qi 'cuda'; then record devices OK
else echo "$out"; record devices FAIL "exit $rc"; fi

check="$root_dir/data/models/demo/train/check"
for i in 0 1; do
  text=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[$i]['text'])" "$check/sentences.json")
  pair=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[$i]['text_pair'] or '')" "$check/sentences.json")
  rm -f "$chroot_dir/tmp/attn.npy"
  if in_chroot attnscope run --model demo --text "$text" ${pair:+--text-pair "$pair"} -o /tmp/attn.npy > "$pkgdir/run-$i.log" 2>&1 &&
     "$build/tests/cli/npy-diff" "$chroot_dir/tmp/attn.npy" "$check/attn_$i.npy" 1e-5 >> "$pkgdir/run-$i.log" 2>&1; then
    record "run-demo-$i" OK "$(tail -n 1 "$pkgdir/run-$i.log")"
  else
    cat "$pkgdir/run-$i.log"; record "run-demo-$i" FAIL "against the torch figures in $check"
  fi
done

rm -f "$chroot_dir/tmp/heatmap.png"
if in_chroot attnscope export heatmap --model demo --text "The cat sat on the mat." --layer 0 --head 0 \
     -o /tmp/heatmap.png > "$pkgdir/export.log" 2>&1 &&
   [ "$(head -c 8 "$chroot_dir/tmp/heatmap.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
  cp "$chroot_dir/tmp/heatmap.png" "$pkgdir/heatmap.png"; record export-heatmap OK
else
  cat "$pkgdir/export.log"; record export-heatmap FAIL "no PNG written"
fi

# The built-in lessons (docs/lessons.md) and session files (docs/session-file.md): the lessons
# are installed where the installed program looks, and a bad session file opened as a file
# manager opens it (attnscope FILE) exits 2 naming the file and the key, before any window.
n_lessons=$(ls "$chroot_dir/usr/share/attnscope/lessons/"*.json 2>/dev/null | wc -l)
printf '{"format": "attnscope-session/1", "model": {"builtin": "demo"}, "head": "two"}' > "$chroot_dir/tmp/bad.attnscope-session"
out=$(in_chroot attnscope /tmp/bad.attnscope-session 2>&1); rc=$?
if [ "$n_lessons" -ge 5 ] && [ $rc = 2 ] && echo "$out" | grep -q 'bad.attnscope-session: key “head”'; then
  record lessons-sessions OK "$n_lessons lessons"
else
  echo "$out"; record lessons-sessions FAIL "$n_lessons lessons installed; a bad session exits $rc"
fi

# The window, started as the application grid starts it: the desktop file's Exec line.  The
# chroot takes a screenshot every 2 s; this side looks at each until one shows a drawn window
# (not one flat colour), then tells the chroot to stop (at most 90 s).
# (%F, the files a file manager hands over, is left out as a launcher leaves it with none)
exec_line=$(sed -n 's/^Exec=//p' "$chroot_dir/usr/share/applications/io.github.attnscope.Attnscope.desktop" |
  head -n 1 | sed 's/ *%[fFuU]//g')
rm -f "$chroot_dir/tmp/window.xwd" "$chroot_dir/tmp/stop"
in_chroot xvfb-run -a -s "-screen 0 1280x720x24" sh -c \
  "$exec_line > /tmp/window.log 2>&1 & pid=\$!
   for i in \$(seq 45); do sleep 2; xwd -root -silent > /tmp/w.tmp && mv /tmp/w.tmp /tmp/window.xwd
     [ -e /tmp/stop ] && break; done; kill \$pid; wait \$pid" > "$pkgdir/window.log" 2>&1 &
shot=$!
sd=0
for i in $(seq 45); do
  sleep 2
  [ -s "$chroot_dir/tmp/window.xwd" ] || continue
  convert "xwd:$chroot_dir/tmp/window.xwd" "$pkgdir/window.png" 2>/dev/null || continue
  sd=$(identify -format '%[fx:standard_deviation]' "$pkgdir/window.png" 2>/dev/null)
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.05 else 1)" "${sd:-0}" && break
done
touch "$chroot_dir/tmp/stop"
wait $shot
cp "$chroot_dir/tmp/window.log" "$pkgdir/window-app.log" 2>/dev/null
if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.05 else 1)" "${sd:-0}"; then
  record window OK "Exec=$exec_line; $pkgdir/window.png after ${i}x2 s, grey-level sd $sd"
else
  cat "$pkgdir/window.log"
  record window FAIL "no window drawn in 90 s (screen sd ${sd:-?}); see $pkgdir/window-app.log"
fi
finish
