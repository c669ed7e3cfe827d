#!/bin/sh
# End to end under mpirun: average with delayed exchange (local_steps 4,
# delay 2, with and without compensation) converges on lrmse; with one
# worker's part corrupted, the average without preemption ends far from
# the clean optimum and with preemption close to it, each replacement
# logged; a delay beyond the local steps is refused, naming the line and
# key.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

example=$top_srcdir/etc/local-lrmse.yaml

# gap_is WHAT OP BOUND : the last run exited 0 with gap OP BOUND (le, gt)
gap_is() {
    is "$rc" 0 "$1: exits 0"
    gap=$(field gap "$out")
    if [ "$2" = le ]; then
        expect_ok "$1: the final loss is within $3 of the optimum (gap ${gap:-none})" \
            float_le "${gap:-1e300}" "$3"
    else
        expect_fail "$1: the final loss is more than $3 off the optimum (gap ${gap:-none})" \
            float_le "${gap:-0}" "$3"
    fi
}

clean="-o problem.corrupt=[] -o algorithm.preempt_every=0 -o output.history="
for c in true false; do
    run 5 $clean -o algorithm.compensate=$c "$example"
    gap_is "local_steps 4, delay 2, compensate $c" le 1e-4
done
run 5 $clean -o algorithm.memory=delta -o 'problem.weights=[1, 2, 3, 4]' \
    "$example"
gap_is "delay 2, delta memory, uneven parts" le 1e-3

# Worker 3's targets carry noise of 100 (their loss about 5000, the clean
# ones' 0.005): its model drags the average.
run 5 -o algorithm.preempt_every=0 -o output.history= "$example"
gap_is "a corrupted part without preemption" gt 10

# (no time limit: the example's 30 s would end a loaded run before its
# 100 rounds)
run 5 -v -o output.history= -o stop.time=0 "$example"
gap_is "a corrupted part with preemption every round" le 0.01
n=$(printf '%s\n' "$err" | grep -c 'average: round [0-9]*: worker 3 (score [0-9.e+]*) replaced by worker [012]')
is "$n" 100 "each of the 100 preemptions replaced worker 3, logged (-v)"

run 5 -o algorithm.preempt_every=1 -o algorithm.delay=0 -o output.history= \
    "$example"
gap_is "preemption without delay" le 0.01

# The job as shipped, resumed from a checkpoint, ends where it would have.
run 5 -q -o stop.iterations=60 -o output.history= \
    -o output.checkpoint=ck.bin -o output.checkpoint_every=30 "$example"
is "$rc" 0 "a run of 60 iterations with a checkpoint every 30"
whole=$(field loss "$out")
run 5 -q -o stop.iterations=30 -o output.history= \
    -o output.checkpoint=ck.bin -o output.checkpoint_every=30 "$example"
run 5 -q --resume -o stop.iterations=60 -o output.history= \
    -o output.checkpoint=ck.bin -o output.checkpoint_every=30 "$example"
is "$rc" 0 "resumed from iteration 30: exits 0"
resumed=$(field loss "$out")
expect_ok "and ends near the uninterrupted run's loss ($resumed against $whole)" \
    awk -v a="$whole" -v b="$resumed" 'BEGIN { d = a - b; if (d < 0) d = -d;
    exit !(a > 0 && d <= 0.05 * a) }'

printf 'algorithm:\n  plugin: average\n  local_steps: 2\n  delay: 3\nproblem:\n  plugin: lrmse\nstop:\n  iterations: 5\n' >bad.yaml
run 3 bad.yaml
is "$rc" 2 "delay 3 with local_steps 2: exits 2"
like "$err" "bad.yaml:[0-9]+.*delay: 3 is more than local_steps \\(2\\)" \
    "and says where and why"
done_testing
