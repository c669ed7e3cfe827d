#!/bin/sh
# The plugins of examples/, copied out of the tree and built each by its
# own Makefile through pkg-config (the build's uninstalled aiarun.pc), run
# their job files with the built-in plugins and do what they promise:
# nesterov reaches the optimum far sooner than gd and resumes from a
# checkpoint exactly; huber's gradient matches finite differences over
# the rows its part holds (gradcheck, built with the test host,
# aiarun-testhost) and its fit ignores the wild targets; quantile's rounds
# wait for every worker it names, and the straggler it leaves out is not
# waited for.
. "$top_srcdir/t/lib.sh"
command -v pkg-config >/dev/null || skip_all "pkg-config is not installed"
command -v make >/dev/null || skip_all "make is not installed"
scratch
cp -R "$top_srcdir/examples" "$trash/examples" || exit 99
chmod -R u+w "$trash/examples"
ex=$trash/examples
# the examples' make is not a sub-make of the one running the tests
unset MAKEFLAGS MFLAGS MAKELEVEL
strict='-O2 -Wall -Wextra -Werror'

for p in nesterov huber quantile; do
    make -C "$ex/$p" CC="${CC:-cc}" CFLAGS="$strict" >"$trash/$p.log" 2>&1
    ok $? "examples/$p builds with its Makefile, without a warning"
    [ -s "$ex/$p/$p.so" ] || diag "$(cat "$trash/$p.log")"
done

# --- nesterov: accelerated gradient on a problem of condition number 100
cd "$ex/nesterov" || exit 99
run 5 nesterov.yaml
is "$rc" 0 "nesterov.yaml runs with 5 ranks"
[ "$rc" = 0 ] || diag "$err"
gap=$(field gap "$out")
expect_ok "nesterov ends within 1e-6 of the optimum in 150 iterations (gap $gap)" \
    float_le "${gap:-1}" 1e-6
loss=$(field loss "$out")
sed -e 's|plugin: ./nesterov.so .*|plugin: gd|' -e '/momentum:/d' \
    nesterov.yaml >gd.yaml
run 5 gd.yaml
gdgap=$(field gap "$out")
expect_ok "where gd at the same step is still at gap $gdgap (above 1e-3)" \
    float_le 1e-3 "${gdgap:-0}"
run 5 -o stop.iterations=60 -o output.checkpoint=ck.bin nesterov.yaml
test_expect "a run stopped at iteration 60 leaves a checkpoint" \
    '[ "$rc" = 0 ] && [ -s ck.bin ]'
run 5 --resume -o output.checkpoint=ck.bin nesterov.yaml
like "$out" "resumed +from ck.bin at iteration 60 " "--resume runs on from it"
same "$(field loss "$out")" "$loss" \
    "and ends with exactly the uninterrupted run's loss (save and load)"

# --- huber: tested without mpirun (gradcheck, with the test host), then
# run with sgd
cd "$ex/huber" || exit 99
make CC="${CC:-cc}" CFLAGS="$strict" check >check.txt 2>&1
ok $? "huber's gradient matches finite differences (make check: gradcheck)"
is "$(grep -c '^ok: gradient' check.txt)" 6 "at six points, delta 1 and 0.5"
[ "$(grep -c '^ok: gradient' check.txt)" = 6 ] || diag "$(cat check.txt)"
# Worker 1 of 3, cyclic, holds rows 1, 4, 7 ... of huber's 2000: 667 (a
# context without the host's rule held none, and the check compared 0
# with 0).
m=2000
want=$(( (m - 1 + 2) / 3 ))
is "$(sed -n 's/^ok: gradient .* over \([0-9]*\) rows,.*/\1/p' check.txt |
    sort -u)" "$want" "each point over worker 1's $want rows of $m"
is "$(grep -c "^ok: worker 1 of 3 holds $want of $m rows" check.txt)" 2 \
    "which the test host's rule deals it"
is "$(grep -c "^ok: the coordinator holds $m of $m rows" check.txt)" 2 \
    "and the coordinator's part holds every row"
./gradcheck ./huber.so rows=1 >one.txt 2>&1
is "$?" 1 "gradcheck fails over a part of no rows (worker 1 of 3 of 1 row)"
like "$(cat one.txt)" "FAILED: gradient at .* over 0 rows" \
    "naming the 0 rows it would have compared"
run 5 -o stop.iterations=1 huber.yaml
first=$(field loss "$out")
run 5 huber.yaml
is "$rc" 0 "huber.yaml runs with 5 ranks"
[ "$rc" = 0 ] || diag "$err"
loss=$(field loss "$out")
expect_ok "its loss falls from $first to $loss (at most 7.98)" \
    float_le "${loss:-99}" 7.98
inl=$(field inliers "$out")
expect_ok "the fit leaves the clean rows (90%) within delta: inliers $inl" \
    float_le 0.89 "${inl:-0}"
out=$("$AIARUN" --check -o problem.delta=0.01 -o problem.noise=0.5 huber.yaml 2>&1)
like "$out" "delta 0.01 is below the noise 0.5" "its check refuses a bad delta"

# --- quantile: rank 4 delayed 300 ms an answer, the others work 2 ms
cd "$ex/quantile" || exit 99
run 5 -v quantile.yaml
is "$rc" 0 "quantile.yaml runs with 5 ranks"
[ "$rc" = 0 ] || diag "$err"
sets=$(printf '%s\n' "$err" |
    sed -n 's/^aiarun\[0\]: quantile: from round \([0-9]*\) waiting for ranks /\1 /p')
is "$(printf '%s\n' "$sets" | head -1)" "1 1 2 3 4" \
    "round 1 waits for every worker (no latency known yet)"
is "$(printf '%s\n' "$sets" | tail -1 | cut -d' ' -f2-)" "1 2 3" \
    "then for the three fast ones only"
# Every round has a fresh answer from each rank of the set it announced.
printf '%s\n' "$sets" >sets.txt
missing=$(awk -F, -v iters=100 '
    FILENAME == ARGV[1] { split($0, f, " "); from[++n] = f[1] + 0; set[n] = $0; next }
    FNR > 1 && $5 == 0 { fresh[$4 "," $2] = 1 }
    END {
        if (n == 0) print "no set announced"
        k = 1
        for (r = 1; r <= iters; r++) {
            while (k < n && from[k + 1] <= r) k++
            m = split(set[k], s, " ")
            for (i = 2; i <= m; i++)
                if (!((r "," s[i]) in fresh)) printf "%d:%d ", r, s[i]
        }
    }' sets.txt quantile-answers.csv)
is "$missing" "" "every round had the answers of the ranks it waited for"
# Rank 4 answers a round's query in time only when the round waits for
# it (its delay is 150 times the others' work).
unwaited=$(awk -F, '
    FILENAME == ARGV[1] { split($0, f, " "); from[++n] = f[1] + 0; set[n] = $0; next }
    FNR > 1 && $2 == 4 && $5 == 0 { fresh[$4] = 1 }
    END {
        if (n == 0) { printf "0 0"; exit }
        k = 1
        for (r = 1; r <= 100; r++) {
            while (k < n && from[k + 1] <= r) k++
            if (set[k] !~ / 4$/) { rounds++; if (r in fresh) hit++ }
        }
        printf "%d %d", hit, rounds
    }' sets.txt quantile-answers.csv)
expect_ok "the rounds that do not wait for rank 4 do without it (fresh in, of: $unwaited)" \
    awk '{ exit !($2 >= 50 && $1 <= $2 / 10) }' <<EOF
$unwaited
EOF
out=$("$AIARUN" --check -o pool.wait.slack=0.5 quantile.yaml 2>&1)
like "$out" "pool.wait.slack" "its parameter table is enforced"
done_testing
