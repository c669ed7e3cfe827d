#!/bin/sh
# One session, two drivers: a table of jobs, each run under mpirun (5
# ranks) and --simulate 4, must end the same way: the same exit status,
# the same stop rule in the summary line, the same iterations where the
# job is deterministic (gd waiting for every worker), and the same
# message (numbers masked) where it fails.  Divergence with and without a
# history, a dead worker, a distrusted worker, an answer holding NaN,
# every stop rule, the
# refusals made at start, and a checkpoint written by one driver and
# resumed by the other.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > base.yaml <<'YAML'
seed: 5
algorithm: {plugin: gd}
problem: {plugin: lrmse, rows: 800, cols: 8}
pool: {wait: {nwait: 0}}
stop: {iterations: 60}
YAML

# The first line of stderr that matches ERE, its numbers masked, without
# what only many ranks can add (how many others failed too).
said() {
    grep -E "$1" err.txt | head -1 |
        sed -E -e 's/ \([0-9]+ more ranks? failed too\)$//' \
            -e 's/[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?/N/g'
}

# both NAME ERE -o... : the job $job (base.yaml) with the overrides, under mpirun
# and simulated; the exit status and stop rule must agree, and (ERE not
# empty) the first stderr line matching ERE, numbers masked.  Leaves the
# simulated run's $rc, $out and $err.
both() {
    _name=$1 _ere=$2
    shift 2
    run 5 "$@" "${job:-base.yaml}"
    _rc=$rc _stop=$(field stop "$out") _it=$(field iterations "$out")
    _said=$([ -n "$_ere" ] && said "$_ere")
    sim --simulate 4 "$@" "${job:-base.yaml}"
    is "$rc" "$_rc" "$_name: the same exit status ($_rc) both ways"
    is "$(field stop "$out")" "$_stop" "$_name: the same stop rule ($_stop)"
    if [ -n "$_ere" ]; then
        test -n "$_said" && is "$(said "$_ere")" "$_said" \
            "$_name: the same message both ways"
        [ -n "$_said" ] || ok 1 "$_name: mpirun said nothing matching $_ere"
    fi
    _mpi_it=$_it
}

# -------------------------------------------------------- divergence
both "divergence, no history" "diverged" -o algorithm.step=50
is "$rc" 1 "a diverging run fails (exit 1)"
is "$(field iterations "$out")" "$_mpi_it" \
    "divergence is caught at the same iteration both ways"
both "divergence with a history" "diverged" -o algorithm.step=50 \
    -o output.history=h.csv
is "$(field iterations "$out")" "$_mpi_it" \
    "with a history, at the same iteration too"

# -------------------------------------------------------- workers
both "a dead worker" "declared dead" -o stragglers.hang.ranks=[3] \
    -o stragglers.hang.after=5 -o pool.dead_after=1 -o stop.iterations=30
is "$rc" 3 "a worker left behind ends with exit 3 both ways"
like "$err" "rank\\(s\\) 3 were left behind" "naming it"
both "a distrusted worker" "not trusted any more" \
    -o stragglers.corrupt.ranks=[2] -o stragglers.corrupt.after=2
is "$rc" 0 "a distrusted worker does not stop the run"
both "an answer holding NaN" "holds nan" \
    -o "algorithm.plugin=$FIXTURES/nanstep.so" -o algorithm.rank=2 \
    -o algorithm.after=3
is "$rc" 1 "an answer holding NaN stops the run (exit 1)"

# -------------------------------------------------------- stop rules
both "stop.iterations" "" -o stop.iterations=25
is "$(field iterations "$out")" 25 "25 iterations both ways"
both "stop.epochs" "" -o stop.iterations=1000 -o stop.epochs=12
is "$(field iterations "$out")" "$_mpi_it" "the same iterations"
both "stop.gap" "" -o stop.iterations=1000 -o stop.gap=1e-6
is "$(field iterations "$out")" "$_mpi_it" "the same iterations"
both "stop.loss" "" -o stop.iterations=1000 -o stop.loss=0.0107
is "$(field iterations "$out")" "$_mpi_it" "the same iterations"
both "stop.precision" "" -o stop.iterations=1000 -o stop.precision=1e-5
is "$(field iterations "$out")" "$_mpi_it" "the same iterations"
both "stop.time" "" -o stop.iterations=100000000 -o stop.time=0.2 \
    -o stragglers.work_ms=1

# -------------------------------------------------------- refusals
grep -v pool: base.yaml >nopool.yaml
job=nopool.yaml both "a tree of an algorithm whose answers do not combine" \
    "pool.topology" -o algorithm.plugin=sgd -o pool.topology=tree
is "$rc" 2 "refused with exit 2"
like "$err" "AIA_ALG_ASSOCIATIVE" "saying what the algorithm lacks"
both "a checkpoint in a missing folder" "checkpoint" \
    -o output.checkpoint=no/such/dir/c.bin
is "$rc" 2 "refused with exit 2"

# -------------------------------------------------------- checkpoints
# A checkpoint of a simulated run resumes under mpirun, and ends at the
# iterate of an uninterrupted run.
run 5 -o stop.iterations=40 -o output.final=whole.txt base.yaml
is "$rc" 0 "an uninterrupted run of 40 iterations"
sim --simulate 4 -o stop.iterations=15 -o output.checkpoint=c.bin \
    -o output.final=half.txt base.yaml
is "$rc" 0 "a simulated run of 15 writes its checkpoint"
run 5 --resume -o stop.iterations=40 -o output.checkpoint=c.bin \
    -o output.final=resumed.txt base.yaml
is "$rc" 0 "mpirun resumes it"
is "$(field iterations "$out")" 40 "and goes on to 40 iterations"
is "$(field answers "$out")" 160 \
    "counting its answers from the start, as its iterations (4 a round)"
same_file whole.txt resumed.txt
ok $? "ending at the uninterrupted run's iterate, to the bit"
done_testing
