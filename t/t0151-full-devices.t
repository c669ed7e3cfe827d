#!/bin/sh
# Full devices (issue 37): standard output on /dev/full (every mode
# exited 0 with nothing said, its report lost).
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
export AIA_TIMEOUT=60

cat > job.yaml <<'YAML'
seed: 3
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 400, cols: 5}
stop: {iterations: 30}
YAML

# --- standard output on a full device
[ -w /dev/full ] || skip_all "no writable /dev/full"
full() {
    timeout 60 "$AIARUN" "$@" >/dev/full 2>err.txt
    rc=$?
    err=$(cat err.txt)
}
for mode in "--simulate 4 job.yaml" "--simulate 4 -q job.yaml" \
    "--check job.yaml" "--list-plugins" "--help" "--job-reference" \
    "--job-reference=man" "--version"; do
    # the modes are words
    # shellcheck disable=SC2086
    full $mode
    is "$rc" 1 "aiarun $mode >/dev/full: exit 1"
    like "$err" "^aiarun(\[0\])?: standard output: write failed" \
        "aiarun $mode >/dev/full: saying so on stderr"
done
like "$err" "standard output: write failed: No space left on device" \
    "naming the error"
# stdout closed by the shell: what --check prints is lost, an error too
timeout 60 "$AIARUN" --check job.yaml >&- 2>err.txt
is "$?" 1 "--check with stdout closed: its line is lost, exit 1"
# a good stdout is no failure
timeout 60 "$AIARUN" --simulate 4 job.yaml >out.txt 2>err.txt
is "$?" 0 "--simulate to a file: exit 0"
is "$(cat err.txt)" "" "and nothing on stderr"

done_testing
