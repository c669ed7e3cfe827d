#!/bin/sh
# Outputs on odd files: a device, a FIFO or a folder named as an output
# (or as the data file) is refused at start and left as it was; two outputs naming one file, or an
# output naming the job file or the data file, are refused; a file another
# run writes (locked) is refused; --resume with a history shorter than the
# checkpoint records is refused, never padded.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
seed: 3
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 400, cols: 5}
stop: {iterations: 30}
YAML
check() { out=$("$AIARUN" --check "$@" 2>&1); rc=$?; }

# --- non-regular files
mkfifo fifo
mkdir folder
for k in history answers workers iterates final checkpoint; do
    check -o output.$k=/dev/null job.yaml
    is "$rc" 2 "output.$k: /dev/null is refused"
    like "$out" "command line \(-o\): output\.$k: '/dev/null' is a device: outputs are regular files or new paths" \
        "output.$k: the message names the key and says why"
done
sed 's/^stop:.*/&\noutput: {history: fifo}/' job.yaml > fifo.yaml
check fifo.yaml
like "$out" "fifo\.yaml:5:[0-9]+: output\.history: 'fifo' is a FIFO" \
    "a FIFO is refused, with file, line and column"
check -o output.history=fifo job.yaml
like "$out" "output.history: 'fifo' is a FIFO" "given with -o too"
check -o output.checkpoint=folder job.yaml
like "$out" "output.checkpoint: 'folder' is a folder" "a folder is refused"
ln -s /dev/null link
check -o output.final=link job.yaml
like "$out" "output.final: 'link' is a device" "a link to a device is refused"
run 3 -o output.checkpoint=/dev/null job.yaml
run_out=$(cat out.txt err.txt)
is "$rc" 2 "under mpirun too, before the run"
expect_ok "/dev/null is still a device" [ -c /dev/null ]
like "$run_out" "output.checkpoint: '/dev/null' is a device" "and it says so"

# --- data files that are not regular: a FIFO hung every rank in open()
check -o problem.data.path=fifo -o problem.data.format=csv job.yaml
like "$out" "problem.data: '.*/fifo' is a FIFO: data files are regular files" \
    "a FIFO as the data file is refused"
start=$(date +%s)
run -t 60 3 -o problem.data.path=fifo -o problem.data.format=csv job.yaml
is "$rc" 2 "under mpirun too ($(( $(date +%s) - start )) s), no hang"
check -o problem.data.path=/dev/zero -o problem.data.format=libsvm job.yaml
like "$out" "problem.data: '/dev/zero' is a device" "and /dev/zero is not read without end"

# --- collisions
check -o output.history=h.csv -o output.answers=./h.csv job.yaml
like "$out" "output.answers: '\./h\.csv' is also output.history" \
    "two outputs on one file are refused"
check -o output.history=h.csv -o output.checkpoint="$trash/h.csv" job.yaml
like "$out" "output.checkpoint: '.*/h\.csv' is also output.history" \
    "spelled differently too"
check -o output.final=job.yaml job.yaml
like "$out" "output.final: 'job\.yaml' is the job file, an input" \
    "the job file as an output is refused"
printf '1,2,3\n4,5,6\n7,8,9\n3,2,1\n' > d.csv
check -o problem.data.path=d.csv -o output.history=d.csv job.yaml
like "$out" "output.history: 'd\.csv' is problem\.data\.path, an input" \
    "the data file as an output is refused"
is "$(wc -l < d.csv | tr -d ' ')" 4 "and left whole"

# --- a locked history: another run writes it
echo 'iteration' > busy.csv
flock busy.csv sleep 30 &
holder=$!
sleep 1
run 3 -o output.history=busy.csv job.yaml
run_out=$(cat out.txt err.txt)
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
expect_ok "a history another run holds is refused (exit $rc)" [ "$rc" != 0 ]
like "$run_out" "busy\.csv: another run is writing it" "and the message says why"
is "$(cat busy.csv)" "iteration" "the file is left as it was"

# --- --resume with a history shorter than the checkpoint records
run 3 -o output.history=h.csv -o output.checkpoint=ck.bin \
    -o stop.iterations=20 job.yaml
is "$rc" 0 "a run that leaves a checkpoint"
head -c 40 h.csv > short.csv && mv short.csv h.csv
run 3 --resume -o output.history=h.csv -o output.checkpoint=ck.bin job.yaml
run_out=$(cat out.txt err.txt)
expect_ok "--resume over a shortened history is refused" [ "$rc" != 0 ]
like "$run_out" "h\.csv: 40 bytes, fewer than the [0-9]+ the checkpoint records" \
    "with the sizes"
is "$(tr -d '\000' < h.csv | wc -c | tr -d ' ')" 40 "no NUL byte was written"

done_testing
