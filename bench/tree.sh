# tree.sh - tree aggregation: a synchronous round of gd (on
# bench/nullprob.c: no data, so nothing but the exchange is measured) over
# 8 workers, in the star and in trees of arity 2, 4 and 8, against the
# collective a synchronous method would call instead: MPI_Allreduce and
# MPI_Iallreduce of as many doubles (bench/allreduce.c).  Sourced by
# bench/run.sh.

TREE_DIMS="10 1000 100000"
TREE_ARITIES="2 4 8"
TREE_WORKERS=8

tree_rounds() {
    case $1 in
    10) echo 2000 ;;
    1000) echo 1000 ;;
    *) echo 60 ;;
    esac
}

case_tree() {
    job=$OUT/tree.yaml
    cat >"$job" <<'YAML'
# bench: synchronous gd rounds with no data, star or tree
seed: 1
algorithm:
  plugin: gd
  step: 0.1
problem:
  plugin: nullprob
  dim: 10
stop:
  iterations: 1000
YAML
    np=$((TREE_WORKERS + 1))
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "tree: repetition $rep of $BENCH_REPS"
        for dim in $TREE_DIMS; do
            rounds=$(tree_rounds "$dim")
            progs="star"
            for a in $TREE_ARITIES; do progs="$progs tree$a"; done
            # the same star and binary tree, woken at their sleeps' ends
            # instead of by their senders' doorbells
            progs="$progs star-timer tree2-timer allreduce iallreduce"
            # alternate the order, so that no program always runs first
            [ $((rep % 2)) = 0 ] &&
                progs=$(printf '%s\n' $progs | sed '1!G;h;$!d' | tr '\n' ' ')
            for prog in $progs; do
                us=
                case $prog in
                star* | tree*)
                    topo= wake=bell
                    case $prog in *-timer) wake=timer ;; esac
                    base=${prog%-timer}
                    [ "$base" = star ] ||
                        topo="-o pool.topology=tree -o pool.arity=${base#tree}"
                    line=$(aia "$np" "$job" -o "problem.dim=$dim" \
                        -o "stop.iterations=$rounds" -o "pool.wake=$wake" $topo)
                    t=$(field time "$line")
                    it=$(field iterations "$line")
                    [ -n "$t" ] && [ -n "$it" ] && us=$(calc "1e6 * $t / $it")
                    ;;
                allreduce | iallreduce)
                    mode=blocking
                    [ "$prog" = iallreduce ] && mode=nonblocking
                    line=$(brun "$np" "$BIN/allreduce" "$dim" "$rounds" "$mode")
                    us=$(field us_per_round "$line")
                    ;;
                esac
                record tree "$prog/$dim" "$rep" "$us"
            done
        done
        rep=$((rep + 1))
    done
    tree_table >"$OUT/tree.md"
}

tree_table() {
    cat <<EOF
## 6. Tree aggregation against the star and MPI_Allreduce

µs per synchronous round over $TREE_WORKERS workers (9 ranks on the
machine's cores), median of the repetitions: **star**, gd waiting for
every worker (\`nwait\` all), the coordinator receiving 8 answers a
round; **tree k**, the same job with \`pool.topology: tree\`,
\`pool.arity: k\` (\`runtime/mpi/tree.c\`: the query goes down, rows-weighted
means come up, no rank receives more than k answers a round);
**Allreduce** and **Iallreduce**, \`bench/allreduce.c\`: the sum of as
many doubles over the 9 ranks with the collective (Iallreduce then
MPI_Wait); **timer**: the star and the tree of arity 2 with
\`pool.wake: timer\`, a sleeping rank noticing a message at its sleep's
end instead of being woken by its sender's doorbell. Ratios are medians
of per-repetition ratios against the star.

| doubles | star µs | $(for a in $TREE_ARITIES; do printf 'tree %s µs | ' "$a"; done)star, timer µs | tree 2, timer µs | Allreduce µs | Iallreduce µs | $(for a in $TREE_ARITIES; do printf 'tree %s / star | ' "$a"; done)tree 2 / star, both timer | Allreduce / star |
|---:|---:|$(for a in $TREE_ARITIES; do printf -- '---:|'; done)---:|---:|---:|---:|$(for a in $TREE_ARITIES; do printf -- '---:|'; done)---:|---:|
EOF
    for dim in $TREE_DIMS; do
        row="| $dim | $(fmt "$(med tree "star/$dim")") |"
        for a in $TREE_ARITIES; do
            row="$row $(fmt "$(med tree "tree$a/$dim")") |"
        done
        row="$row $(fmt "$(med tree "star-timer/$dim")") | $(fmt "$(med tree "tree2-timer/$dim")") |"
        row="$row $(fmt "$(med tree "allreduce/$dim")") | $(fmt "$(med tree "iallreduce/$dim")") |"
        for a in $TREE_ARITIES; do
            row="$row $(ratio tree "tree$a/$dim" "star/$dim") |"
        done
        row="$row $(ratio tree "tree2-timer/$dim" "star-timer/$dim") |"
        row="$row $(ratio tree "allreduce/$dim" "star/$dim") |"
        echo "$row"
    done
    echo
}
