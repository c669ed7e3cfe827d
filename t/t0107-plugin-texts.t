#!/bin/sh
# Texts that cross from a plugin: an error text left empty, one with no
# NUL in its whole buffer, one with control characters are shown
# defaulted, cut and escaped; a metric_name that would break the history's
# JSON or the summary line is refused at load.  A data path with control
# characters is shown escaped.  Fixtures: t/fixtures/hostile.c.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
export AIA_TIMEOUT=60

cat > job.yaml <<YAML
algorithm: {plugin: $FIXTURES/failstep.so, after: 2, rank: 1}
problem: {plugin: lrmse, rows: 400, cols: 4}
stop: {iterations: 200, time: 20}
YAML
run 3 -q -o algorithm.text=empty job.yaml
like "$err" "aiarun\\[0\\]: stopping: rank 1 failed: algorithm 'failstep': worker step: \\(no reason given\\)" \
    "an empty error text is defaulted"
run 3 -q -o algorithm.text=unterminated job.yaml
like "$err" "worker step: AAAAAAAAAA" "an unterminated one is shown"
bytes=$(printf '%s\n' "$err" | grep '^aiarun\[0\]: stopping' | sed 's/.*worker step: //' | tr -d '\n.' | wc -c)
expect_ok "cut within its buffer ($bytes bytes of 'A')" [ "$bytes" -lt 320 ]
run 3 -q -o algorithm.text=control job.yaml
like "$err" "worker step: bad\\\\tstep\\\\x1b\\[31m red\\\\nsecond line" \
    "control characters are escaped"
test_expect "no escape byte reaches the terminal" \
    '! printf "%s" "$err" | grep -q "$(printf "\\033")"'

cat > metric.yaml <<YAML
algorithm: {plugin: gd}
problem: {plugin: $FIXTURES/badmetric.so}
stop: {iterations: 5}
YAML
err=$("$AIARUN" --check metric.yaml 2>&1)
is "$?" 2 "a metric_name with a quote is refused at load"
like "$err" "problem 'badmetric': metric_name 'acc\"ur\\\\tacy': give at most 32 letters, digits or '_'" \
    "saying why, escaped"

printf '1,2\n3,4\n' > "$(printf 'd\tx.csv')"
run 3 -o "problem.data.path=$(printf 'd\tx.csv')" -o problem.data.format=csv \
    -o problem.data.header=yes -o problem.rows=1 job.yaml
unlike "$out$err" "$(printf '\t')" "a path with a tab is never shown raw"
done_testing
