#!/bin/sh
# Hostile files (issue 25): an input overwritten through a hard link or
# through the checkpoint's temporary, a .npy shape whose byte count wraps
# around 2^64, a job file that is a FIFO, a truncated plugin and one
# whose constructor never returns, an HDF5 dataset never written in the
# memory estimate, what --check checks, a 0-byte history on --resume,
# an output over a python class's module,
# and the smaller messages (--simulate's bound, plugin paths, --help).
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
check() { out=$(timeout 30 "$AIARUN" --check "$@" 2>&1); rc=$?; }
printf 'a,b,y\n1,2,3\n4,5,6\n7,8,9\n3,2,1\n5,5,5\n' > mine.csv
cp mine.csv mine.orig

# --- an input through a hard link: the history replaced the data file
ln mine.csv hard.csv
check -o problem.data.path="$PWD/mine.csv" -o output.history=hard.csv job.yaml
is "$rc" 2 "--check: an output that is a hard link to the data file is refused"
like "$out" "output\.history: 'hard\.csv' is problem\.data\.path \(a hard link\), an input" \
    "naming the key and the input"
run 3 -o problem.data.path="$PWD/mine.csv" -o output.history=hard.csv job.yaml
is "$rc" 2 "under mpirun too, at start"
cmp -s mine.csv mine.orig; ok $? "and the data file is left whole"
sim --simulate 2 -o problem.data.path="$PWD/mine.csv" -o output.history=hard.csv job.yaml
is "$rc" 2 "--simulate too (it checked no output at all)"
cmp -s mine.csv mine.orig; ok $? "and the data file is left whole"
cp job.yaml job.orig
sim --simulate 2 -o output.history=job.yaml job.yaml
like "$err" "output\.history: 'job\.yaml' is the job file, an input" \
    "--simulate: a history over the job file is refused"
cmp -s job.yaml job.orig; ok $? "and the job file is left whole"
ln job.yaml hardjob.yaml
check -o output.final=hardjob.yaml job.yaml
like "$out" "output\.final: 'hardjob\.yaml' is the job file \(a hard link\)" \
    "a hard link to the job file is refused"
echo old > h1.csv
ln h1.csv h2.csv
check -o output.history=h1.csv -o output.answers=h2.csv job.yaml
like "$out" "output\.answers: 'h2\.csv' is also output\.history \(a hard link\)" \
    "two outputs on one file through a hard link are refused"
ln "$FIXTURES/goodalg.so" alg.so
check -o algorithm.plugin=./alg.so -o output.workers=alg.so job.yaml
like "$out" "output\.workers: 'alg\.so' is algorithm, an input" \
    "a plugin given by path is an input too"

# --- the checkpoint's temporary: a link there had the checkpoint written
# into the file it names
ln -s mine.csv ck.bin.tmp
run 3 -o output.checkpoint=ck.bin job.yaml
is "$rc" 0 "a run over a link named CHECKPOINT.tmp ends well"
cmp -s mine.csv mine.orig; ok $? "and the file the link named is left whole"
test_expect "the checkpoint is written, the link gone" \
    'test -s ck.bin && ! test -L ck.bin.tmp'
run 3 --resume -o output.checkpoint=ck.bin -o stop.iterations=40 job.yaml
is "$rc" 0 "and it resumes"
rm -f ck.bin ck.bin.tmp
mkdir ck.bin.tmp
check -o output.checkpoint=ck.bin job.yaml
is "$rc" 2 "--check: a folder named CHECKPOINT.tmp is refused at start"
like "$out" "output\.checkpoint: 'ck\.bin\.tmp' is a folder" "naming it"
run 3 -o output.checkpoint=ck.bin job.yaml
is "$rc" 2 "under mpirun too, before the run (not at its end)"
test_expect "and no run was made" '! test -e ck.bin'
rmdir ck.bin.tmp

# --- a .npy shape whose byte count wraps around 2^64: 8 bytes of data
# for (1, 2^61 + 1) values: rank 0 died of SIGSEGV with no message
{
    printf '\223NUMPY\001\000\166\000'
    printf "%-117s\n" "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2305843009213693953), }"
    printf '\0\0\0\0\0\0\0\0'
} > wrap.npy
run 3 -o problem.data.path=wrap.npy -o problem.data.target=0 job.yaml
is "$rc" 2 "a .npy shape that wraps around 2^64 is refused (exit $rc)"
like "$err" "wrap\.npy: byte 10: the shape \(1 x 2305843009213693953 of 8 bytes\) needs more bytes than a file can hold" \
    "naming the file and the shape"

# --- a job file that is a FIFO with no writer hung run and --check
mkfifo fifo.yaml
start=$(date +%s)
check fifo.yaml
is "$rc" 2 "--check: a job file that is a FIFO is refused"
like "$out" "fifo\.yaml: not a regular file \(a FIFO\)" "saying what it is"
run -t 30 3 fifo.yaml
is "$rc" 2 "under mpirun too"
sim --simulate 2 fifo.yaml
is "$rc" 2 "and --simulate"
took=$(( $(date +%s) - start ))
ok $([ "$took" -lt 30 ] && echo 0 || echo 1) "with no hang ($took s)"

# --- a truncated plugin (a copy that did not finish): SIGBUS in dlopen
head -c 1200 "$FIXTURES/goodalg.so" > cut.so
check -o algorithm.plugin=./cut.so job.yaml
is "$rc" 2 "--check: a truncated plugin is refused"
like "$out" "^aiarun: job\.yaml:2:[0-9]+: algorithm: \./cut\.so: a truncated shared object: its .* ends? at byte [0-9]+, the file has 1200 bytes" \
    "naming the file, shown plainly (not ././cut.so)"
run 3 -o algorithm.plugin=./cut.so job.yaml
is "$rc" 2 "under mpirun too"
like "$err" "cut\.so: a truncated shared object" "saying so"
mkdir plugs
cp cut.so plugs/
cp job.yaml plugs/
out=$(timeout 30 "$AIARUN" --list-plugins plugs/job.yaml 2>&1); rc=$?
is "$rc" 0 "--list-plugins with a truncated plugin in the job's folder ends"
like "$out" "broken +cut\.so " "listing it as broken"
like "$out" "error: .*cut\.so: a truncated shared object" "with its error"

# --- a constructor that never returns hung --list-plugins
mkdir hang
cp "$top_builddir/t/fixtures/hang/.libs/hangctor.so" hang/
cp job.yaml hang/
start=$(date +%s)
out=$(timeout 60 "$AIARUN" --list-plugins hang/job.yaml 2>&1); rc=$?
took=$(( $(date +%s) - start ))
is "$rc" 2 "--list-plugins over a constructor that never returns exits 2 ($took s)"
like "$out" "hang/hangctor\.so: loading it did not end within 10 s" \
    "naming the file"

# --- HDF5 in the memory estimate: 10^9 x 1000 never written, a few KB
if "$top_builddir/t/h5empty" big.h5 1000000000 1000 2>/dev/null; then
    start=$(date +%s)
    check -o problem.data.path=big.h5 -o limits.memory=1G job.yaml
    is "$rc" 2 "--check: an HDF5 dataset of 10^9 x 1000 is refused by the estimate"
    like "$out" "1000000000 rows x 1000 values of doubles, from the file's header" \
        "from its header's shape ($(wc -c < big.h5) bytes on disk)"
    run 3 -o problem.data.path=big.h5 -o limits.memory=1G job.yaml
    took=$(( $(date +%s) - start ))
    is "$rc" 2 "under mpirun too, at start ($took s)"
else
    skip_test "no HDF5 in this build"; skip_test "no HDF5"; skip_test "no HDF5"
fi
# sparse libsvm, estimated from its entries (it was not estimated at all)
awk 'BEGIN { for (i = 0; i < 20000; i++) { printf "1"; for (j = 1; j <= 50; j++) printf " %d:1", j; print "" } }' > s.svm
check -o problem.data.path=s.svm -o problem.data.storage=sparse -o limits.memory=1M job.yaml
is "$rc" 2 "a sparse libsvm file above limits.memory is refused"
like "$out" "about 20000 rows of 1000000 entries in all, read sparse.*limits\.memory allows" \
    "by its entries, naming the limit"
check -o problem.data.path=s.svm -o problem.data.storage=sparse -o limits.memory=1G job.yaml
is "$rc" 0 "and one within it is taken"

# --- --check runs the start's checks: the data file read through
check -o problem.data.path=nonexistent.csv job.yaml
is "$rc" 2 "--check: a data file that does not exist is refused"
like "$out" "problem\.data: .*nonexistent\.csv: cannot open" "naming the key and file"
printf 'a,b,y\n1,2,3\n4,x,6\n' > bad.csv
check -o problem.data.path=bad.csv job.yaml
like "$out" "problem\.data: .*bad\.csv:3:3: column 2 \('b'\): 'x' is not a number" \
    "a bad cell, with its line and column"
check -o problem.data.path=mine.csv -o problem.test.path=nonexistent.csv job.yaml
like "$out" "problem\.test: .*nonexistent\.csv: cannot open" "the test file too"
check -o problem.data.path=mine.csv job.yaml
is "$rc" 0 "a good data file passes"
check -o algorithm.plugin=sgd -o algorithm.step=0.1 -o pool.topology=tree -n 4 job.yaml
is "$rc" 2 "--check: a tree with sgd (not associative) is refused"

# --- --resume over a history of 0 bytes: it was taken, its rows lost
run 3 -o output.history=h.csv -o output.checkpoint=ck2.bin job.yaml
is "$rc" 0 "a run that leaves a checkpoint and a history"
: > h.csv
run 3 --resume -o output.history=h.csv -o output.checkpoint=ck2.bin \
    -o stop.iterations=40 job.yaml
expect_ok "--resume over a history of 0 bytes is refused (exit $rc)" [ "$rc" != 0 ]
like "$err" "h\.csv: 0 bytes, fewer than the [0-9]+ the checkpoint records" \
    "with the sizes"

# --- an output over a python class's module: the user's source was
# overwritten with the rows, exit 0
why=$(python_missing numpy)
if [ -n "$why" ]; then
    skip_test "outputs over a python module: $why"
else
    mkdir py && cp "$top_srcdir/etc/lsq.py" "$top_srcdir/etc/gd.py" \
        "$top_srcdir/etc/python-lsq.yaml" "$top_srcdir/etc/python-gd.yaml" py/
    mkdir py/data && cp "$top_srcdir/etc/data/lr.csv" py/data/
    cp py/lsq.py lsq.orig
    cp py/gd.py gd.orig
    ln -s lsq.py py/sym.csv
    ln py/gd.py py/hard.txt
    check -o output.history=py/sym.csv py/python-lsq.yaml
    is "$rc" 2 "--check: a history that is a link to the problem's module is refused"
    like "$out" "output\.history: 'py/sym\.csv' is problem\.class's module lsq, an input" \
        "naming the key and the module"
    run 3 -o output.history=py/sym.csv -o stop.iterations=5 py/python-lsq.yaml
    is "$rc" 2 "under mpirun too, at start"
    like "$err" "output\.history: 'py/sym\.csv' is problem\.class's module lsq" \
        "naming the key and the module"
    cmp -s py/lsq.py lsq.orig; ok $? "and the module is left whole"
    sim --simulate 2 -o output.final=py/hard.txt -o stop.iterations=5 py/python-gd.yaml
    is "$rc" 2 "--simulate: a final iterate that is a hard link to the algorithm's module is refused"
    like "$err" "output\.final: 'py/hard\.txt' is algorithm\.class's module gd \(a hard link\), an input" \
        "naming the key and the module"
    cmp -s py/gd.py gd.orig; ok $? "and the module is left whole"
    check -o output.iterates=py/gd.py py/python-gd.yaml
    like "$out" "output\.iterates: 'py/gd\.py' is algorithm\.class's module gd, an input" \
        "--check: iterates written over the module by its name are refused"
    mkdir pp && mv py/lsq.py pp/ && cp lsq.orig py/lsq.py
    AIARUN_PYTHONPATH="$PWD/pp:$AIARUN_PYTHONPATH" check \
        -o output.history="$PWD/pp/lsq.py" py/python-lsq.yaml
    like "$out" "output\.history: '.*pp/lsq\.py' is problem\.class's module lsq" \
        "a module on AIARUN_PYTHONPATH is an input too"
fi

# --- smaller messages
sim --simulate 100000000 job.yaml
is "$rc" 2 "--simulate 100000000 is refused"
like "$err" "expected a number of workers from 1 to 10000000" "saying the bound"
out=$("$AIARUN" --help)
like "$out" "Exit status: 0 done, 1 failed while running, 2 bad job" "--help lists the statuses"
like "$out" "3 done with the outputs complete but a worker left behind" "3 among them"

done_testing
