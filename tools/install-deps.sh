#!/bin/sh
# Installs the Debian packages attnscope needs to build and test, only those missing.
# Used by `make run`, `make test` and CI.  Non-interactive; needs root (or sudo) to install.
set -e
PKGS="build-essential pkg-config meson ninja-build gettext python3 \
libgtk-4-dev libcairo2-dev libopenblas-dev libcjson-dev libpcre2-dev libcurl4-openssl-dev \
fonts-noto-cjk libgl1-mesa-dri \
xvfb xauth libxtst-dev poppler-utils imagemagick librsvg2-bin desktop-file-utils \
appstream libxml2-utils valgrind python3-numpy parallel"
[ -n "$ATN_EXTRA_PKGS" ] && PKGS="$PKGS $ATN_EXTRA_PKGS"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "attnscope: installing missing Debian packages:$missing"
if [ "$(id -u)" = 0 ]; then SUDO=""
elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"
else
  echo "attnscope: these packages are missing and I am not root (and no sudo):$missing" >&2
  echo "attnscope: run as root: apt-get install -y$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
