#!/bin/sh
# Message integrity: a worker whose answers arrive malformed (an injected
# fault) is reported and not trusted: nothing more it sends is used, and
# the run finishes with the others; every rank still stops cleanly.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

for wait in "nwait: 3" "nwait: 0"; do
    cat > job.yaml <<YAML
algorithm: {plugin: sgd, step: 0.05}
problem: {plugin: lrmse}
pool: {wait: {$wait}}
stragglers:
  work_ms: 1
  corrupt: {ranks: [2], after: 5}
stop: {iterations: 200}
output: {answers: a.csv, workers: w.csv}
YAML
    run 5 job.yaml
    is "$rc" 0 "$wait: exit 0 with a worker sending malformed answers"
    like "$err" "rank 2 sent not an aiarun message \\([0-9]+ bytes\\): not trusted any more; going on with 3 workers" \
        "$wait: it is reported"
    is "$(awk -F, '$2 == 2' a.csv | wc -l)" 5 "$wait: only its 5 good answers are used"
    is "$(field iterations "$out")" 200 "$wait: the run goes on to its limit"
    like "$(echo "$out" | awk '$1 == 2')" "UNTRUSTED$" "$wait: the table marks it"
    is "$(noprogress "$err" | grep -c '^aiarun')" 1 "$wait: and nothing else goes wrong"
done
out=$("$AIARUN" --check -o 'stragglers.corrupt.ranks=[9]' -n 4 job.yaml 2>&1)
like "$out" "stragglers.corrupt.ranks: rank 9 is not a worker of the pool" \
    "the ranks must be in the pool"
done_testing
