# lib.sh - what the benchmark scripts share; sourced by bench/run.sh.
#
# Every measurement is one line "CASE<TAB>KEY<TAB>REP<TAB>VALUE" in
# $RAW; the tables are made from it afterwards: medians over the
# repetitions of each key, and ratios as the median over repetitions of
# the ratio of two keys measured side by side in the same repetition.

: "${MPIRUN:=mpirun}" "${AWK:=awk}" "${BENCH_REPS:=5}"

AIARUN=$top_builddir/aiarun
BIN=$top_builddir/bench
LRMSE=$top_builddir/problems/.libs/lrmse.so
AIARUN_PLUGIN_PATH=$top_builddir/plugins/.libs:$top_builddir/problems/.libs:$top_builddir/bench/.libs
AIARUN_PLUGINDIR=$top_builddir/bench/no-installed-plugins
export AIARUN_PLUGIN_PATH AIARUN_PLUGINDIR
if [ "$(id -u)" = 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi

# The same launch for every program, aiarun and baselines alike: ranks
# may outnumber cores, no binding (the scheduler places ranks on the two
# cores), and MPI's blocking calls yield the core while they poll, so
# that a waiting rank of a plain MPI program does not starve a working
# one (Open MPI sets this itself only when it sees more ranks than slots).
MPIFLAGS="--oversubscribe --bind-to none --mca mpi_yield_when_idle 1"

# brun NP PROGRAM ARGS... : one run, bounded in time; its stdout.
brun() {
    _np=$1
    shift
    timeout -k 5 "${BENCH_TIMEOUT:-180}" "$MPIRUN" -np "$_np" $MPIFLAGS "$@"
}

# aia NP JOB ARGS... : aiarun's summary line (-q: nothing else).
aia() {
    _np=$1
    _job=$2
    shift 2
    brun "$_np" "$AIARUN" -q "$@" "$_job" | tail -n 1
}

# field KEY LINE : the value of KEY=VALUE in a line.
field() {
    printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# calc EXPR : an awk expression's value.
calc() {
    "$AWK" "BEGIN { printf \"%.6g\\n\", $1 }"
}

# record CASE KEY REP VALUE : one measurement (an empty value: none).
record() {
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-nan}" >>"$RAW"
}

# say TEXT : progress on stderr.
say() {
    printf 'bench: %s\n' "$*" >&2
}

# stats CASE : "KEY<TAB>MEDIAN<TAB>MIN<TAB>MAX<TAB>N" for every key of a
# case (nan values, from runs that did not produce one, sort last; the
# median of an even count is the mean of the middle two).
stats() {
    "$AWK" -F '\t' -v c="$1" '
    $1 == c {
        k = $2
        if (!(k in n)) { keys[++nk] = k; n[k] = 0 }
        v[k, ++n[k]] = ($4 == "nan" || $4 == "inf") ? 1e300 : $4 + 0
    }
    END {
        for (q = 1; q <= nk; q++) {
            k = keys[q]
            m = n[k]
            for (i = 1; i <= m; i++) a[i] = v[k, i]
            for (i = 2; i <= m; i++) {
                x = a[i]
                for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
                a[j + 1] = x
            }
            med = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
            printf "%s\t%.6g\t%.6g\t%.6g\t%d\n", k, med, a[1], a[m], m
        }
    }' "$RAW"
}

# med CASE KEY : the median of a key (1e+300: not measured).
med() {
    stats "$1" | "$AWK" -F '\t' -v k="$2" '$1 == k { print $2 }'
}

# ratio CASE KEY_A KEY_B : the median over repetitions of A/B, the two
# measured side by side in each repetition.
ratio() {
    "$AWK" -F '\t' -v c="$1" -v ka="$2" -v kb="$3" '
    $1 == c && $2 == ka { a[$3] = $4 }
    $1 == c && $2 == kb { b[$3] = $4 }
    END {
        m = 0
        for (r in a)
            if ((r in b) && a[r] != "nan" && b[r] != "nan" && b[r] + 0 != 0)
                x[++m] = a[r] / b[r]
        if (m == 0) { print "nan"; exit }
        for (i = 2; i <= m; i++) {
            y = x[i]
            for (j = i - 1; j >= 1 && x[j] > y; j--) x[j + 1] = x[j]
            x[j + 1] = y
        }
        printf "%.3g\n", m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
    }' "$RAW"
}

# verdict OK : "met" or "**MISSED**", for a table cell.
verdict() {
    if [ "$1" = 1 ]; then echo met; else echo "**MISSED**"; fi
}

# holds EXPR : exit status 0 when an awk condition holds; never when the
# expression names a value that was not measured (nan).
holds() {
    case $1 in *nan* | *inf*) return 1 ;; esac
    "$AWK" "BEGIN { exit !($1) }"
}

# fmti VALUE : a count for a table (1e+300 and nan: "-").
fmti() {
    "$AWK" -v v="$1" 'BEGIN {
        if (v == "" || v == "nan" || v + 0 >= 1e299) print "-";
        else printf "%.0f\n", v }'
}

# fmt VALUE : a number for a table (1e+300 and nan: "-").
fmt() {
    "$AWK" -v v="$1" 'BEGIN {
        if (v == "" || v == "nan" || v + 0 >= 1e299) print "-";
        else if (v + 0 >= 100) printf "%.0f\n", v;
        else if (v + 0 >= 10) printf "%.1f\n", v;
        else printf "%.3g\n", v }'
}
