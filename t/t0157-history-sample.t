#!/bin/sh
# output.history_sample: on a training set large enough (auto: 50,000
# rows or more) every history row but the last gives the loss of a seeded
# sample of 10,000 rows, says so in its loss_rows column, and the last
# row is the loss of every row, as an evaluation of the final model gives
# it; smaller jobs keep the history they had; stop rules read full losses;
# --resume keeps the layout a history was begun with.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
EVALUATE="${AIARUN_EVALUATE:?run the tests through make check}"

# 50,000 rows of y = 1 + 2a - b + c/2 + 3d + noise
awk 'BEGIN { srand(7); print "a,b,c,d,y"
    for (i = 0; i < 50000; i++) {
        a = rand(); b = rand(); c = rand(); d = rand()
        printf "%.6f,%.6f,%.6f,%.6f,%.6f\n", a, b, c, d,
            1 + 2 * a - b + 0.5 * c + 3 * d + (rand() - 0.5) } }' >big.csv
cat >big.yaml <<'EOF'
seed: 1
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, data: {path: big.csv, target: y}}
pool: {wait: {nwait: 0}}
stop: {iterations: 30}
output: {history: h.csv, every: 10, final: final.txt}
EOF

# col CSV NAME : the column NAME of every row of CSV
col() {
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next }
        { print $c }' "$1"
}
# rel A B : |A - B| / |B|
rel() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; if (b < 0) b = -b; print d / b }'; }

run 3 big.yaml
is "$rc" 0 "a job of 50,000 rows with a history: exit 0"
is "$(head -n 1 h.csv)" "iteration,epoch,time,loss,suboptimality,change,loss_rows" \
    "the header has a loss_rows column"
is "$(col h.csv loss_rows | tr '\n' ' ')" "10000 10000 10000 10000 50000 " \
    "every row reads the sample of 10,000 rows, the last every row"
is "$(col h.csv iteration | tail -n 2 | tr '\n' ' ')" "30 30 " \
    "the last iteration's row on the sample is followed by one on every row"
last=$(tail -n 1 h.csv | cut -d, -f4)
expect_ok "the last row's loss is the summary's" \
    float_le "$(rel "$last" "$(field loss "$out")")" 1e-9
want=$("$EVALUATE" lrmse '{}' big.csv final.txt | sed -n 's/.*loss \([^ ]*\).*/\1/p')
expect_ok "the last row's loss ($last) is the final model's on every row ($want)" \
    float_le "$(rel "$last" "$want")" 1e-9

run 3 -o output.history_sample=all -o output.history=all.csv big.yaml
is "$(head -n 1 all.csv)" "iteration,epoch,time,loss,suboptimality,change" \
    "history_sample: all: the header has no loss_rows"
s0=$(col h.csv loss | head -n 1) a0=$(col all.csv loss | head -n 1)
r0=$(rel "$s0" "$a0")
expect_ok "the first row's sampled loss ($s0) is not the full one ($a0)" \
    awk -v r="$r0" 'BEGIN { exit !(r > 1e-9 && r < 0.05) }'
expect_ok "the full run's last row is the sampled run's last" \
    float_le "$(rel "$(tail -n 1 all.csv | cut -d, -f4)" "$last")" 1e-9

run 3 -o output.history_sample=2000 -o output.history=n.csv big.yaml
is "$(col n.csv loss_rows | sort -u | tr '\n' ' ')" "2000 50000 " \
    "history_sample: 2000 reads 2,000 rows (1,000 a worker)"

# a stop on the loss acts on the loss of every row
run 3 -o stop.loss=0.3 -o stop.iterations=1000 -o output.history=stop.csv big.yaml
is "$(field stop "$out")" loss "stop.loss stops the run"
expect_ok "at a loss of every row at most the target ($(field loss "$out"))" \
    float_le "$(field loss "$out")" 0.3
is "$(tail -n 1 stop.csv | cut -d, -f7)" 50000 "the last row reads every row"

# a stop on the gap too: the optimum is found over every row, and the
# gap the run stops at is that of every row's loss; auto reads every row
# with stop.gap, the sample is asked for here
run 3 -o stop.gap=0.05 -o stop.iterations=1000 -o output.history=auto.csv big.yaml
is "$(head -n 1 auto.csv)" "iteration,epoch,time,loss,suboptimality,change" \
    "auto with stop.gap: every row, its suboptimality the full loss's"
run 3 -o stop.gap=0.05 -o stop.iterations=1000 -o output.history_sample=10000 \
    -o output.history=gap.csv big.yaml
is "$(field stop "$out")" gap "stop.gap stops the run"
expect_ok "at a gap of every row's loss at most the target ($(field gap "$out"))" \
    float_le "$(field gap "$out")" 0.05
is "$(tail -n 1 gap.csv | cut -d, -f7)" 50000 "its last row reads every row"

# the simulator samples as mpirun's workers do
sim --simulate 2 -q -o output.history=sim.csv big.yaml
is "$rc" 0 "the same job simulated: exit 0"
is "$(col sim.csv loss_rows | tr '\n' ' ')" "10000 10000 10000 10000 50000 " \
    "its rows read rank 0's sample, the last every row"
expect_ok "its last row's loss is the final model's" \
    float_le "$(rel "$(tail -n 1 sim.csv | cut -d, -f4)" "$want")" 1e-9

# a small job keeps the history it had
cp "$top_srcdir/etc/data/lr.csv" .
sed 's/big.csv/lr.csv/' big.yaml >small.yaml
run 3 -o output.history=small.csv small.yaml
is "$(head -n 1 small.csv)" "iteration,epoch,time,loss,suboptimality,change" \
    "2,000 rows under auto: every row, no loss_rows column"

# refused values name the key
run 3 -o output.history_sample=2.5 big.yaml
is "$rc" 2 "history_sample: 2.5: exit 2"
like "$err" "output.history_sample: 2.5: give a whole count" "and the key is named"
# --- --resume with another layout: rows of another width (loss_rows
# gone), or JSON Lines appended to a CSV history, exit 0
run 3 -o output.checkpoint=ck.bin -o output.history=r.csv big.yaml
is "$rc" 0 "a sampled run that leaves a checkpoint"
cp r.csv r.orig
run 3 --resume -o output.checkpoint=ck.bin -o output.history=r.csv \
    -o output.history_sample=all -o stop.iterations=40 big.yaml
is "$rc" 2 "--resume with another history_sample: exit 2"
like "$err" "cannot resume: output\.history: 'r\.csv' holds rows of the columns iteration,epoch,time,loss,suboptimality,change,loss_rows, and this run would append rows of iteration,epoch,time,loss,suboptimality,change \(output\.format, output\.history_sample\)" \
    "naming the key, the file and both layouts"
cmp -s r.csv r.orig; ok $? "and the history is left whole"
run 3 --resume -o output.checkpoint=ck.bin -o output.history=r.csv \
    -o output.format=jsonl -o stop.iterations=40 big.yaml
is "$rc" 2 "--resume with another output.format: exit 2"
like "$err" "cannot resume: output\.history: 'r\.csv' holds CSV rows, and this run would append JSON Lines \(output\.format\)" \
    "naming the key, the file and both formats"
cmp -s r.csv r.orig; ok $? "and the history is left whole"
run 3 --resume -o output.checkpoint=ck.bin -o output.history=r.csv \
    -o stop.iterations=40 big.yaml
is "$rc" 0 "--resume with the layout the history was begun with runs on"
is "$(awk -F, '{ print NF }' r.csv | sort -u)" 7 "every row of the same width"
run 3 -o output.checkpoint=ckj.bin -o output.answers=a.jsonl \
    -o output.format=jsonl -o output.history= big.yaml
is "$rc" 0 "a run with an answer log in JSON Lines"
cp a.jsonl a.orig
run 3 --resume -o output.checkpoint=ckj.bin -o output.answers=a.jsonl \
    -o output.history= -o stop.iterations=40 big.yaml
is "$rc" 2 "--resume appending CSV answers to JSON Lines: exit 2"
like "$err" "cannot resume: output\.answers: 'a\.jsonl' holds JSON Lines rows, and this run would append CSV" \
    "naming the key and the file"
cmp -s a.jsonl a.orig; ok $? "and the answer log is left whole"

cat >gen.yaml <<'EOF'
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, rows: 100, cols: 3}
stop: {iterations: 10}
output: {history: g.csv, history_sample: 50}
EOF
run 3 gen.yaml
is "$rc" 2 "history_sample: 50 without problem.data: exit 2"
like "$err" "gen.yaml:4:.*output.history_sample: 50 rows: a sample is drawn from problem.data" \
    "and the file, line and key are named"
done_testing
