#!/usr/bin/env bash
# Installs Debian's chromium when /usr/bin/chromium is missing, so that the dashboard's browser
# tests (test/dashboard/*.browser.test.ts, driven by playwright-core) can run on this machine.
# Says what it does; does nothing when chromium is already there. Needs root (or sudo) for
# apt-get. Exit 0: chromium is installed; exit 1: it cannot be installed here (the tests skip
# and say why).
set -euo pipefail
. "$(dirname "$0")/lib/apt-install.sh"

CHROMIUM="${CONCLAVE_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
  echo "install-chromium: chromium already installed: $("$CHROMIUM" --version 2>/dev/null)"
  exit 0
fi

echo "install-chromium: chromium not found"
apt_install install-chromium chromium fonts-dejavu-core || exit 1
echo "install-chromium: installed $("$CHROMIUM" --version)"
