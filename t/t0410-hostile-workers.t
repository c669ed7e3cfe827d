#!/bin/sh
# Runs that go wrong midway and workers that cannot be trusted: a
# coordinator plugin that fails or crashes in absorb keeps the history
# written so far; oversized or malformed messages from a worker name it
# and the run goes on without it.  The fixtures are t/fixtures/hostile.c.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
export AIA_TIMEOUT=60

# job ALGORITHM PROBLEM [MORE] : a job file using these plugins
job() {
    printf 'algorithm: {plugin: %s}\nproblem: {plugin: %s}\n' "$1" "$2"
    printf 'stop: {iterations: 100000, time: 30}\n'
    printf 'output: {history: h.csv, every: 1}\n'
    [ $# -lt 3 ] || printf '%s\n' "$3"
}
rows() { [ -e h.csv ] && wc -l <h.csv || echo 0; }

# ------------------------------------------------- absorb fails or crashes
# 2 workers at 50 ms an answer: about 20 rounds a second, some 2 KB of
# history before the failure at answer 80 (2 s): less than stdio's buffer,
# so only a flush while running brings the rows to the file.
job "$FIXTURES/crashabsorb.so, after: 80" "lrmse, rows: 400, cols: 4" >fail.yaml
aia_mpirun 3 -q fail.yaml >out.txt 2>err.txt
rc=$?
is "$rc" 1 "absorb failing after 2 s: exit 1"
like "$(cat err.txt)" "absorb \(answer of rank [12]\): failed at answer 80 \(on purpose\)" \
    "the coordinator says why"
ok $([ "$(rows)" -ge 20 ] && echo 0 || echo 1) \
    "the history has the rows made before the failure ($(rows) lines)"

rm -f h.csv
job "$FIXTURES/crashabsorb.so, after: 80, crash: 1" "lrmse, rows: 400, cols: 4" >crash.yaml
aia_mpirun 3 -q crash.yaml >out.txt 2>err.txt
rc=$?
ok $([ "$rc" != 0 ] && echo 0 || echo 1) "absorb crashing after 2 s: a failure ($rc)"
ok $([ "$(rows)" -ge 10 ] && echo 0 || echo 1) \
    "the history has the rows of all but the last second ($(rows) lines)"
rm -f h.csv
done_testing
