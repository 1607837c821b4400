#!/usr/bin/env bash
# Installs Go and hashicorp/memberlist from Debian (golang-go, golang-github-hashicorp-memberlist-dev)
# when they are missing, so that `npm run bench -- gossip --vs memberlist` can build its small Go
# program (bench/memberlist/) without a Go module proxy:
#   GOPATH=/usr/share/gocode GO111MODULE=off go build
# Says what it does; does nothing when both are there. Needs root (or sudo) for apt-get.
set -euo pipefail
. "$(dirname "$0")/lib/apt-install.sh"

GOCODE=/usr/share/gocode
MEMBERLIST="$GOCODE/src/github.com/hashicorp/memberlist"

have_go() { command -v go >/dev/null 2>&1; }
have_memberlist() { [ -f "$MEMBERLIST/memberlist.go" ]; }

if have_go && have_memberlist; then
  echo "install-memberlist: $(go version) and memberlist in $MEMBERLIST already installed"
  exit 0
fi

apt_install install-memberlist golang-go golang-github-hashicorp-memberlist-dev || exit 1
have_memberlist || { echo "install-memberlist: $MEMBERLIST missing after install" >&2; exit 1; }
echo "install-memberlist: installed $(go version); memberlist in $MEMBERLIST"
