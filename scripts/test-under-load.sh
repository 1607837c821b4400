#!/usr/bin/env bash
# Runs a command several times back to back while CPU burners keep every core busy, as issue 16
# asks of `npm test` ("no flaky tests": a test that fails under load is a flaky test).
#   scripts/test-under-load.sh [--runs N] [--burners B] [--] COMMAND...   (default: 3 runs of
#   `npm test`, one burner per core from nproc)
# Each burner is a plain busy loop at normal priority; their pids are kept and only they are
# stopped on exit. Prints one line per run (exit code, seconds, the runner's pass/fail counts when
# it finds them) and exits non-zero if any run failed. Logs go to $LOAD_LOG_DIR (default
# /tmp/conclave-under-load.PID).
set -uo pipefail

runs=3
burners=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --burners) burners="$2"; shift 2 ;;
    --help|-h) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- npm test
case "$runs$burners" in *[!0-9]*) echo "test-under-load: --runs and --burners take whole numbers" >&2; exit 2 ;; esac

log_dir="${LOAD_LOG_DIR:-/tmp/conclave-under-load.$$}"
mkdir -p "$log_dir"
pids=()
stop_burners() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done; }
trap stop_burners EXIT
trap 'exit 130' INT TERM
for _ in $(seq 1 "$burners"); do
  node -e 'for (;;) {}' &
  pids+=("$!")
done
echo "test-under-load: $burners burners (pids ${pids[*]}), $runs runs of: $*; logs in $log_dir"

failed=0
for run in $(seq 1 "$runs"); do
  start=$(date +%s)
  "$@" > "$log_dir/run-$run.log" 2>&1 < /dev/null
  rc=$?
  secs=$(( $(date +%s) - start ))
  counts=$(grep -E '^ℹ (tests|pass|fail|todo) ' "$log_dir/run-$run.log" | awk '{printf "%s %s ", $2, $3}')
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "run $run: exit $rc in ${secs} s; ${counts:-no summary}; load $load"
  [ "$rc" -eq 0 ] || failed=1
done
exit "$failed"
