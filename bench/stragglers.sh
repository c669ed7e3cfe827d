# stragglers.sh - case 2, straggler throughput: rounds per second of 4
# workers with 1 ms of work each, for nwait = 1 .. 4, with no straggler,
# with one persistent straggler (rank 2, 10 ms more on every answer) and
# with the two-state Markov burst model on every worker; against the
# order-statistics prediction and a simulation of the protocol.  Sourced
# by bench/run.sh.

STRAG_WORK=1      # ms, every answer
STRAG_FIXED=10    # ms, rank 2's every answer
STRAG_PSLOW=0.05  # Markov: per answer, fast -> slow
STRAG_PFAST=0.25  # Markov: per answer, slow -> fast
STRAG_DELAY=10    # ms, Markov: each answer while slow
STRAG_TIME=0.5    # s, each run

strag_job() { # SCENARIO
    cat <<YAML
# bench: straggler throughput, scenario $1
seed: 11
algorithm:
  plugin: noop
problem:
  plugin: nullprob
  dim: 10
pool:
  wait:
    nwait: 4
stop:
  time: $STRAG_TIME
stragglers:
  work_ms: $STRAG_WORK
YAML
    case $1 in
    fixed)
        printf '  fixed:\n    ranks: [2]\n    delay_ms: %s\n' "$STRAG_FIXED"
        ;;
    markov)
        printf '  markov:\n    p_slow: %s\n    p_fast: %s\n    delay_ms: %s\n' \
            "$STRAG_PSLOW" "$STRAG_PFAST" "$STRAG_DELAY"
        ;;
    esac
}

# strag_predict SCENARIO NWAIT : two predictions of the mean round, in ms,
# without overhead: "ORDERSTAT SIMULATION".
#
# ORDERSTAT: the k-th order statistic of the 4 workers' answer times,
# each worker slow independently with its stationary probability
# pi = p_slow / (p_slow + p_fast) (Markov) or always (the fixed
# straggler), averaged over the 16 slow/fast patterns.
#
# SIMULATION: the protocol itself, event by event: a round sends to every
# idle worker and ends at the k-th fresh answer; a stale answer gets the
# current query at once; each answer's time is drawn as the runtime's
# delay model draws it (the Markov state changes per answer).  40,000
# rounds, awk's random numbers.
strag_predict() {
    "$AWK" -v sc="$1" -v k="$2" -v work="$STRAG_WORK" \
        -v fixed="$STRAG_FIXED" -v ps="$STRAG_PSLOW" -v pf="$STRAG_PFAST" \
        -v D="$STRAG_DELAY" '
    function service(w,   d) {
        d = work
        if (sc == "fixed" && w == 2) d += fixed
        if (sc == "markov") {
            u = rand()
            if (slow[w]) { if (u < pf) slow[w] = 0 }
            else if (u < ps) slow[w] = 1
            if (slow[w]) d += D
        }
        return d
    }
    BEGIN {
        srand(7)
        # order statistics over the 16 patterns
        pi = (sc == "markov") ? ps / (ps + pf) : 0
        e = 0
        for (m = 0; m < 16; m++) {
            p = 1
            for (w = 1; w <= 4; w++) {
                s = int(m / 2 ^ (w - 1)) % 2
                t[w] = work + (sc == "fixed" && w == 2 ? fixed : 0)
                if (sc == "markov") {
                    p *= s ? pi : 1 - pi
                    if (s) t[w] += D
                } else if (s) {
                    p = 0
                }
            }
            if (p == 0) continue
            for (i = 2; i <= 4; i++) {
                x = t[i]
                for (j = i - 1; j >= 1 && t[j] > x; j--) t[j + 1] = t[j]
                t[j + 1] = x
            }
            e += p * t[k]
        }
        # the protocol, event by event
        R = 40000
        now = 0
        round = 1
        fresh = 0
        for (w = 1; w <= 4; w++) {
            sent[w] = 1; busy[w] = 1; fin[w] = service(w)
        }
        while (round <= R) {
            b = 0
            for (w = 1; w <= 4; w++)
                if (busy[w] && (b == 0 || fin[w] < fin[b])) b = w
            now = fin[b]
            busy[b] = 0
            if (sent[b] == round) fresh++
            else { sent[b] = round; busy[b] = 1; fin[b] = now + service(b) }
            if (fresh >= k) {
                round++
                fresh = 0
                for (w = 1; w <= 4; w++)
                    if (!busy[w]) {
                        sent[w] = round; busy[w] = 1
                        fin[w] = now + service(w)
                    }
            }
        }
        printf "%.6g %.6g\n", e, now / R
    }'
}

case_stragglers() {
    for sc in none fixed markov; do
        strag_job "$sc" >"$OUT/stragglers-$sc.yaml"
    done
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "stragglers: repetition $rep of $BENCH_REPS"
        for sc in none fixed markov; do
            for k in 1 2 3 4; do
                line=$(aia 5 "$OUT/stragglers-$sc.yaml" \
                    -o "pool.wait.nwait=$k")
                t=$(field time "$line")
                it=$(field iterations "$line")
                rps=
                [ -n "$t" ] && rps=$(calc "$it / $t")
                record stragglers "$sc/$k" "$rep" "$rps"
                if [ "$sc" = none ]; then
                    # the plain MPI star with the same 1 ms of work
                    line=$(brun 5 "$BIN/star" 10 400 "$k" waitsome \
                        "$STRAG_WORK")
                    t=$(field time "$line")
                    rps=
                    [ -n "$t" ] && rps=$(calc "400 / $t")
                    record stragglers "plain/$k" "$rep" "$rps"
                fi
            done
        done
        rep=$((rep + 1))
    done
    stragglers_table >"$OUT/stragglers.md"
}

stragglers_table() {
    cat <<EOF
## 2. Straggler throughput

Rounds per second (median of the repetitions, ${STRAG_TIME} s runs) of
\`bench/noop.c\` on 4 workers, each answer delayed ${STRAG_WORK} ms
(\`stragglers.work_ms\`), for \`pool.wait.nwait\` = 1 to 4. **fixed**: rank
2 is ${STRAG_FIXED} ms slower on every answer (\`stragglers.fixed\`).
**markov**: every worker turns slow with probability ${STRAG_PSLOW} per
answer and fast again with ${STRAG_PFAST} (\`stragglers.markov\`), ${STRAG_DELAY} ms
more per answer while slow: stationary slow probability
π = p_slow / (p_slow + p_fast) = $(calc "$STRAG_PSLOW / ($STRAG_PSLOW + $STRAG_PFAST)").

Predictions: **order statistics**: the round is the k-th fastest of the
4 answer times, each worker slow with probability π (Markov) or always
(the fixed straggler), plus the overhead o(k) measured in the same
repetitions with no straggler (o = measured round − ${STRAG_WORK} ms; the
no-straggler rows therefore equal their prediction by construction).
**simulation**: the protocol simulated event by event (a slow worker stays
busy over several rounds and is not sent the new query until it answers;
the Markov state moves per answer, as in the runtime), plus o(k).
**plain MPI**: \`bench/star.c\` (see case 1) with the same nwait, its
workers sleeping ${STRAG_WORK} ms before each answer, run side by side with
the no-straggler runs: the overhead o is mostly the machine's (sleeps
that wake late, 5 ranks sharing 2 cores), not aiarun's.

| stragglers | nwait | rounds/s | overhead o (µs) | order statistics: predicted rounds/s | measured / predicted | simulation: predicted rounds/s | measured / predicted |
|---|---:|---:|---:|---:|---:|---:|---:|
EOF
    for sc in none fixed markov; do
        for k in 1 2 3 4; do
            m=$(med stragglers "$sc/$k")
            base=$(med stragglers "none/$k")
            o=$(calc "1000 / $base - $STRAG_WORK") # ms
            set -- $(strag_predict "$sc" "$k")
            po=$(calc "1000 / ($1 + $o)")
            psim=$(calc "1000 / ($2 + $o)")
            echo "| $sc | $k | $(fmt "$m") | $(fmt "$(calc "1000 * $o")") | $(fmt "$po") | $(fmt "$(calc "$m / $po")") | $(fmt "$psim") | $(fmt "$(calc "$m / $psim")") |"
        done
    done
    cat <<EOF

No straggler, aiarun against the plain MPI star with the same work:

| nwait | aiarun rounds/s | plain MPI rounds/s | aiarun / plain |
|---:|---:|---:|---:|
EOF
    for k in 1 2 3 4; do
        echo "| $k | $(fmt "$(med stragglers "none/$k")") | $(fmt "$(med stragglers "plain/$k")") | $(ratio stragglers "none/$k" "plain/$k") |"
    done
    f34=$(ratio stragglers fixed/3 fixed/4)
    n34=$(ratio stragglers none/3 none/4)
    ok1=0
    holds "$f34 >= 8" && ok1=1
    ok2=0
    holds "$n34 >= 0.9" && ok2=1
    cat <<EOF

| target | measured | |
|---|---:|:---:|
| persistent straggler: rounds/s of nwait=3 at least 8x nwait=4 | ${f34}x | $(verdict $ok1) |
| no straggler: nwait=3 loses nothing against nwait=4 (rounds/s of nwait=3 / nwait=4 at least 0.9) | ${n34} | $(verdict $ok2) |

EOF
}
