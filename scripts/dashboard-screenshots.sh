#!/usr/bin/env bash
# Retakes the dashboard's screenshots in docs/images/dashboard/ (one per tab, plus the cluster
# tab with a member down), as the browser test sees them: it runs
# test/dashboard/dashboard-browser.test.ts with CONCLAVE_SCREENSHOTS set. Needs the built CLI
# (npm run build) and chromium (scripts/install-chromium.sh installs it when missing).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
mkdir -p docs/images/dashboard
CONCLAVE_SCREENSHOTS="$ROOT/docs/images/dashboard" \
  node scripts/run-tests.mjs test/dashboard/dashboard-browser.test.ts
ls -l docs/images/dashboard
