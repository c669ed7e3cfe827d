#!/bin/sh
# Data files under mpirun: every format, read or scattered, in blocks or
# dealt cyclically, reaches the closed-form least-squares solution; read
# and scatter give each rank the same rows; bad files end every rank with
# one message naming the place, and no hang.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
data="$top_srcdir/etc/data"

# job FILE EXTRA-DATA-KEYS : a gd job on a data file
job() {
    cat > job.yaml <<YAML
algorithm: {plugin: gd, step: 0.5}
problem:
  plugin: lrmse
  data: {path: $1 $2}
stop: {iterations: 300}
YAML
}

# checksums: "rank rows checksum" per rank, sorted, from a -v run
sums() {
    sed -n 's/^aiarun\[\([0-9]*\)\]: holds \([0-9]*\) of .*(checksum \([0-9a-f]*\))$/\1 \2 \3/p' err.txt |
        sort -n | tr '\n' ' '
}

for f in "lr.csv" "lr.svm" "lr.bin, cols: 9"; do
    name=${f%%,*}
    for delivery in read scatter; do
        for part in block cyclic; do
            job "$data/$f" ", delivery: $delivery"
            run 5 -v -o problem.partition=$part job.yaml
            gap=$(field gap "$out")
            test_expect "$name, $delivery, $part: gd reaches the optimum (gap ${gap:-none})" \
                '[ "$rc" = 0 ] && float_le "${gap:-1}" 1e-9'
            [ "$rc" = 0 ] || diag "$err"
            eval "sum_${delivery}_$part=\"\$(sums)\""
        done
    done
    expect_ok "$name: every rank logs its rows" [ -n "$sum_read_block" ]
    same "$sum_scatter_block" "$sum_read_block" "$name: scatter delivers exactly the rows read (block)"
    same "$sum_scatter_cyclic" "$sum_read_cyclic" "$name: scatter delivers exactly the rows read (cyclic)"
    like "$sum_read_block" "^0 0 [0-9a-f]+ 1 500 [0-9a-f]+ 2 500 " \
        "$name: the coordinator holds no row, a worker only its own"
    like "$sum_scatter_block" "^0 0 [0-9a-f]+ 1 500 " \
        "$name: nor does it keep one after scattering them"
    eval "block_$(echo "$name" | tr -d .)=\"\$sum_read_block\""
done
same "$block_lrbin" "$block_lrcsv" "the binary and CSV files give every rank the same rows"
expect_ok "libsvm rows are kept sparse by default (another layout)" \
    [ "$block_lrsvm" != "$block_lrcsv" ]
job "$data/lr.svm" ", storage: dense"
run 5 -v job.yaml
same "$(sums)" "$block_lrcsv" "libsvm read dense gives the CSV's rows"

# uneven partitions: the rows follow the weights, gd still solves exactly
job "$data/lr.csv" ", delivery: scatter"
run 5 -v -o 'problem.weights=[4, 2, 1, 1]' job.yaml
like "$(sums)" "^0 0 [0-9a-f]+ 1 1000 [0-9a-f]+ 2 500 [0-9a-f]+ 3 250 [0-9a-f]+ 4 250 " \
    "weights 4:2:1:1 give 1000, 500, 250 and 250 rows"
gap=$(field gap "$out")
expect_ok "and gd reaches the optimum (gap $gap)" float_le "${gap:-1}" 1e-9

for alg in "sgd, step: 0.05" "average, step: 0.5"; do
    cat > alg.yaml <<YAML
algorithm: {plugin: $alg}
problem:
  plugin: lrmse
  partition: cyclic
  data: {path: $data/lr.csv}
stop: {iterations: 400}
YAML
    run 5 alg.yaml
    gap=$(field gap "$out")
    test_expect "${alg%%,*} on lr.csv reaches the optimum (gap ${gap:-none})" \
        '[ "$rc" = 0 ] && float_le "${gap:-1}" 1e-3'
done

cat > logreg.yaml <<YAML
algorithm: {plugin: sgd, step: 1.0}
problem:
  plugin: logreg
  l2: 0.001
  data: {path: $data/logreg.csv, target: label, delivery: scatter}
stop: {iterations: 1500}
YAML
run 5 -v logreg.yaml
acc=$(field accuracy "$out")
test_expect "logreg on logreg.csv: the workers' accuracy ${acc:-none}" \
    '[ "$rc" = 0 ] && float_le 0.99 "${acc:-0}"'
like "$err" "no optimum to compare with: the rows are the workers' and problem 'logreg' gives no summary" \
    "logreg's optimum needs every row: the run says why it has none"

# --- bad files: one message with the place, the same status everywhere
bad() { # bad NAME CONTENT-PRINTF EXTRA-KEYS EXPECTED-REGEX
    printf "$2" > "$1"
    for delivery in read scatter; do
        job "$1" ", delivery: $delivery $3"
        run -e 5 job.yaml
        is "$rank_status" "2 2 2 2 2" "$1 ($delivery): every rank exits 2"
        like "$err" "$4" "$1 ($delivery): names the place"
        is "$(printf '%s\n' "$err" | grep -c '^aiarun\[')" 1 "$1 ($delivery): once"
    done
}
bad ragged.csv 'a,b,y\n1,2,3\n4,5\n' "" "ragged.csv:3: 2 cells, but the header has 3"
bad word.csv 'a,b,y\n1,2,3\n4,oops,6\n' "" "word.csv:3:3: column 2 \\('b'\\): 'oops' is not a number"
bad nan.csv 'a,b,y\n1,nan,3\n' "" "nan.csv:2:3: column 2 \\('b'\\): NaN is not allowed"
bad short.bin '\000\000\000\000\000\000\000\000\000\000\000\000' ", cols: 2" "short.bin: 12 bytes is not a whole number of rows of 2 float64 values"
bad index.svm '1 3:1 2:1\n' "" "index.svm:1:7: index 2 after 3"
job "$trash/absent.csv" ""
run 5 job.yaml
expect_ok "a missing data file: exit 2" [ "$rc" = 2 ]
like "$err" "job.yaml:4:3: problem.data: .*absent.csv" "and it is named"
cat > gen.yaml <<YAML
algorithm: {plugin: gd}
problem:
  plugin: nosuchformat
stop: {iterations: 1}
YAML
cat > fmt.yaml <<YAML
algorithm: {plugin: gd}
problem:
  plugin: lrmse
  data: {path: rows.dat}
stop: {iterations: 1}
YAML
out=$("$AIARUN" --check fmt.yaml 2>&1)
like "$out" "fmt.yaml:4:3: problem.data: cannot tell the format of 'rows.dat'" \
    "an unknown extension asks for the format"

# the report names the file's features and the model's length apart:
# pca's model is features x k (it said "24 columns" of an 8-column file)
cat > pca.yaml <<YAML
algorithm: {plugin: gd, step: 0.1}
problem:
  plugin: pca
  k: 3
  data: {path: $data/lr.csv}
stop: {iterations: 2}
YAML
run 3 pca.yaml
like "$out" "
  data +2000 rows of 8 features, a model of 24 values, block partition, from .*lr\.csv" \
    "pca, k 3: 8 features, a model of 24 values"

# precision: float32 keeps the rows as floats: a value beyond a float's
# range became an infinity there, and the run "diverged" (exit 1)
printf 'a,b,y\n1,2,3\n4,1e39,6\n2,1,0\n' > big.csv
cat > f32.yaml <<YAML
algorithm: {plugin: gd, step: 0.1}
problem:
  plugin: lrmse
  precision: float32
  data: {path: big.csv}
stop: {iterations: 5}
YAML
run 3 f32.yaml
is "$rc" 2 "precision: float32, a CSV value of 1e39: refused at start (exit 2)"
like "$err" "f32.yaml:5:3: problem.data: .*big.csv:3:3: column 2 \\('b'\\): '1e39' is beyond float32's range" \
    "naming the job's key, the file, line, column and float32"
out=$("$AIARUN" --check f32.yaml 2>&1); rc=$?
is "$rc" 2 "--check refuses it too"
like "$out" "big.csv:3:3: column 2 \\('b'\\): '1e39' is beyond float32's range" \
    "naming the same place"
sim 2 f32.yaml
is "$rc" 2 "--simulate refuses it too"
printf 'a,b,y\n1,2,3\n4,1,6\n2,1,0\n' > small.csv
sed 's/path: big.csv/path: small.csv}\n  test: {path: big.csv/' f32.yaml > test32.yaml
out=$("$AIARUN" --check test32.yaml 2>&1); rc=$?
like "$out" "test32.yaml:6:3: problem.test: .*big.csv:3:3: column 2 \\('b'\\): '1e39' is beyond float32's range" \
    "and in problem.test, whose rows are kept as floats as well"
sed 's/float32/float64/' f32.yaml > f64.yaml
out=$("$AIARUN" --check f64.yaml 2>&1)
like "$out" "f64.yaml: ok" "precision: float64 takes the same file"
done_testing
