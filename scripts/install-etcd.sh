#!/usr/bin/env bash
# Installs etcd (Debian's etcd-server package) when no `etcd` binary is on PATH, so that
# `npm run bench -- <suite> --vs etcd` and the etcd tests can start a reference cluster here.
# Says what it does; does nothing when etcd is already there. Needs root (or sudo) for apt-get.
set -euo pipefail
. "$(dirname "$0")/lib/apt-install.sh"

if command -v etcd >/dev/null 2>&1; then
  echo "install-etcd: etcd already installed: $(etcd --version 2>/dev/null | head -n 1)"
  exit 0
fi

echo "install-etcd: etcd not found"
apt_install install-etcd etcd-server || exit 1
# The package starts a system etcd on the default ports (2379/2380) where an init system runs;
# the benchmark starts its own members on free ports, so stop the system one when it is there.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  echo "install-etcd: stopping the system etcd service the package started"
  $APT_INSTALL_SUDO systemctl stop etcd || true
fi
echo "install-etcd: installed $(etcd --version | head -n 1)"
