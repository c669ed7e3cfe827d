#!/bin/sh
# A worker in a tree receives its children's answers, and a child is
# untrusted whatever it sends, as a worker is to the coordinator: its
# message is probed before it is received, checked, and a bad one names
# its sender.  The subtree's root reports it up as the child's failure:
# the run stops cleanly with exit status 1, its outputs written.  The
# fixtures are t/fixtures/hostile.c's badmsg, sending to its tree parent,
# and nanstep, a leaf's answer holding NaN.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

rows() { [ -e h.csv ] && wc -l <h.csv || echo 0; }

# badmsg NP RANK PARENT BYTES : in a tree of arity 2 over NP - 1 workers,
# leaf RANK sends PARENT BYTES bytes of zeros at its answer 3.
badmsg() {
    cat >job.yaml <<YAML
algorithm: {plugin: $FIXTURES/badmsg.so, rank: $2, to: $3, bytes: $4}
problem: {plugin: lrmse, rows: 400, cols: 4}
pool: {topology: tree, arity: 2}
stop: {iterations: 50}
output: {history: h.csv, every: 1}
YAML
    rm -f h.csv
    run -t 60 "$1" job.yaml
}

# 4 workers: rank 3 is a leaf under rank 1; 6 workers: rank 5 under rank 2
for c in "5 3 1 1048576 an oversized (1 MiB) answer" \
    "5 3 1 64 a malformed header" \
    "7 5 2 1048576 an oversized (1 MiB) answer" \
    "7 5 2 64 a malformed header"; do
    set -- $c
    np=$1 leaf=$2 parent=$3 bytes=$4
    shift 4
    what="$* from rank $leaf of $((np - 1)) workers"
    badmsg "$np" "$leaf" "$parent" "$bytes"
    is "$rc" 1 "$what: the run fails with exit status 1, no hang"
    case $bytes in
    64) why="not an aiarun message" ;;
    *) why="a message of $bytes bytes, more than the [0-9]+ a message of this job can have" ;;
    esac
    expect_grep "$what: its parent names it" \
        "^aiarun\[$parent\]: rank $leaf sent $why \($bytes bytes\): not trusted; reporting it up" err.txt
    expect_grep "$what: the coordinator names it" \
        "^aiarun\[0\]: stopping: rank $parent failed: rank $leaf sent $why \($bytes bytes\)" err.txt
    expect_nogrep "$what: no abort inside MPI" \
        "MPI_ERR|MPI_ABORT|Segmentation|exiting improperly" err.txt
    expect_ok "$what: the history has the rows made ($(rows) lines)" \
        [ "$(rows)" -ge 3 ]
    expect_grep "$what: the summary line" "^stop=error " out.txt
done

# A well-formed answer holding NaN is no malformed message: the leaf's
# parent, the one rank that checks it, reports the method's divergence
# up, naming the leaf, the round and the index, and the run stops.
cat >nan.yaml <<YAML
algorithm: {plugin: $FIXTURES/nanstep.so, rank: 3, after: 3}
problem: {plugin: lrmse, rows: 400, cols: 4}
pool: {topology: tree, arity: 2}
stop: {iterations: 50}
output: {history: h.csv, every: 1}
YAML
rm -f h.csv
run -t 60 5 nan.yaml
is "$rc" 1 "an answer holding NaN in a tree: exit status 1, no hang"
expect_grep "the coordinator names the leaf, the round and the index" \
    "^aiarun\[0\]: stopping: rank 1 failed: rank 3: algorithm 'nanstep': answer to round [0-9]+ holds nan at index 2: the method diverged" err.txt
expect_nogrep "the leaf is not distrusted" "not trusted" err.txt
expect_grep "the summary line" "^stop=error " out.txt
done_testing
