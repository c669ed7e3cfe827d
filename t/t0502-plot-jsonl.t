#!/bin/sh
# aiarun-plot reads the JSON Lines aiarun writes (output.format: jsonl),
# histories and answer logs alike, and puts the horizontal axes on a log
# scale with --logx.  Checked on the gnuplot script (--script): gnuplot
# is not needed.
. "$top_srcdir/t/lib.sh"
: "${AIARUN_PLOT:?run the tests through make check}"
scratch
cd "$trash" || exit 99

run 3 -o stop.iterations=30 -o output.every=1 -o output.format=jsonl \
    -o output.history=h.jsonl -o output.answers=a.jsonl \
    "$top_srcdir/etc/sgd-lrmse.yaml"
is "$rc" 0 "a run that writes JSON Lines"

# the points of datablock NAME in a script
points() { sed -n "/^\\\$$1 << EOD\$/,/^EOD\$/p" "$2" | sed '1d;$d'; }

"$AIARUN_PLOT" --script h.jsonl >s.gp 2>err.txt
is "$?" 0 "a JSON Lines history is plotted"
is "$(cat err.txt)" "" "without a word on stderr"
is "$(points r1y1 s.gp | wc -l | tr -d ' ')" 31 "every row's loss is a point"
is "$(points r1y1 s.gp | sed -n 2p | cut -d' ' -f2)" 1 \
    "with its iteration, read by name from the objects"

"$AIARUN_PLOT" --script -x iteration h.jsonl >x.gp 2>err.txt
expect_fail "no log x by default" grep -q '^set logscale x' x.gp
"$AIARUN_PLOT" --script --logx -x iteration h.jsonl >x.gp 2>err.txt
is "$?" 0 "--logx"
expect_ok "sets a log scale on x" grep -q '^set logscale x' x.gp
is "$(points r1y1 x.gp | wc -l | tr -d ' ')" 30 "and leaves out iteration 0"

"$AIARUN_PLOT" --script --answers a.jsonl >a.gp 2>err.txt
is "$?" 0 "a JSON Lines answer log is plotted"
is "$(points a a.gp | wc -l | tr -d ' ')" "$(wc -l <a.jsonl | tr -d ' ')" \
    "one point an answer"

printf '{"iteration":0,"loss":1}\nnot json\n' >bad.jsonl
"$AIARUN_PLOT" --script bad.jsonl >/dev/null 2>err.txt
is "$?" 2 "a broken JSON Lines file is refused"
like "$(cat err.txt)" "bad.jsonl: line 2: not a JSON object" "naming the file and line"
done_testing
