#!/bin/sh
# Full devices (issue 37): standard output on /dev/full (every mode
# exited 0 with nothing said, its report lost); each output on a full
# file system (a history row torn, an iterate record cut at 16,384
# bytes, the failure seen only at close and once named with a stale
# errno): whole rows and records, the file and the error named, exit 1.
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

# --- outputs on a full file system: a tmpfs of 64 KiB
mkdir fs
if [ "$(id -u)" != 0 ]; then
    skip_test "outputs on a full file system: not root (mount needs it)"
    done_testing
fi
if ! mount -t tmpfs -o size=64k tmpfs fs 2>/dev/null; then
    skip_test "outputs on a full file system: mount -t tmpfs was refused"
    done_testing
fi
trap 'umount "$trash/fs" 2>/dev/null; rm -rf "$trash"' EXIT
# rows to fill it many times over, each iteration written
long="-o stop.iterations=100000 -o output.every=1"

# fields NAME : the distinct field counts of CSV's lines, and "torn"
# when its last byte is not a newline
fields() {
    awk -F, '{ print NF }' "$1" | sort -u | tr '\n' ' '
    [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || echo torn
}

# shellcheck disable=SC2086
sim --simulate 2 $long -o output.history=fs/h.csv job.yaml
is "$rc" 1 "a history on a full file system: exit 1"
like "$err" "fs/h\.csv: write failed: No space left on device" \
    "naming the file and the write's error"
is "$(fields fs/h.csv)" "6 " "every row whole (none torn)"
it=$(tail -n 1 fs/h.csv | cut -d, -f1)
expect_ok "the run ended when the write failed (at iteration $it)" \
    [ "$it" -lt 100000 ]
rm -f fs/*

# shellcheck disable=SC2086
sim --simulate 2 $long -o output.answers=fs/a.jsonl -o output.format=jsonl \
    job.yaml
is "$rc" 1 "an answer log on a full file system: exit 1"
like "$err" "fs/a\.jsonl: write failed: No space left on device" \
    "naming the file and the write's error"
bad=$(grep -cv '^{.*}$' fs/a.jsonl)
is "$bad" 0 "every JSON Lines row whole"
is "$(tail -c 1 fs/a.jsonl | od -An -c | tr -d ' ')" '\n' "the last one too"
rm -f fs/*

# shellcheck disable=SC2086
sim --simulate 2 $long -o output.iterates=fs/it.bin -o problem.cols=1000 \
    -o algorithm.step=0.001 job.yaml
is "$rc" 1 "iterates on a full file system: exit 1"
like "$err" "fs/it\.bin: write failed: No space left on device" \
    "naming the file and the write's error"
size=$(wc -c <fs/it.bin)
expect_ok "the file holds records ($size bytes)" [ "$size" -gt 24 ]
cut=$(( (size - 24) % (24 + 8 * 1000) ))
is "$cut" 0 \
    "the header and whole records of 8,024 bytes, none cut"
rm -f fs/*
# a record larger than the buffer is written on its own: none fits
# shellcheck disable=SC2086
sim --simulate 2 $long -o output.iterates=fs/it.bin -o problem.cols=10000 \
    -o algorithm.step=0.0001 job.yaml
like "$err" "fs/it\.bin: write failed: No space left on device" \
    "records of 80,024 bytes on 64 KiB: the error named"
is "$(wc -c <fs/it.bin | tr -d ' ')" 24 "and the file is its header alone"
rm -f fs/*

sim --simulate 2 -o stop.iterations=1 -o algorithm.step=0.001 -o output.final=fs/f.txt \
    -o problem.cols=10000 job.yaml
is "$rc" 1 "a final iterate on a full file system: exit 1"
like "$err" "fs/f\.txt: write failed: No space left on device" \
    "naming the file and the write's error"
is "$(fields fs/f.txt)" "1 " "every line whole"
rm -f fs/*

# the per-worker table of 600 workers (about 100 KB), written at the end
sim --simulate 600 -q -o problem.rows=4000 -o stop.iterations=2 \
    -o output.workers=fs/w.csv job.yaml
is "$rc" 1 "a worker table on a full file system: exit 1"
like "$err" "fs/w\.csv: write failed: No space left on device" \
    "naming the file and the write's error"
is "$(fields fs/w.csv)" "37 " "every row whole (the last one was torn)"
rm -f fs/*

# shellcheck disable=SC2086
run 3 $long -o output.history=fs/h.csv job.yaml
is "$rc" 1 "under mpirun: a history on a full file system: exit 1"
like "$err" "aiarun\[0\]: fs/h\.csv: write failed: No space left on device" \
    "naming the file and the write's error"
is "$(fields fs/h.csv)" "6 " "every row whole"

done_testing
