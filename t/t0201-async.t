#!/bin/sh
# Fully asynchronous mode, and the seeded delay models.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > async.yaml <<'YAML'
seed: 4
algorithm: {plugin: sgd, step: 0.05}
problem: {plugin: lrmse, rows: 4000, cols: 20}
pool: {mode: async}
stragglers:
  fixed: {ranks: [4], delay_ms: 20}
stop: {iterations: 1000000, gap: 5e-3, time: 60}
output: {answers: a.csv, workers: w.csv}
YAML
run 5 async.yaml
is "$rc" 0 "async mode: exit 0"
is "$(field answers "$out")" "$(field iterations "$out")" "every answer is an iteration"
is "$(field stop "$out")" gap "it converges to the gap asked for"
gap=$(field gap "$out")
expect_ok "(gap $gap)" float_le "${gap:-1}" 5e-3
is "$(awk -F, 'NR > 1 && $6 != $4 - 1' a.csv | wc -l)" 0 \
    "each answer is absorbed in the round it ends"
# staleness needs a run of some length: 1500 answers, each taking at
# least 1 ms, so that the slow worker (50 ms slower here) answers during
# it however fast the machine (the fast ones alone could give 1500
# answers in 20 ms)
run 5 -o stop.gap=0 -o stop.iterations=1500 -o stragglers.work_ms=1 \
    -o 'stragglers.fixed.delay_ms=[50]' async.yaml
is "$(field iterations "$out")" 1500 "1500 answers, 1500 iterations"
n4=$(awk -F, '$2 == 4' a.csv | wc -l)
expect_ok "the slow worker answered meanwhile ($n4 times)" [ "$n4" -ge 5 ]
# median staleness of a rank's answers
median() {
    awk -F, -v r="$1" '$2 == r { print $5 }' a.csv | sort -n |
        awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] + 0 }'
}
st4=$(median 4)
st1=$(median 1)
expect_ok "the 50 ms slower worker's answers are staler (median $st4 against $st1)" \
    [ "$st4" -gt $((2 * st1 + 2)) ]

cat > bad.yaml <<'YAML'
algorithm: {plugin: sgd}
problem: {plugin: lrmse}
pool:
  mode: async
  wait: {nwait: 2}
stop: {iterations: 10}
YAML
out=$("$AIARUN" --check bad.yaml 2>&1)
like "$out" "bad.yaml:5:3: pool.wait: in async mode every answer ends an iteration" \
    "a wait condition in async mode is refused"

# The delay models are seeded: the same seed gives the same delays.
markov() {
    cat > m.yaml <<YAML
seed: $1
algorithm: {plugin: sgd, step: 0.02}
problem: {plugin: lrmse}
pool: {wait: {nwait: 1}}
stragglers:
  markov: {p_slow: 0.1, p_fast: 0.3, delay_ms: 3}
  random: {probability: 0.3, delay_ms: 2}
stop: {iterations: 150}
output: {workers: w.csv}
YAML
    run 5 m.yaml
    # per rank: answers and injected delay in ms
    awk -F, 'NR > 1 { printf "%s:%s:%.0f ", $1, $3, $19 * 1000 }' w.csv
}
a=$(markov 7)
expect_ok "markov and random delays: exit 0" [ "$rc" = 0 ]
# each answer is delayed 2 ms with p 0.3 and 3 ms while slow (1/4 of the
# time): about 1.35 ms per answer
per=$(echo "$a" | awk '{ for (i = 1; i <= NF; i++) { split($i, f, ":"); n += f[2]; d += f[3] } print d / n }')
expect_ok "the mean injected delay matches the models (${per} ms per answer)" \
    awk -v p="$per" 'BEGIN { exit !(p > 0.9 && p < 1.8) }'
done_testing
