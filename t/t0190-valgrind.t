#!/bin/sh
# Memory errors and leaks: the unit tests and a whole run (every rank)
# under valgrind.  Open MPI's own allocations are suppressed by
# t/valgrind.supp; nothing of aiarun's may show.
. "$top_srcdir/t/lib.sh"
command -v valgrind >/dev/null || skip_all "valgrind is not installed"
[ -z "${AIA_SANITIZED:-}" ] || skip_all "built with sanitizers"
scratch
cd "$trash" || exit 99
export OMPI_MCA_mca_base_component_disable_dlclose=1
supp="--suppressions=$top_srcdir/t/valgrind.supp"
[ -f /usr/share/openmpi/openmpi-valgrind.supp ] &&
    supp="$supp --suppressions=/usr/share/openmpi/openmpi-valgrind.supp"
vg="valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite $supp"

export AIA_VALGRIND=1 # t/hostile.t: looser time bounds
for t in manifest params loader lrmse logreg sgd sgd-table gd average \
    average-state data data-formats hostile fuzz-regress; do
    $vg "$top_builddir/t/$t.t" >/dev/null 2>vg.txt; rc=$?
    ok $rc "unit test $t is clean under valgrind"
    [ $rc = 0 ] || diag "$(head -30 vg.txt)"
done

$vg "$AIARUN" --list-plugins >/dev/null 2>vg.txt; rc=$?
ok $rc "--list-plugins is clean (every plugin opened and closed)"
[ $rc = 0 ] || diag "$(head -30 vg.txt)"

run -t 300 -w "$vg" 3 -o stop.iterations=30 -o output.history=h.csv \
    "$top_srcdir/etc/sgd-lrmse.yaml"
ok $rc "a 3-rank run is clean on every rank"
[ $rc = 0 ] || diag "$(grep -v -e hwloc -e CPUID -e cpuid err.txt | head -40)"
like "$out" "stop=iterations iterations=30" "and completes"

# a data file and a test set: the workers' evaluations, their summaries
run -t 300 -w "$vg" 3 \
    -o stop.iterations=30 -o output.history=h.csv -o output.every=5 \
    -o pool.wait.nwait=1 \
    -o problem.test.path=data/lr.csv -o problem.test.delivery=scatter \
    "$top_srcdir/etc/sgd-csv.yaml"
ok $rc "a data job with a test set is clean on every rank"
[ $rc = 0 ] || diag "$(grep -v -e hwloc -e CPUID -e cpuid err.txt | head -40)"
like "$out" "stop=iterations iterations=30 .* test_loss=" "and completes"
# shard ranks: sag on 2 coordinator ranks, a checkpoint, then resumed
# with a distrusted worker whose slices are dropped
run -t 300 -w "$vg" 4 -o pool.shards=2 -o 'algorithm={plugin: sag}' \
    -o stop.iterations=20 -o output.history=h.csv -o output.final=x.txt \
    -o output.checkpoint=ck.bin -o output.checkpoint_every=5 \
    "$top_srcdir/etc/gd-lrmse.yaml"
ok $rc "a run on 2 shard ranks is clean on every rank"
[ $rc = 0 ] || diag "$(grep -v -e hwloc -e CPUID -e cpuid err.txt | head -40)"
run -t 300 -w "$vg" 4 --resume -o pool.shards=2 -o 'algorithm={plugin: sag}' \
    -o stop.iterations=30 -o output.history=h.csv -o output.final=x.txt \
    -o output.checkpoint=ck.bin -o output.checkpoint_every=5 \
    -o pool.wait.nwait=1 -o 'stragglers.corrupt={ranks: [3], after: 3}' \
    "$top_srcdir/etc/gd-lrmse.yaml"
ok $rc "resumed on 2 shard ranks with a distrusted worker: clean"
[ $rc = 0 ] || diag "$(grep -v -e hwloc -e CPUID -e cpuid err.txt | head -40)"
like "$out" "stop=iterations iterations=30" "and completes"
done_testing
