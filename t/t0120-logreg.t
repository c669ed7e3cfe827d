#!/bin/sh
# End to end under mpirun: sgd on the logistic-regression problem with 5
# ranks converges to the Newton optimum the coordinator computes, with
# every answer fresh or with stale ones; on separable rows without a
# penalty there is no optimum, the run says why and still completes.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
example="$top_srcdir/etc/sgd-logreg.yaml"

run 5 "$example"
is "$rc" 0 "the example exits 0"
is "$(field stop "$out")" iterations "it stops on iterations"
is "$(field iterations "$out")" 400 "after 400 iterations"
gap=$(field gap "$out")
ok $(float_le "${gap:-1}" 1e-6 && float_le -1e-6 "${gap:-1}" && echo 0 ||
    echo 1) "l2 > 0: the loss reaches the Newton optimum (gap $gap)"
loss=$(field loss "$out")
expect_ok "well below log 2, the loss at 0 ($loss)" float_le "${loss:-1}" 0.5
is "$(noprogress "$err")" "" "nothing on stderr but progress"
is "$(head -1 sgd-logreg.csv)" "iteration,epoch,time,loss,suboptimality,change,accuracy" \
    "the history has its header"
# over the history's 41 rows (iterations 0, 10 ... 400)
expect_ok "the loss never rises with fresh full gradients (41 rows)" \
    awk -F, 'NR > 2 && $4 > prev + 1e-12 { bad = 1 } NR > 1 { prev = $4 }
    END { exit bad || NR != 42 }' sgd-logreg.csv

# Two of four answers end a round: the others arrive stale and are used.
# A worker that answers seldom pulls less: the gap is small, not zero.
run 5 -o pool.wait.nwait=2 -o algorithm.step=0.5 -o stop.iterations=1000 \
    -o output.history= "$example"
is "$rc" 0 "nwait 2 of 4 exits 0"
gap=$(field gap "$out")
expect_ok "with stale answers it still comes within 1% (gap $gap)" \
    float_le "${gap:-1}" 0.01

# Mini-batches of 20 rows: noisy steps, near the optimum all the same.
run 5 -o algorithm.batch=20 -o algorithm.step=0.25 -o output.history= \
    "$example"
is "$rc" 0 "mini-batches exit 0"
gap=$(field gap "$out")
expect_ok "mini-batches come within 5% of the optimum (gap $gap)" \
    float_le "${gap:-1}" 0.05

# Separable rows and no penalty: no finite minimiser.
run 5 -v -o problem.l2=0 -o problem.flip=0 -o output.history= "$example"
is "$rc" 0 "l2 0 on separable rows exits 0"
is "$(field gap "$out")" "" "no gap is reported"
like "$err" "no optimum to compare with: the rows are linearly separable" \
    "and the coordinator says why"
loss=$(field loss "$out")
expect_ok "the loss heads for 0 ($loss)" float_le "${loss:-1}" 0.05
is "$(field accuracy "$out")" 1 \
    "and every row of the separable set is classified right (accuracy 1)"

# 5% of the labels flipped: the accuracy reaches what the flips allow.
run 5 -o output.history= "$example"
acc=$(field accuracy "$out")
expect_ok "with 5% of the labels flipped the accuracy is about 95% ($acc)" \
    awk -v a="${acc:-0}" 'BEGIN { exit !(a >= 0.94 && a <= 0.96) }'
done_testing
