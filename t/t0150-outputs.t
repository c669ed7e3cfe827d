#!/bin/sh
# What a run leaves behind: the history's rows and columns (CSV and JSON
# Lines), the answer log against the per-worker table, saved iterates and
# the final one, the report, and progress lines.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
example="$top_srcdir/etc/sgd-lrmse.yaml"

# --- rows every 7 iterations, the first and the last always
run 5 -o stop.iterations=50 -o output.history=h.csv -o output.every=7 "$example"
is "$(cut -d, -f1 h.csv | tr '\n' ' ')" \
    "iteration 0 7 14 21 28 35 42 49 50 " "rows every 7 iterations, the first and the last"
is "$(head -1 h.csv)" "iteration,epoch,time,loss,suboptimality,change" "the columns"
is "$(sed -n 2p h.csv | cut -d, -f6)" "" "no change at iteration 0"
expect_ok "a positive change at every later row" \
    awk -F, 'NR > 2 && !($6 > 0) { bad = 1 } END { exit bad }' h.csv

# --- rows by epochs: with nwait 1, epochs pass slower than iterations
run 5 -o pool.wait.nwait=1 -o algorithm.step=0.02 -o stop.iterations=100000 \
    -o stop.epochs=45 -o output.history=e.csv -o output.every=100000 \
    -o output.every_epochs=10 "$example"
rows=$(sed 1d e.csv | wc -l)
expect_ok "rows by epochs ($rows rows for 45 epochs)" [ "$rows" -ge 6 ]
bad=$(awk -F, 'NR > 2 && NR < n && int($2 / 10) == int(p / 10) { print NR }
    NR > 1 { p = $2 }' n="$(wc -l < e.csv)" e.csv)
is "$bad" "" "each row between the first and the last starts a new tenth epoch"
# rows come at the end of a round, which may close more than one epoch
is "$(cut -d, -f2 e.csv | sed '1d;2d;$d' | awk '{ printf "%d ", $1 / 10 }')" "1 2 3 4 " \
    "in the 10th, 20th, 30th and 40th epochs (and the first and last rows)"

# --- JSON Lines; the answer log agrees with the per-worker table
run 5 -o pool.wait.nwait=2 -o stop.iterations=80 -o output.format=jsonl \
    -o output.history=h.jsonl -o output.answers=a.jsonl -o output.workers=w.csv "$example"
is "$(grep -cvE '^\{"iteration":[0-9]+,"epoch":[0-9]+,"time":[0-9.]+,"loss":[0-9.e+-]+,"suboptimality":([0-9.e+-]+|null),"change":([0-9.e+-]+|null)\}$' h.jsonl)" 0 \
    "every history line is a JSON object of the columns"
is "$(head -1 h.jsonl | sed 's/.*"change":\(null\)}$/\1/')" null "a missing value is null"
is "$(grep -cvE '^\{"time":[0-9.]+,"rank":[0-9]+,"sent_round":[0-9]+,"round":[0-9]+,"staleness":[0-9]+,"iteration":[0-9]+,"compute":[0-9.]+,"delay":[0-9.]+,"rtt":[0-9.]+\}$' a.jsonl)" 0 \
    "every answer line is a JSON object of its columns"
logged=$(sed 's/.*"rank":\([0-9]*\),.*"staleness":\([0-9]*\),.*/\1 \2/' a.jsonl |
    awk '{ n[$1]++; if ($2 > 0) s[$1]++ } END { for (r in n) print r, n[r], s[r] + 0 }' | sort -n | tr '\n' ' ')
# a worker starved of its core by a loaded machine may answer nothing in
# 80 rounds: the table has a row for it, the log no line
table=$(awk -F, 'NR > 1 && $3 > 0 { print $1, $3, $5 }' w.csv | sort -n | tr '\n' ' ')
same "$logged" "$table" "answers and stale answers per rank: the log matches the table"
same "$(awk -F, 'NR > 1 { s += $3 } END { print s }' w.csv)" "$(field answers "$out")" \
    "and the table matches the summary"

# --- iterates: the layout, one per history row, the last one the final
run 5 -o stop.iterations=30 -o output.history=i.csv -o output.every=10 \
    -o output.iterates=x.bin -o output.final=x.txt "$top_srcdir/etc/gd-lrmse.yaml"
dim=20
is "$(head -c 8 x.bin)" "AIAITER1" "the iterate file starts with its magic"
is "$(od -A n -t u4 -j 8 -N 8 x.bin | tr -s ' ' | sed 's/^ //')" "1 0" "layout version 1"
is "$(od -A n -t u8 -j 16 -N 8 x.bin | tr -d ' ')" "$dim" "the dimension"
size=$(wc -c < x.bin)
is "$size" "$((24 + 4 * (24 + 8 * dim)))" "four records: iterations 0, 10, 20, 30"
rec() { # rec N FIELD-OFFSET TYPE: a value of record N
    od -A n -t "$3" -j $((24 + $1 * (24 + 8 * dim) + $2)) -N 8 x.bin | tr -d ' '
}
is "$(rec 0 0 d8) $(rec 1 0 d8) $(rec 2 0 d8) $(rec 3 0 d8)" "0 10 20 30" \
    "their iteration numbers"
is "$(wc -l < x.txt)" "$dim" "the final iterate: one value a line"
last=$(od -A n -t f8 -j $((24 + 3 * (24 + 8 * dim) + 24)) -N $((8 * dim)) -v x.bin |
    tr -s ' ' '\n' | sed '/^$/d' | awk '{ printf "%.12g\n", $1 }')
final=$(awk '{ printf "%.12g\n", $1 }' x.txt)
is "$last" "$final" "the last saved iterate is the final one"

# --- the report says why each run stopped
for stop in "iterations -o stop.iterations=20" "epochs -o stop.epochs=20" \
    "time -o stop.time=0.3" "precision -o stop.precision=1e-3" \
    "loss -o stop.loss=0.006" "gap -o stop.gap=0.01"; do
    kind=${stop%% *}
    run 3 -o stop.iterations=100000 -o stop.time=60 -o output.history= \
        -o algorithm.step=0.05 ${stop#* } "$example"
    is "$(field stop "$out")" "$kind" "stop=$kind in the summary"
    like "$out" "
  stopped +$kind after " "and in the report"
done

# --- progress lines on stderr, for runs over a second
slow="-o stragglers.work_ms=5 -o stop.iterations=0 -o stop.time=2.5 -o output.history="
run 3 $slow "$example"
n=$(printf '%s\n' "$err" | grep -c '^aiarun\[0\]: progress: iteration [0-9]*, [0-9]*%, [0-9]* s left, epoch [0-9]*, [0-9.]* s, loss [0-9.e+-]*, [0-9]* answers/s$')
expect_ok "a 2.5 s run prints progress lines, with the share of stop.time done and the time left ($n)" [ "$n" -ge 2 ]
pct=$(printf '%s\n' "$err" | sed -n 's/.*progress: iteration [0-9]*, \([0-9]*\)%.*/\1/p' | tr '\n' ' ')
test_expect "the share done grows ($pct)" \
    'printf "%s\n" $pct | sort -n -c && [ "$(echo $pct | wc -w)" -ge 2 ]'
# an iteration limit: "of N"; the workers' loss (a data file): its age
run 3 -o stragglers.work_ms=5 -o stop.iterations=300 -o stop.time=60 \
    -o output.history=h.csv -o output.every=100 \
    -o problem.data.path="$top_srcdir/etc/data/lr.csv" "$example"
expect_grep "an iteration limit: iteration N of 300, the share and the time left" \
    '^aiarun\[0\]: progress: iteration [0-9]+ of 300, [0-9]+%, [0-9]+ s left, epoch' err.txt
expect_grep "the workers' loss says which iteration's it is" \
    'progress: .*, loss ([0-9.e+-]+ at iteration (0|100|200)|nan \(none yet\)), ' err.txt
run 3 -q $slow "$example"
is "$err" "" "-q: none"
run 3 -o stop.iterations=20 -o output.history= "$example"
is "$(noprogress "$err")" "$err" "a short run: none"
run 3 --progress tty $slow "$example"
test_expect "--progress tty: one line rewritten in place" \
    'printf "%s" "$err" | grep -q "$(printf "\\r")aiarun\\[0\\]: progress: iteration"'
is "$(printf '%s\n' "$err" | grep -c '^aiarun\[0\]: progress: ')" 0 "and no plain lines"
run 3 --progress off $slow "$example"
is "$err" "" "--progress off: none"
err=$("$AIARUN" --progress sometimes --check "$example" 2>&1); rc=$?
like "$err" "--progress sometimes: expected auto, lines, tty or off" "a bad mode is refused"
done_testing
