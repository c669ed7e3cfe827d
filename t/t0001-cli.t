#!/bin/sh
# The command line: help, version, usage errors, the job reference.
. "$top_srcdir/t/lib.sh"

out=$("$AIARUN" --help); rc=$?
is "$rc" 0 "--help exits 0"
like "$out" "^Usage: mpirun -np N aiarun" "--help prints the usage"
like "$out" "AIARUN_PLUGIN_PATH" "--help says where plugins are searched"
for st in 0 1 2 3 4; do
    like "$out" "(^|: |, )$st [a-z]" "--help names exit status $st, as aiarun(1) does"
done

out=$("$AIARUN" --version); rc=$?
is "$rc" 0 "--version exits 0"
like "$out" "^aiarun [0-9]+\.[0-9]+\.[0-9]+ \(plugin ABI 2\)$" \
    "--version prints the version and the ABI"

err=$("$AIARUN" --no-such-option 2>&1 >/dev/null); rc=$?
is "$rc" 2 "an unknown option exits 2"
like "$err" "Try 'aiarun --help'" "and says where the options are, in one line"

"$AIARUN" >/dev/null 2>&1; rc=$?
is "$rc" 2 "no job file exits 2"

err=$("$AIARUN" --check a.yaml b.yaml 2>&1); rc=$?
expect_ok "two job files exit 2" [ "$rc" = 2 ]

out=$("$AIARUN" --job-reference); rc=$?
is "$rc" 0 "--job-reference exits 0"
for key in '`seed`' '`plugin`' '`partition`' '`workers`' '`iterations`' \
    '`history`'; do
    printf '%s' "$out" | grep -qF "| $key |" || missing="$missing $key"
done
is "${missing:-}" "" "the reference lists every runtime key"

scratch
err=$(cd "$trash" && timeout 60 "$AIARUN" "$top_srcdir/etc/sgd-lrmse.yaml" \
    2>&1); rc=$?
test_expect "a run outside mpirun (one rank) says it needs workers and exits 2" \
    '[ "$rc" = 2 ] && printf "%s" "$err" | grep -q "needs a coordinator and at least one worker"'

# a plugin name one slip away from a known one: the closest is suggested
# (two neighbours swapped is one slip: sdg is sgd, not sag)
err=$("$AIARUN" --check -o algorithm.plugin=sdg "$top_srcdir/etc/sgd-lrmse.yaml" 2>&1); rc=$?
is "$rc" 2 "an unknown algorithm plugin exits 2"
like "$err" "algorithm: sdg: algorithm plugin not found; did you mean 'sgd'\\? \\(looked for sdg\\.so in " \
    "and suggests the closest known plugin"
err=$("$AIARUN" --check -o 'pool.wait={plugin: standrd}' "$top_srcdir/etc/sgd-lrmse.yaml" 2>&1)
like "$err" "did you mean 'standard'\\?" "a built-in plugin is suggested too"
err=$("$AIARUN" --check -o problem.plugin=qwertyuiop "$top_srcdir/etc/sgd-lrmse.yaml" 2>&1)
unlike "$err" "did you mean" "a name close to none gets no suggestion"

# aiarun-evaluate names an unknown plugin once, with the suggestion
EVALUATE="${AIARUN_EVALUATE:?run the tests through make check}"
err=$("$EVALUATE" lrmes '{}' x.csv model.txt 2>&1); rc=$?
is "$rc" 1 "aiarun-evaluate: an unknown plugin exits 1"
like "$err" "^aiarun-evaluate: lrmes: problem plugin not found; did you mean 'lrmse'\\? \\(looked for" \
    "naming it once (it said 'huberreg: huberreg:'), with the suggestion"
unlike "$err" "lrmes: lrmes:" "never twice"
done_testing
