#!/usr/bin/env bash
# Installs Go and hashicorp/memberlist from Debian (golang-go, golang-github-hashicorp-memberlist-dev)
# when they are missing, so that `npm run bench -- gossip --vs memberlist` can build its small Go
# program (bench/memberlist/) without a Go module proxy:
#   GOPATH=/usr/share/gocode GO111MODULE=off go build
# Says what it does; does nothing when both are there. Needs root (or sudo) for apt-get.
set -euo pipefail

GOCODE=/usr/share/gocode
MEMBERLIST="$GOCODE/src/github.com/hashicorp/memberlist"

have_go() { command -v go >/dev/null 2>&1; }
have_memberlist() { [ -f "$MEMBERLIST/memberlist.go" ]; }

if have_go && have_memberlist; then
  echo "install-memberlist: $(go version) and memberlist in $MEMBERLIST already installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-memberlist: Go or memberlist is missing and apt-get is not available;" \
    "install golang-go and golang-github-hashicorp-memberlist-dev by hand" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-memberlist: this is not root (no sudo); run as root" >&2
    exit 1
  fi
fi

echo "install-memberlist: installing Debian's golang-go and golang-github-hashicorp-memberlist-dev"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
  golang-go golang-github-hashicorp-memberlist-dev
have_memberlist || { echo "install-memberlist: $MEMBERLIST missing after install" >&2; exit 1; }
echo "install-memberlist: installed $(go version); memberlist in $MEMBERLIST"
