#!/bin/sh
# t/lib.sh itself: the assertions fail when they should (each is tried in
# a subshell whose TAP lines are read, not reported), and run ends a
# command that hangs.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
plan 27

# tap SHELL-TEXT : the TAP lines that SHELL-TEXT prints after sourcing
# lib.sh, its diagnostics dropped.
tap() { (test_count=0 test_failed=0; eval "$1") 2>/dev/null | grep -v '^#'; }

is "$(tap 'expect_ok "d" true')" "ok 1 - d" "expect_ok: a command that succeeds passes"
is "$(tap 'expect_ok "d" false')" "not ok 1 - d" "expect_ok: a command that fails fails"
is "$(tap 'expect_ok "d" sh -c "exit 3"')" "not ok 1 - d" "expect_ok: any non-zero status fails"
is "$(tap 'expect_fail "d" false')" "ok 1 - d" "expect_fail: a command that fails passes"
is "$(tap 'expect_fail "d" true')" "not ok 1 - d" "expect_fail: a command that succeeds fails"
is "$(tap 'expect_status 3 "d" sh -c "exit 3"; expect_status 3 "e" true')" \
    "$(printf 'ok 1 - d\nnot ok 2 - e')" "expect_status: the status asked for, and only it"
is "$(tap 'x=5; test_expect "d" "[ \$x = 5 ] && true"; test_expect "e" "[ \$x = 5 ] && false"')" \
    "$(printf 'ok 1 - d\nnot ok 2 - e')" "test_expect: a block sees the test's variables; its last failure counts"
is "$(tap 'test_expect "d" "exit 0"; test_expect "e" "echo \$nosuchvar"; echo after')" \
    "$(printf 'ok 1 - d\nnot ok 2 - e\nafter')" "test_expect: an exit or an unset variable ends the block, not the test"
is "$(tap 'same "a" "a" d; same "" "" e; same "a" "b" f')" \
    "$(printf 'ok 1 - d\nnot ok 2 - e\nnot ok 3 - f')" \
    "same: equal and not empty, or the test fails"
le() { float_le "$1" "$2" && echo y || echo n; }
is "$(le 1e-7 1e-6; le -1e-6 0; le 0.89 0.9006666667; le 2 1; le -nan 1e-6;
    le 0.89 nan; le 0.89 inf; le '' 1; le 1 '')" "$(printf 'y\ny\ny\nn\nn\nn\nn\nn\nn')" \
    "float_le: numbers compare; nan, -nan, inf and nothing fail"
printf 'alpha\nbeta\n' > f.txt
: > e1.txt; : > e2.txt; cp f.txt g.txt
is "$(same_file f.txt g.txt && echo y; same_file e1.txt e2.txt || echo n;
    same_file f.txt e1.txt || echo n)" "$(printf 'y\nn\nn')" \
    "same_file: equal and not empty, else false"
is "$(tap 'expect_grep "d" "^be" f.txt; expect_grep "e" "^gam" f.txt')" \
    "$(printf 'ok 1 - d\nnot ok 2 - e')" "expect_grep: a line matches, or the test fails"
is "$(tap 'expect_nogrep "d" "^gam" f.txt; expect_nogrep "e" "^al" f.txt')" \
    "$(printf 'ok 1 - d\nnot ok 2 - e')" "expect_nogrep: no line matches, or the test fails"
diags=$( (test_count=0 test_failed=0; expect_ok "d" sh -c 'echo oops >&2; exit 4') 2>&1)
like "$diags" "# command: sh -c echo oops >&2; exit 4" "a failure names the command"
like "$diags" "# exit status: 4" "and its status"

# run: stdout, stderr and the status of the ranks' command are kept.
(AIARUN=$(command -v sh); run 1 -c 'echo to-out; echo to-err >&2; exit 3'
 printf '%s|%s|%s|%s|%s' "$rc" "$out" "$(printf '%s\n' "$err" | head -n 1)" \
     "$(cat out.txt)" "$(head -n 1 err.txt)" >cap.txt)
is "$(cat cap.txt)" "3|to-out|to-err|to-out|to-err" \
    "run: \$rc, \$out, \$err (mpirun adds its own lines), out.txt and err.txt"
(AIARUN=$(command -v sh); run 1 -c 'exit 3'; echo $? >ret.txt)
is "$(cat ret.txt)" 3 "run's own status is \$rc"
(AIARUN=$(command -v sh); run -w "env AIA_T=wrapped" 1 -c 'echo "$AIA_T"'; echo "$out" >wrap.txt)
is "$(cat wrap.txt)" wrapped "run -w: each rank runs the wrapper with aiarun as its command"
(AIARUN=$(command -v sh); run -m "-x AIA_T=passed" 1 -c 'echo "$AIA_T"'; echo "$out" >flags.txt)
is "$(cat flags.txt)" passed "run -m: more mpirun flags (here Open MPI's -x)"
(AIARUN=$(command -v sh); run -e 2 -c 'exit 5'; echo "$rank_status" >each.txt)
is "$(cat each.txt)" "5 5" "run -e: each rank's own status in \$rank_status"

# run: each mpirun gets an Open MPI session directory of its own (own_session),
# which Open MPI uses and which is gone after; started at once, runs do not
# collide on /tmp/ompi.HOST.UID.
if [ "$aia_ompi" = yes ]; then
    (AIARUN=$(command -v sh)
     run 2 -c 'echo "$OMPI_MCA_orte_tmpdir_base"; ls "$OMPI_MCA_orte_tmpdir_base" >&2'
     echo "$rc" >sess.rc; echo "$out" >sess1.txt; cp err.txt sess1.err
     run 1 -c 'echo "$OMPI_MCA_orte_tmpdir_base"'; echo "$out" >sess2.txt)
    s1=$(sort -u sess1.txt)
    like "$(cat sess.rc) $s1" "^0 ${TMPDIR:-/tmp}/aia-ompi\.[^ ]+\$" \
        "own_session: both ranks of a run see one session directory of its own"
    expect_grep "Open MPI makes its session under it" '^ompi\.' sess1.err
    test_expect "it is removed after the run" "[ -n '$s1' ] && [ ! -e '$s1' ]"
    test_expect "the next run gets another" "[ '$s1' != \"\$(cat sess2.txt)\" ]"
    i=0
    while [ $i -lt 8 ]; do
        mkdir -p "many$i"
        (cd "many$i" && AIARUN=$(command -v sh) && run 2 -c 'exit 0'; echo "$rc" >rc) &
        i=$((i + 1))
    done
    wait
    is "$(cat many*/rc | tr '\n' ' ')" "0 0 0 0 0 0 0 0 " \
        "8 runs started at once all start and end well"
else
    for i in 1 2 3 4 5; do skip_test "$MPIRUN is not Open MPI's: no session directory"; done
fi

# run: a command that never ends is ended at the time limit (status 124);
# the "aiarun" here is sleep, which mpirun starts like any program.
start=$(date +%s)
(AIARUN=$(command -v sleep); run -t 3 1 600; echo "$rc" >hang.rc; cp err.txt hang.err)
took=$(($(date +%s) - start))
is "$(cat hang.rc)" 124 "run -t 3: a hanging command ends with status 124"
expect_ok "within the limit and mpirun's grace (${took} s)" [ "$took" -lt 30 ]
done_testing
