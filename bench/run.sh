#!/bin/sh
# run.sh - run aiarun's benchmarks and write bench/RESULTS.md.
#
#     make bench                     (from a build folder)
#
# make passes top_srcdir, top_builddir, MPIRUN and AWK.  Also read:
#   BENCH_CASES    the cases to run, in order (default: overhead
#                  stragglers accuracy compute scaling tree local compress
#                  python pyalg methods memory mlp large shards; autostep,
#                  about half an hour, peers, about 10 minutes a repetition,
#                  peerspca, about a minute a repetition, and race, 2 to
#                  4 minutes a repetition, run only when named)
#   BENCH_REPS     repetitions of every measurement (default 5)
#   BENCH_RESULTS  where to write the results (default
#                  $top_srcdir/bench/RESULTS.md); the part of the file
#                  it replaces from the line KEEP on (dated runs kept
#                  by hand) is carried over
# Scratch files (job files, histories, the raw measurements raw.tsv) go
# to $top_builddir/bench/out.
set -u

: "${top_srcdir:?run me through make bench}" "${top_builddir:?run me through make bench}"
: "${BENCH_CASES:=overhead stragglers accuracy compute scaling tree local compress python pyalg methods memory mlp large shards}"
: "${BENCH_RESULTS:=}"
[ -n "$BENCH_RESULTS" ] || BENCH_RESULTS=$top_srcdir/bench/RESULTS.md

here=$top_srcdir/bench
KEEP='<!-- bench/run.sh keeps this line and what follows -->'
. "$here/lib.sh"
for f in overhead stragglers accuracy compute scaling tree local compress python pyalg methods memory mlp autostep large shards peers race; do
    . "$here/$f.sh"
done

OUT=$top_builddir/bench/out
rm -rf "$OUT"
mkdir -p "$OUT" || exit 1
RAW=$OUT/raw.tsv
: >"$RAW"

start=$(date +%s)
load0=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null)
when=$(date -u '+%Y-%m-%d %H:%M UTC')
for c in $BENCH_CASES; do
    case $c in
    overhead | stragglers | accuracy | compute | scaling | tree | local | compress | python | pyalg | methods | memory | mlp | autostep | large | shards | peers | peerspca | race) ;;
    *)
        echo "bench: unknown case '$c'" >&2
        exit 2
        ;;
    esac
    say "case $c"
    "case_$c"
done
end=$(date +%s)
load1=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null)

bindings=$(brun 5 --report-bindings "$BIN/star" 10 10 2>&1 >/dev/null |
    sed -n 's/^\[[^]]*\] //p' | sort)
ompi=$("$MPIRUN" --version 2>/dev/null | head -n 1)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)

{
    cat <<EOF
# aiarun benchmark results

Written by \`make bench\` (bench/run.sh); every number below comes from
the run described here. Each comparison runs its programs side by side,
one after the other, in every repetition; tables give medians over the
repetitions and ratios as medians of the per-repetition ratios. The
machine is shared with other work, so single runs are noisy: read the
ratios, not the last digit.

| | |
|---|---|
| command | \`make bench\` (BENCH_CASES="$BENCH_CASES" BENCH_REPS=$BENCH_REPS) |
| date | $when |
| Open MPI | $ompi |
| cores (\`nproc\`) | $(nproc) ($cpu) |
| launch | \`mpirun -np N $MPIFLAGS\` for every program, aiarun and baselines alike |
| binding | \`--bind-to none\`; \`--report-bindings\` of a 5-rank run: $(printf '%s\n' "$bindings" | "$AWK" '{ sub(/^MCW rank [0-9]+ /, ""); n[$0]++ } END { for (l in n) { printf "%s%d ranks: %s", sep, n[l], l; sep = "; " } }') |
| repetitions | $BENCH_REPS |
| load average (1, 5, 15 min) | $load0 at the start, $load1 at the end |
| wall time | $((end - start)) s |

EOF
    for c in $BENCH_CASES; do
        cat "$OUT/$c.md"
    done
    cat "$here/ANALYSIS.md"
    if [ -f "$BENCH_RESULTS" ]; then
        echo
        "$AWK" -v k="$KEEP" 'f || $0 == k { f = 1; print }' "$BENCH_RESULTS"
    fi
} >"$BENCH_RESULTS.tmp" && mv "$BENCH_RESULTS.tmp" "$BENCH_RESULTS"
say "wrote $BENCH_RESULTS in $((end - start)) s"
cat "$BENCH_RESULTS"
