# lib.sh - TAP helpers for aiarun's shell tests.  Source it, call plan.
#
# Every command that could hang runs under `timeout`, so a broken protocol
# fails a test instead of stalling the suite.

set -u
: "${AIARUN:?run the tests through make check}"
: "${MPIRUN:=mpirun}"
# Open MPI's mpirun needs --oversubscribe for more ranks than cores;
# MPICH's hydra oversubscribes as it is and knows no such flag.
case $("$MPIRUN" --version 2>&1) in
*"Open MPI"* | *OpenRTE*) aia_ompi=yes ;;
*) aia_ompi=no ;;
esac
if [ -z "${AIA_MPIRUN_FLAGS+set}" ]; then
    if [ $aia_ompi = yes ]; then AIA_MPIRUN_FLAGS=--oversubscribe; else
        AIA_MPIRUN_FLAGS=; fi
fi
test_count=0
test_failed=0
test_planned=

# The plan is printed by done_testing, after the tests, unless given here.
plan() { echo "1..$1"; test_planned=$1; }

skip_all() { echo "1..0 # SKIP $*"; exit 0; }

diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

ok() {
    # ok CONDITION-STATUS DESCRIPTION; a failure also shows the last run.
    test_count=$((test_count + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $test_count - $2"
    else
        echo "not ok $test_count - $2"
        test_failed=$((test_failed + 1))
        run_diag
    fi
}

# expect_ok DESCRIPTION COMMAND... : ok when the command exits 0.  The
# command runs in a subshell (an `exit` or an unset variable in it fails
# the test, not the script), its stdout goes to stderr (never into the
# TAP stream).  On failure: the command as run and its status.
expect_ok() {
    _desc=$1; shift
    ("$@") >&2
    _st=$?
    ok $_st "$_desc"
    [ $_st = 0 ] || diag "command: $*" "exit status: $_st"
}

# expect_fail DESCRIPTION COMMAND... : ok when the command exits non-zero.
expect_fail() {
    _desc=$1; shift
    ("$@") >&2
    _st=$?
    if [ $_st != 0 ]; then ok 0 "$_desc"; else
        ok 1 "$_desc"; diag "command: $*" "exit status: 0, want non-zero"; fi
}

# expect_status N DESCRIPTION COMMAND... : ok when the command exits N.
expect_status() {
    _want=$1 _desc=$2; shift 2
    ("$@") >&2
    _st=$?
    if [ $_st = "$_want" ]; then ok 0 "$_desc"; else
        ok 1 "$_desc"; diag "command: $*" "exit status: $_st, want $_want"; fi
}

# test_expect DESCRIPTION SCRIPT : ok when SCRIPT (shell text, eval'd in
# a subshell: `&&`, pipes and $variables of the test work) exits 0.
test_expect() {
    (eval "$2") >&2
    _st=$?
    ok $_st "$1"
    [ $_st = 0 ] || diag "script: $2" "exit status: $_st"
}

# expect_grep DESCRIPTION EXTENDED-REGEX FILE : ok when a line of FILE
# matches; on failure the tail of FILE.  expect_nogrep: when none does.
expect_grep() {
    if grep -Eq -- "$2" "$3"; then ok 0 "$1"; else
        ok 1 "$1"; diag "no line of $3 matches: $2"; tail_of "$3"; fi
}
expect_nogrep() {
    if grep -Eq -- "$2" "$3"; then
        ok 1 "$1"; diag "a line of $3 matches: $2"
        grep -E -m 3 -- "$2" "$3" | sed 's/^/#   /'
    else ok 0 "$1"; fi
}

# tail_of FILE : the last lines of FILE as diagnostics.
tail_of() {
    if [ -f "$1" ]; then
        tail -n "${AIA_DIAG_LINES:-8}" "$1" | sed 's/^/#   /'
    else diag "($1: no such file)"; fi
}

is() {
    # is GOT WANT DESCRIPTION
    if [ "$1" = "$2" ]; then ok 0 "$3"; else
        ok 1 "$3"; diag "got: '$1'" "want: '$2'"; fi
}

# same_file A B: A holds something and B is A byte for byte (two empty
# files, two outputs both lost, agree on nothing).
same_file() { [ -s "$1" ] && cmp -s "$1" "$2"; }

# same GOT WANT DESCRIPTION: is, for two outputs that must agree; an
# empty WANT fails (two runs that both lost a field are not alike).
same() {
    if [ -n "$2" ]; then is "$1" "$2" "$3"; else
        ok 1 "$3"; diag "got: '$1'" "want: nothing (empty)"; fi
}

like() {
    # like TEXT EXTENDED-REGEX DESCRIPTION
    if printf '%s' "$1" | grep -Eq -- "$2"; then ok 0 "$3"; else
        ok 1 "$3"; diag "text: $1" "does not match: $2"; fi
}

unlike() {
    if printf '%s' "$1" | grep -Eq -- "$2"; then
        ok 1 "$3"; diag "text: $1" "matches: $2"; else ok 0 "$3"; fi
}

done_testing() {
    [ -n "$test_planned" ] || echo "1..$test_count"
    [ "$test_failed" -eq 0 ]
    exit $?
}

# A fresh scratch folder for this test, removed at exit.
scratch() {
    trash=$(mktemp -d "${TMPDIR:-/tmp}/aiarun-test.XXXXXX") || exit 99
    trap 'rm -rf "$trash"' EXIT
}

# own_session COMMAND... : COMMAND (a program, not a shell function:
# mpirun, or timeout running it) with a session directory of its own,
# removed after; its status.  Open MPI's mpirun makes its session
# directory under /tmp/ompi.HOST.UID, shared by every job of the user,
# and two started at once race on it ("mkdir ... File exists",
# "orte_init failed"): each gets its own orte_tmpdir_base.  MPICH's
# hydra keeps no such folder and is left as it is.
own_session() {
    [ "$aia_ompi" = yes ] || { "$@"; return; }
    _sess=$(mktemp -d "${TMPDIR:-/tmp}/aia-ompi.XXXXXX") || return 99
    OMPI_MCA_orte_tmpdir_base=$_sess "$@"
    _sess_st=$?
    rm -rf "$_sess"
    return $_sess_st
}

# aia_mpirun NP ARGS... : aiarun under mpirun with NP ranks, oversubscribed
# (AIA_MPIRUN_FLAGS), in a session directory of its own (own_session),
# bounded in time (AIA_TIMEOUT seconds, default 120; run's -t sets it).
aia_mpirun() {
    np=$1; shift
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
    own_session timeout -k 5 "${run_timeout:-${AIA_TIMEOUT:-120}}" "$MPIRUN" -np "$np" \
        $AIA_MPIRUN_FLAGS ${run_flags:-} ${run_wrap:-} "$AIARUN" "$@"
}

# run [-t SECONDS] [-e] [-m MPIRUN-FLAGS] [-w WRAPPER] NP ARGS... :
# aiarun on NP ranks under mpirun (aia_mpirun: the launcher's flags,
# root allowed), stdin /dev/null, ended after SECONDS (default
# AIA_TIMEOUT, else 120) with status 124; -m: more mpirun flags (words);
# -w: each rank runs WRAPPER (words, e.g. valgrind OPTIONS) with aiarun
# and ARGS as its command.
# Sets $rc (the exit status, also run's own), $out and $err (stdout and
# stderr, also in out.txt and err.txt of the current folder).  -e:
# aia_mpirun_each, so $rank_status holds each rank's own status too.
run() {
    _timeout=${AIA_TIMEOUT:-120} _launch=aia_mpirun _wrap= _flags=
    while :; do
        case $1 in
        -t) _timeout=$2; shift 2 ;;
        -e) _launch=aia_mpirun_each; shift ;;
        -w) _wrap=$2; shift 2 ;;
        -m) _flags=$2; shift 2 ;;
        *) break ;;
        esac
    done
    run_cmd="$*" run_dir=$PWD
    run_timeout=$_timeout run_wrap=$_wrap run_flags=$_flags
    $_launch "$@" </dev/null >out.txt 2>err.txt
    rc=$?
    run_timeout= run_wrap= run_flags=
    out=$(cat out.txt)
    err=$(cat err.txt)
    return $rc
}

# sim ARGS... : aiarun alone, without mpirun (aiarun --simulate N ...),
# ended after AIA_TIMEOUT (else 120) seconds; sets $rc, $out and $err as
# run does.
sim() {
    timeout -k 5 "${AIA_TIMEOUT:-120}" "$AIARUN" "$@" >out.txt 2>err.txt
    rc=$?
    out=$(cat out.txt)
    err=$(cat err.txt)
}

# run_diag : the last run (command, status, tail of its stderr) as
# diagnostics; nothing when the test has not run one.
run_diag() {
    [ -n "${run_cmd:-}" ] || return 0
    diag "last run: $run_cmd (in $run_dir)" "its exit status: $rc; its stderr ends:"
    tail_of "$run_dir/err.txt"
}

# noprogress TEXT : TEXT without aiarun's progress lines (runs over a
# second print them on stderr), to check that nothing else is there.
noprogress() { printf '%s\n' "$1" | grep -v '^aiarun\[0\]: progress: ' || true; }

# aia_mpirun_each NP ARGS... : aia_mpirun, keeping every rank's own exit
# status: $rank_status gets them in rank order ("2 2 2"; "-" for a rank
# that left none, killed).  Each rank exits 0 to mpirun, so that mpirun
# kills none of them early when one fails.
aia_mpirun_each() {
    np=$1; shift
    rm -f rank-status.*
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
    own_session timeout -k 5 "${run_timeout:-${AIA_TIMEOUT:-120}}" "$MPIRUN" -np "$np" \
        $AIA_MPIRUN_FLAGS ${run_flags:-} sh -c '"$0" "$@"; echo $? >"rank-status.${OMPI_COMM_WORLD_RANK:-$PMI_RANK}"' \
        ${run_wrap:-} "$AIARUN" "$@"
    each_rc=$?
    rank_status=$(r=0; while [ $r -lt "$np" ]; do
        cat "rank-status.$r" 2>/dev/null || echo -; r=$((r + 1)); done |
        tr '\n' ' ' | sed 's/ $//')
    return $each_rc
}

# float_le A B : A <= B, for floats written as decimal numbers.  Anything
# else fails: awk holds "-nan" (0/0 printed by awk itself, a lost field
# divided by another) below any bound, and "nan" or "inf" above any.
float_le() {
    awk -v a="$1" -v b="$2" '
        function num(x) {
            return x ~ /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/
        }
        BEGIN { exit !(num(a) && num(b) && a + 0 <= b + 0) }'
}

# field KEY LINE : the value of key=value in a summary line.
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# long_cases : true when the long cases run too (`make check-long` sets
# AIA_LONG=yes); a test in Makefile.am's LONG_TESTS that `make check` also
# runs keeps its short cases outside `if long_cases`.
long_cases() { [ "${AIA_LONG:-}" = yes ]; }

# skip_test REASON : one test counted as skipped.
skip_test() { test_count=$((test_count + 1)); echo "ok $test_count # SKIP $*"; }

# python_missing MODULE... : why the python problem cannot run a class
# that imports these modules (empty when it can), asking the interpreter
# aiarun embeds (AIA_PYTHON), not the first python3 on PATH.
python_missing() {
    if [ "$AIA_HAVE_PYTHON" != yes ]; then
        echo "aiarun was built without Python"
        return
    fi
    for m in "$@"; do
        "$AIA_PYTHON" -c "import $m" 2>/dev/null ||
            { echo "$AIA_PYTHON cannot import $m"; return; }
    done
}
