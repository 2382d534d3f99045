#!/bin/sh
# Builds the Debian package: attnscope_<version>_<arch>.deb in OUT (default build-package/).
#
# The repository's top level has no debian/ (it is fixed: app/ engine/ ui/ ...); the packaging
# lives in tools/debian/.  This copies the working tree's files (tracked and untracked, not
# ignored) into OUT/attnscope-<version>/, puts tools/debian there as debian/, and runs
# `dpkg-buildpackage -us -uc -b` (debhelper with meson; the CUDA module is built when nvcc is
# found, as in any build).  Needs the build dependencies of tools/debian/control, which
# `make package` installs.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-package}
version=$(sed -n "s/^  version: '\([^']*\)'.*/\1/p" "$root/meson.build" | head -n 1)
deb_version=$(sed -n '1s/^attnscope (\([^)]*\)).*/\1/p' "$root/tools/debian/changelog")
if [ -z "$version" ] || [ "$version" != "$deb_version" ]; then
  echo "package: meson.build says version '$version' but tools/debian/changelog's first entry is" \
       "'$deb_version': add a changelog entry for $version" >&2
  exit 2
fi
src="$out/attnscope-$version"
if grep -q " $out/" /proc/mounts 2>/dev/null; then
  echo "package: something is mounted under $out (a test-package chroot left behind?): unmount it first" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$src"
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # a tracked file deleted in the working tree is left out (--ignore-failed-read)
  git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$src"
else
  tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$src"
fi
cp -r tools/debian "$src/debian"
echo "package: building attnscope $version in $src"
cd "$src"
dpkg-buildpackage -us -uc -b
ls "$out"/*.deb
