#!/bin/sh
# pca with a data file: the workers find its smoothness (power iteration
# on their rows), so step: auto works, and sum their a a' for the
# coordinator's eigen-solve, so stop.gap works; gd with the automatic
# step reaches the eigen-solve's explained variance.  The data's target
# column is never used.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

# 400 rows of 6 columns, column j drawn N(0, 0.5^j), then the first two
# mixed so that the principal axes are not the columns; a junk target
awk 'BEGIN {
    srand(11)
    for (r = 0; r < 400; r++) {
        line = ""; sd = 1
        for (j = 0; j < 6; j++) {
            u = sqrt(-2 * log(1 - rand())) * cos(6.283185307 * rand())
            a[j] = sd * u; sd *= sqrt(0.5)
        }
        t = a[0]; a[0] = 0.8 * t + 0.6 * a[1]; a[1] = -0.6 * t + 0.8 * a[1]
        for (j = 0; j < 6; j++) line = line sprintf("%.6f,", a[j])
        print line (r % 3)
    }
}' > rows.csv

cat > job.yaml <<YAML
algorithm: {plugin: gd, step: auto}
problem:
  plugin: pca
  k: 2
  data: {path: rows.csv, header: no}
pool: {wait: {nwait: 0}}
stop: {iterations: 20000, gap: 1e-12, check_every: 10, time: 100}
output: {history: hist.csv, every: 100}
YAML
# one and two workers: the gap, exact from the loss, vanishes (the
# explained variance over a data file with several workers: t0611)
for np in 2 3; do
    run $np -v job.yaml
    is "$rc" 0 "pca with a data file and step: auto runs ($((np - 1)) workers)"
    [ "$rc" = 0 ] || diag "$err"
    L=$(printf '%s\n' "$out" | sed -n 's/.*smoothness L = \([0-9.e+-]*\),.*/\1/p')
    awk -v l="$L" 'BEGIN { exit !(l > 0) }'
    ok $? "the workers gave a smoothness ($L)"
    printf '%s\n' "$out" | grep -q '^ *step .*auto: 1/L'
    ok $? "the step is the automatic one, 1/L"
    last=$(tail -n 1 out.txt)
    gap=$(field gap "$last")
    is "$(field stop "$last")" gap "it stops on the gap ($gap), which the workers' sums made known"
done
eig=$(sed -n "s/.*eigen-solve's top 2 components explain \([0-9.]*\) .*/\1/p" err.txt)
run 2 -v job.yaml
ev=$(field explained_variance "$(tail -n 1 out.txt)")
awk -v a="$ev" -v b="$eig" 'BEGIN { d = a - b; if (d < 0) d = -d
    exit !(a != "" && b != "" && d <= 1e-6) }'
ok $? "gd reaches the eigen-solve's explained variance $eig ($ev)"
done_testing
