#!/bin/sh
# problem.test: the workers compute the loss and the metric of their share
# of a held-out file, reported beside the training ones in the summary line,
# the report and the history; the figures equal a direct computation on
# the rows at the final iterate.  The training loss is the workers' too.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
data="$top_srcdir/etc/data"

# 301 held-out rows of 5 features, labelled by the plane of logreg.csv
# with one label in five flipped, so that the accuracy is not 1.
awk 'BEGIN {
    srand(7); print "x1,x2,x3,x4,x5,label"
    split("1 -1 0.5 2 -0.5", w, " ")
    for (r = 0; r < 301; r++) {
        s = 0.25; line = ""
        for (j = 1; j <= 5; j++) {
            u = rand() * 4 - 2; s += w[j] * u
            line = line sprintf("%.4f,", u)
        }
        y = s > 0; if (rand() < 0.2) y = 1 - y
        print line y
    }
}' > test.csv

cat > job.yaml <<YAML
algorithm: {plugin: sgd, step: 1.0}
problem:
  plugin: logreg
  l2: 0.001
  data: {path: $data/logreg.csv, target: label}
  test: {path: test.csv, target: label}
pool: {wait: {nwait: 2}}
stop: {iterations: 300}
output: {final: final.txt, history: hist.csv, every: 50}
YAML
run 4 -v job.yaml
is "$rc" 0 "a logreg job with a test set runs"
[ "$rc" = 0 ] || diag "$err"

# the direct computation: l2 = 0.001, no intercept, margin s * a.x > 0
direct=$(awk -F, 'NR == FNR { x[NR] = $1; n = NR; next }
    FNR == 1 { next }
    { z = 0; for (j = 1; j <= n; j++) z += $j * x[j]; s = $(n + 1) ? 1 : -1
      z *= s; m++; ok += z > 0
      loss += (z < 0 ? -z : 0) + log(1 + exp(z < 0 ? z : -z)) }
    END { for (j = 1; j <= n; j++) q += x[j] * x[j]
          printf "%.15g %.15g\n", ok / m, loss / m + 0.0005 * q }' final.txt test.csv)
acc=$(field test_accuracy "$out")
loss=$(field test_loss "$out")
expect_ok "the test accuracy ($acc) is the direct one on the rows (${direct% *})" \
    awk -v a="$acc" -v b="${direct% *}" 'BEGIN { d = a - b; exit !(a != "" && d * d < 1e-18) }'
expect_ok "the test loss ($loss) is the direct one on the rows (${direct#* })" \
    awk -v a="$loss" -v b="${direct#* }" 'BEGIN { d = (a - b) / b; exit !(a != "" && d * d < 1e-18) }'
test_expect "and it is a held-out figure: flipped labels keep it below 0.95 ($acc)" \
    'float_le 0.7 "${acc:-0}" && float_le "${acc:-1}" 0.95'
is "$(head -1 hist.csv)" \
    "iteration,epoch,time,loss,suboptimality,change,accuracy,test_loss,test_accuracy" \
    "the history has the test columns"
last=$(tail -1 hist.csv | cut -d, -f9)
expect_ok "its last row holds the final test accuracy, to rounding ($last)" \
    awk -v a="$last" -v b="${direct% *}" 'BEGIN { d = a - b; exit !(a != "" && d * d < 1e-28) }'
rows=$(sed 1d hist.csv | wc -l)
is "$rows" 7 "every row asked for is written (0, 50, ..., 300)"
like "$out" "test +[^ ]*test.csv: loss [0-9.e-]+, accuracy [0-9.]+" \
    "the report shows the test figures"
like "$out" "evaluated +by the workers on their 1000 rows" \
    "the report says the workers computed the loss"

# lrmse, no metric: the training file as its own test set gives the
# training loss again, row-weighted over the workers
cat > lr.yaml <<YAML
algorithm: {plugin: gd, step: 0.5}
problem:
  plugin: lrmse
  partition: cyclic
  data: {path: $data/lr.csv}
  test: {path: $data/lr.csv}
stop: {iterations: 50}
output: {history: lr.csv}
YAML
run 4 lr.yaml
a=$(field loss "$out")
b=$(field test_loss "$out")
test_expect "the training file as test set: test loss $b = loss $a" \
    '[ "$rc" = 0 ] && awk -v a="$a" -v b="$b" \
        "BEGIN { d = (a - b) / a; exit !(length(b) && d * d < 1e-24) }"'
is "$(head -1 lr.csv)" "iteration,epoch,time,loss,suboptimality,change,test_loss" \
    "without a metric the history gains test_loss only"

# refusals name the key
sed -e '/data:/d' job.yaml > nodata.yaml
run 3 nodata.yaml
is "$rc" 2 "a test set without training rows is refused (exit 2)"
like "$err" "nodata.yaml:[0-9]+:[0-9]+: problem.test: a test set needs problem.data" \
    "naming the file, line and key"
printf 'a,b,label\n1,2,1\n3,4,0\n5,6,1\n' > narrow.csv
sed -e 's|test.csv|narrow.csv|' job.yaml > narrow.yaml
run 3 narrow.yaml
like "$err" "narrow.yaml:[0-9]+:[0-9]+: problem.test: [^ ]*narrow.csv has 2 features, the training rows 5" \
    "a test file of another width is refused, naming both widths"
# stop.loss with the workers' loss: it stops on their evaluation, and the
# final model's loss is at least as low
cat > loss.yaml <<YAML
algorithm: {plugin: gd, step: 0.5}
problem:
  plugin: lrmse
  data: {path: $data/lr.csv}
stop: {iterations: 5000, loss: 0.0052}
YAML
run 3 loss.yaml
is "$(field stop "$out")" loss "stop.loss holds on the workers' loss"
expect_ok "the final loss is below the target ($(field loss "$out"))" \
    float_le "$(field loss "$out")" 0.0052

# a worker killed mid-run: its rows are left out of the evaluations, the
# run does not wait for it, and the summary line says one is missing
cat > dead.yaml <<YAML
algorithm: {plugin: sgd, step: 0.05}
problem:
  plugin: lrmse
  data: {path: $data/lr.csv}
  test: {path: $data/lr.csv}
pool:
  dead_after: 2
  wait: {nwait: 0}
stragglers: {work_ms: 5}
stop: {time: 6}
output: {history: dead.csv, every: 20}
YAML
(
    sleep 2.5
    for p in $(pgrep -f "$trash/dead.yaml"); do
        if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=3; then
            kill -9 "$p"
        fi
    done
) &
run -m --enable-recovery 5 "$trash/dead.yaml"
wait
is "$rc" 0 "with a worker killed the job still finishes, exit 0"
is "$(field missing "$out")" 1 "the summary line says one worker's rows are missing"
like "$out" "evaluated +by the workers on 1500 of the 2000 rows \\(1 worker missing" \
    "the report says how many rows the loss covers"
test_expect "the loss and the test loss of the live workers' rows are reported as partial" \
    '[ "$(field loss "$out")" = nan ] && [ -n "$(field partial_loss "$out")" ] &&
     [ -n "$(field partial_test_loss "$out")" ] && [ -z "$(field test_loss "$out")" ]'
expect_ok "history rows go on after the death ($(sed 1d dead.csv | wc -l) rows)" \
    [ "$(sed 1d dead.csv | wc -l)" -gt 5 ]
done_testing
