#!/bin/sh
# Across hosts: the same job over Open MPI's TCP transport (shared memory
# excluded, loopback as the network, a hostfile naming the host and its
# slots) gives exactly the result it gives over shared memory, in the star
# and in a tree, and keeps the fast workers' pace with a straggler.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# gd waiting for every worker sums the gradients in pool order: the
# iterate does not depend on how the bytes travelled
cat > job.yaml <<'YAML'
seed: 5
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 3000, cols: 16}
stop: {iterations: 150}
YAML
printf 'localhost slots=5\n' > hosts

# tcp NP ARGS... : aiarun over TCP only, as aiarun(1)'s ACROSS HOSTS shows it
tcp() {
    run -m "--hostfile hosts --mca pml ob1 --mca btl tcp,self
        --mca btl_tcp_if_include lo --mca btl_base_verbose 30" "$@"
}

run 5 -q job.yaml
is "$rc" 0 "over shared memory: the run"
shm=$out

tcp 5 -q job.yaml
is "$rc" 0 "over TCP: the run exits 0"
like "$err" "btl: tcp: Using interface: lo" "the TCP transport carried it, on loopback"
unlike "$err" "select: initializing btl component (vader|sm)" \
    "and no shared-memory transport was opened"
is "$(field stop "$out")" iterations "it stops on iterations"
is "$(field loss "$out")" "$(field loss "$shm")" \
    "with exactly the loss of the shared-memory run ($(field loss "$shm"))"
gap=$(field gap "$out")
expect_ok "at the optimum (gap $gap)" float_le "${gap:-1}" 1e-9

# a tree of 4 workers over TCP: the same iterate again
tcp 5 -q -o pool.topology=tree -o pool.arity=2 job.yaml
is "$rc" 0 "a tree over TCP exits 0"
is "$(field loss "$out")" "$(field loss "$shm")" "with the star's loss"

# stragglers over TCP: nwait 3 of 4 keeps the fast workers' pace
# (an ordering, which load does not change: rounds end without the
# straggler, so it answers fewer queries than each other worker)
tcp 5 -q -o pool.wait.nwait=3 -o stragglers.fixed.ranks=[2] \
    -o stragglers.fixed.delay_ms=[30] -o stop.iterations=60 \
    -o output.answers=a.csv job.yaml
is "$rc" 0 "nwait 3 with a 30 ms straggler over TCP exits 0"
counts=$(awk -F, 'NR > 1 { n[$2]++ } END { for (r = 1; r <= 4; r++) printf "%d ", n[r] }' a.csv)
expect_ok "60 rounds keep the fast pace: the straggler answered fewer than each other worker ($counts)" \
    awk -v c="$counts" 'BEGIN { split(c, n, " ")
        exit !(n[2] < n[1] && n[2] < n[3] && n[2] < n[4]) }'
done_testing
