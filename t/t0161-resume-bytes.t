#!/bin/sh
# A resumed run's byte counters go on from its checkpoint's, as its
# iterations and time do: they restarted at 0, so a run stopped and
# resumed summed to less than one run through.  gd waiting for every
# worker sends and receives the same bytes every round, under any load.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
seed: 8
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 2000, cols: 20}
stop: {iterations: 200}
output: {checkpoint: ck.bin, checkpoint_every: 20}
YAML
# bytes LINE: the summary's byte counters
bytes() {
    printf '%s\n' "$1" | grep -oE ' (sent|recv)_(bytes|payload)=[0-9]+' | tr -d '\n'
}

run 5 -o output.checkpoint= job.yaml
is "$rc" 0 "a run through"
whole=$(bytes "$out")
expect_ok "its summary counts bytes ($whole)" [ -n "$whole" ]
run 5 -o stop.iterations=90 job.yaml
is "$rc" 0 "a run stopped at iteration 90"
part=$(bytes "$out")
run 5 --resume job.yaml
is "$rc" 0 "resumed"
is "$(field iterations "$out")" 200 "to the job's limit"
is "$(bytes "$out")" "$whole" "its byte counters are the run through's"
expect_ok "more than the first part's" [ "$(bytes "$out")" != "$part" ]
like "$out" "
  bytes +sent [1-9]" "and the report's bytes line counts them"

# a checkpoint of the layout before (3, without the bytes) is refused,
# naming the layout, rather than read as if it had them
cp ck.bin old.bin
printf '\003' | dd of=ck.bin bs=1 seek=8 conv=notrunc 2>/dev/null
run 5 --resume job.yaml
is "$rc" 2 "a checkpoint of layout 3: exit 2"
like "$err" "ck.bin: written by another aiarun \\(checkpoint layout 3, plugin ABI [0-9]+; this one writes 4 and" \
    "naming its layout and this one's"
done_testing
