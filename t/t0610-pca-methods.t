#!/bin/sh
# PCA with every method that reaches an exact optimum: gd, mini-batch sgd
# with a decaying step, and the variance-reduced sag (synchronous: with
# nwait below the pool it drops the straggler's stale answers, and how
# many that are depends on the machine's load), and dsag and subspace
# under a straggler with nwait below the pool, each end to end under
# mpirun to the explained variance of the eigen-solve's top 3
# components (1e-6).
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

# the summary's value of key
val() { tail -1 out.txt | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# |a - b| <= tol
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= t) }'; }

long="-o stop.iterations=10000 -o stop.time=100"
straggler="$long -o pool.wait.nwait=3 -o stragglers.fixed.ranks=[2] -o stragglers.fixed.delay_ms=2"
while IFS=: read -r name opts; do
    run 5 -v "$top_srcdir/etc/pca-sparse.yaml" $opts
    is "$rc" 0 "pca with $name exits 0"
    eig=$(sed -n "s/.*eigen-solve's top 3 components explain \([0-9.]*\) .*/\1/p" err.txt)
    ev=$(val explained_variance)
    close "$ev" "$eig" 1e-6
    ok $? "pca with $name: explained variance $ev, the eigen-solve's $eig ($(val stop), $(val iterations) rounds)"
done <<EOF2
gd, synchronous:-o algorithm.plugin=gd -o algorithm.step=0.5
sgd, 1000-row batches, step halved every 500 rounds:-o algorithm.plugin=sgd -o algorithm.step=0.5 -o algorithm.batch=1000 -o algorithm.schedule=step -o algorithm.decay=0.5 -o algorithm.decay_every=500 $long
sag, 2 sub-partitions, synchronous:-o algorithm.plugin=sag -o algorithm.variant=sag -o algorithm.subpartitions=2 -o algorithm.step=0.5 $long
dsag, nwait 3 with a straggler:-o algorithm.plugin=sag -o algorithm.variant=dsag -o algorithm.subpartitions=2 -o algorithm.step=0.5 $straggler
subspace, nwait 3 with a straggler:-o algorithm.plugin=subspace -o algorithm.step= $straggler
EOF2
done_testing
