#!/usr/bin/env bash
# Installs etcd (Debian's etcd-server package) when no `etcd` binary is on PATH, so that
# `npm run bench -- <suite> --vs etcd` can start a reference cluster on this machine.
# Says what it does; does nothing when etcd is already there. Needs root (or sudo) for apt-get.
set -euo pipefail

if command -v etcd >/dev/null 2>&1; then
  echo "install-etcd: etcd already installed: $(etcd --version 2>/dev/null | head -n 1)"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-etcd: etcd is missing and apt-get is not available; install etcd 3.4+ by hand" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-etcd: etcd is missing and this is not root (no sudo); run as root" >&2
    exit 1
  fi
fi

echo "install-etcd: etcd not found; installing Debian's etcd-server with apt-get"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends etcd-server
# The package starts a system etcd on the default ports (2379/2380) where an init system runs;
# the benchmark starts its own members on free ports, so stop the system one when it is there.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  echo "install-etcd: stopping the system etcd service the package started"
  $SUDO systemctl stop etcd || true
fi
echo "install-etcd: installed $(etcd --version | head -n 1)"
