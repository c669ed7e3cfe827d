#!/bin/sh
# pool.poll: how ranks wait for a message they expect.  Its values are
# checked, the coordinator says what it chose and why (ranks on the node
# against cores), and spinning changes the timing, never the iterates:
# a spin run, a sleep run and an auto run of the same job end on the same
# final iterate, in the star (rounds and async) and in a tree; the same
# for pool.wake, doorbells or the sleep's end.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
seed: 5
algorithm: {plugin: gd, step: 0.5}
problem: {plugin: lrmse, rows: 2000, cols: 10}
stop: {iterations: 30}
output: {final: x.txt}
YAML

for v in auto spin sleep; do
    run 3 -v -o pool.poll=$v job.yaml
    is "$rc" 0 "pool.poll: $v is accepted"
    like "$err" "waiting: .*\\(pool.poll: $v; 3 ranks on this node, [0-9]+ cores\\)" \
        "pool.poll: $v: the coordinator names its choice and the counts"
done
run 3 -v -o pool.poll=spin job.yaml
like "$err" "waiting: spin while a message is expected" "spin spins whatever the node"
run 3 -v -o pool.poll=sleep job.yaml
like "$err" "waiting: sleep \\(" "sleep sleeps whatever the node"
cores=$(nproc 2>/dev/null || echo 1)
run 3 -v job.yaml
if [ "$cores" -ge 3 ]; then
    like "$err" "waiting: spin .*auto; 3 ranks on this node, $cores cores" \
        "auto spins where the node has a core for every rank ($cores cores)"
else
    like "$err" "waiting: sleep .*auto; 3 ranks on this node, $cores cores" \
        "auto sleeps with more ranks than cores ($cores cores)"
fi
run 5 -v job.yaml
[ "$cores" -ge 5 ] && want=spin || want=sleep
like "$err" "waiting: $want .*auto; 5 ranks" "auto with 5 ranks on $cores cores: $want"

run 3 -o pool.poll=fast job.yaml
is "$rc" 2 "pool.poll: fast is refused with exit 2"
like "$err" "pool.poll: 'fast' is not one of auto\\|spin\\|sleep" \
    "with a message that names the key and the choices"
printf 'pool:\n  poll: 3\n' >bad.yaml
cat job.yaml >>bad.yaml
run 3 bad.yaml
is "$rc" 2 "pool.poll: 3 in the job file is refused"
like "$err" "bad.yaml:2:[0-9]+: pool.poll" "naming the file, line and key"

# the same iterates, spinning or not
for mode in "rounds" "async" "tree"; do
    case $mode in
    rounds) extra= ;;
    async) extra="-o pool.mode=async -o algorithm.plugin=sgd -o algorithm.step=0.05" ;;
    tree) extra="-o pool.topology=tree" ;;
    esac
    for v in sleep spin; do
        run 5 -o pool.poll=$v -o output.final=$v.txt $extra job.yaml
        is "$rc" 0 "$mode, pool.poll: $v: exit 0"
    done
    if [ "$mode" = async ]; then
        # async iterates depend on the order answers arrive in: both
        # runs must still make every one of their 30 iterations
        same "$(wc -l <spin.txt)" "$(wc -l <sleep.txt)" \
            "async: spin and sleep runs write iterates of one size"
    else
        is "$(same_file spin.txt sleep.txt && echo same)" same \
            "$mode: a spin run ends on the sleep run's iterate, bit for bit"
    fi
done

# pool.wake: a sleeping rank woken by its sender's doorbell, or by the
# end of its sleep; the iterates do not depend on it
run 3 -v job.yaml
like "$err" "doorbells: on \\(3 ranks on this node\\)" \
    "pool.wake: bell, the default: the 3 ranks of the node share doorbells"
run 3 -v -o pool.wake=timer job.yaml
like "$err" "doorbells: on .*, unused \\(pool.wake: timer\\)" \
    "pool.wake: timer: set up but unused, and the log says so"
run 3 -o pool.wake=ring job.yaml
is "$rc" 2 "pool.wake: ring is refused with exit 2"
like "$err" "pool.wake: 'ring' is not one of bell\\|timer" \
    "with a message that names the key and the choices"
for mode in rounds tree; do
    [ "$mode" = tree ] && extra="-o pool.topology=tree -o pool.arity=2" || extra=
    for v in bell timer; do
        run 7 -o pool.wake=$v -o output.final=wake-$v.txt $extra job.yaml
        is "$rc" 0 "$mode, 7 ranks, pool.wake: $v: exit 0"
    done
    is "$(same_file wake-bell.txt wake-timer.txt && echo same)" same \
        "$mode: a run woken by doorbells ends on the timer run's iterate, bit for bit"
done

# a large message: spinning waits for it without loss either
run 3 -o pool.poll=spin -o problem.cols=20000 -o problem.rows=200 -o algorithm.step=auto \
    -o stop.iterations=5 -o output.final=big-spin.txt job.yaml
is "$rc" 0 "spin with queries of 20,000 doubles: exit 0"
run 3 -o pool.poll=sleep -o problem.cols=20000 -o problem.rows=200 -o algorithm.step=auto \
    -o stop.iterations=5 -o output.final=big-sleep.txt job.yaml
is "$(same_file big-spin.txt big-sleep.txt && echo same)" same \
    "and the sleep run's iterate, bit for bit"
done_testing
