#!/usr/bin/env bash
# Installs Debian's chromium when /usr/bin/chromium is missing, so that the dashboard's browser
# tests (test/dashboard/*.browser.test.ts, driven by playwright-core) can run on this machine.
# Says what it does; does nothing when chromium is already there. Needs root (or sudo) for
# apt-get. Exit 0: chromium is installed; exit 1: it cannot be installed here (the tests skip
# and say why).
set -euo pipefail

CHROMIUM="${CONCLAVE_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
  echo "install-chromium: chromium already installed: $("$CHROMIUM" --version 2>/dev/null)"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: chromium is missing and apt-get is not available" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "install-chromium: chromium is missing and this is not root (no sudo)" >&2
    exit 1
  fi
fi

echo "install-chromium: chromium not found; installing Debian's chromium with apt-get"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
  chromium fonts-dejavu-core
echo "install-chromium: installed $("$CHROMIUM" --version)"
