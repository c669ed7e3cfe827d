#!/bin/sh
# lbfgs's stale_pairs under --simulate, a straggler and rounds that end at
# 2 of 4 workers: drop (the default) waits for every worker on each
# request and mixes no points; keep ends requests with the straggler's
# latest answer standing in, says how many, and so takes other steps.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > lsq.yaml <<'YAML'
seed: 4
algorithm: {plugin: lbfgs}
problem: {plugin: lrmse, rows: 2000, cols: 12, condition: 100}
pool: {wait: {nwait: 2}}
stragglers: {fixed: {ranks: [3], delay_ms: 20}}
stop: {iterations: 60}
output: {final: x.txt}
YAML

sim --simulate 4 -v lsq.yaml
is "$rc" 0 "stale_pairs: drop (the default): exit 0"
unlike "$err" "stale answers in" "no request ends with stale answers in"
mv x.txt drop.txt
drop=$(field loss "$out")
sim --simulate 4 -v -o algorithm.stale_pairs=drop lsq.yaml
is "$(field loss "$out")" "$drop" "drop named is the default ($drop)"

sim --simulate 4 -v -o algorithm.stale_pairs=keep lsq.yaml
is "$rc" 0 "stale_pairs: keep: exit 0"
n=$(printf '%s\n' "$err" | sed -n 's/.*lbfgs: \([0-9]*\) requests ended with stale answers in.*/\1/p')
expect_ok "requests ended with the straggler's stale answer in ($n)" \
    [ "${n:-0}" -gt 10 ]
keep=$(field loss "$out")
test_expect "so its iterate is another ($keep, drop's $drop)" \
    '[ "$keep" != "$drop" ] && ! cmp -s x.txt drop.txt'

# with every worker each round no answer is stale: keep is drop
sim --simulate 4 -o pool.wait.nwait=0 -o algorithm.stale_pairs=keep lsq.yaml
a=$(field loss "$out")
sim --simulate 4 -o pool.wait.nwait=0 lsq.yaml
same "$a" "$(field loss "$out")" "without stale answers keep and drop agree ($a)"

sim --check -o algorithm.stale_pairs=some lsq.yaml
is "$rc" 2 "stale_pairs: some is refused"
done_testing
