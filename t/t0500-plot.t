#!/bin/sh
# aiarun-plot on the outputs of two short runs of the example job (every
# worker, and the two fastest): PNG and SVG pictures when gnuplot is
# installed, the gnuplot script without it, the "install gnuplot" message
# when gnuplot is hidden, and one clear error naming the file for each
# bad input.
. "$top_srcdir/t/lib.sh"
: "${AIARUN_PLOT:?run the tests through make check}"
scratch
cd "$trash" || exit 99
example="$top_srcdir/etc/sgd-lrmse.yaml"

# plot ARGS... : aiarun-plot, with stdout in $out, stderr in $err, status
# in $rc
plot() {
    "$AIARUN_PLOT" "$@" >out.txt 2>err.txt
    rc=$?
    out=$(cat out.txt)
    err=$(cat err.txt)
}

skip() {
    test_count=$((test_count + 1))
    echo "ok $test_count # SKIP $*"
}

# png_ok FILE: a PNG signature and more than a few bytes
png_ok() {
    [ "$(od -An -tx1 -N8 "$1" 2>/dev/null | tr -d ' \n')" = 89504e470d0a1a0a ] &&
        [ "$(wc -c <"$1")" -gt 5000 ]
}

# png_size FILE: WIDTHxHEIGHT from the PNG header
png_size() {
    od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d\n",
        (($1 * 256 + $2) * 256 + $3) * 256 + $4,
        (($5 * 256 + $6) * 256 + $7) * 256 + $8 }'
}

# svg_ok FILE: an XML document with one <svg> element
svg_ok() {
    head -1 "$1" | grep -Eq '^(<\?xml|<svg)' && grep -q '<svg' "$1" &&
        grep -q '</svg>' "$1"
}

# ---------------------------------------------------------------- runs
run 5 -q -o stop.iterations=100 -o output.every=5 \
    -o output.history=all.csv -o output.workers=all-workers.csv "$example"
is "$rc" 0 "a run that waits for every worker"
run 5 -q -o stop.iterations=100 -o output.every=5 \
    -o pool.wait.nwait=2 -o output.history=two.csv \
    -o output.workers=two-workers.csv -o output.answers=two-answers.csv \
    "$example"
is "$rc" 0 "a run that waits for the two fastest of four"
test_expect "they wrote their CSV files" \
    '[ -s all.csv ] && [ -s two.csv ] && [ -s two-workers.csv ] &&
    [ -s two-answers.csv ]'

# ---------------------------------------------------------------- usage
plot --help
is "$rc" 0 "--help exits 0"
like "$out" "^Usage: aiarun-plot " "--help prints the usage"
like "$out" "gnuplot" "and says gnuplot draws"
plot --version
like "$out" "^aiarun-plot [0-9]+\.[0-9]+\.[0-9]+$" "--version prints the version"
plot --no-such-option all.csv
expect_ok "an unknown option exits 2" [ "$rc" = 2 ]
like "$err" "unknown option '--no-such-option'" "and names it"
plot
is "$rc" 2 "no history exits 2"
like "$err" "no history to plot" "and says so"
plot -o plot.gif all.csv
is "$rc" 2 "an unknown picture format exits 2"
like "$err" "plot.gif: unknown format.*png.*svg" "and names the formats"
plot --size 10x10 all.csv
is "$rc" 2 "a tiny --size exits 2"
plot --workers two-workers.csv all.csv
is "$rc" 2 "--workers with histories exits 2"

# ---------------------------------------------------------------- bad input
plot -o x.png all.csv missing.csv
is "$rc" 2 "a missing file exits 2"
is "$err" "aiarun-plot: missing.csv: no such file" "with one line naming it"
expect_ok "and writes no picture" [ ! -e x.png ]

plot -o x.png all-workers.csv
is "$rc" 2 "a per-worker table given as a history exits 2"
like "$err" "^aiarun-plot: all-workers.csv: no column 'time' \(its columns: rank, queries," \
    "naming the file, the column and the columns it has"
like "$err" "plot it with --workers" "and saying how to plot it"

# the picture over its input: the history was replaced, exit 0
cp all.csv h.svg
plot -o h.svg h.svg
is "$rc" 2 "a plot over its own history exits 2"
is "$err" "aiarun-plot: h.svg: the plot would overwrite its input h.svg: name another -o" \
    "naming the file"
cmp -s all.csv h.svg; ok $? "and the history is left whole"
cp all.csv h.svg
ln -s h.svg link.svg
plot -o link.svg all.csv h.svg
is "$rc" 2 "a plot over a link to a history exits 2"
like "$err" "link.svg: the plot would overwrite its input h.svg" "naming both"
cmp -s all.csv h.svg; ok $? "and the history is left whole"
cp two-workers.csv w.png
ln w.png hard.png
plot -o hard.png --workers w.png
is "$rc" 2 "a plot over a hard link to its per-worker table exits 2"
cmp -s two-workers.csv w.png; ok $? "and the table is left whole"

head -1 all.csv >empty.csv
plot -o x.png all.csv empty.csv
is "$rc" 2 "an empty history exits 2"
is "$err" "aiarun-plot: empty.csv: no rows: the history is empty" "naming the file"
: >zero.csv
plot -o x.png zero.csv
is "$rc" 2 "an empty file exits 2"
like "$err" "^aiarun-plot: zero.csv: empty file" "naming the file"
mkdir folder.csv
plot -o x.png folder.csv
like "$err" "folder.csv: not a regular file" "a folder is refused"

plot -o x.png --y accuracy all.csv
is "$rc" 2 "a column no history has exits 2"
like "$err" "^aiarun-plot: all.csv: no column 'accuracy' \(its columns: iteration, epoch, time, loss, suboptimality, change\)$" \
    "naming the file and its columns"

plot -o x.png --workers all.csv
is "$rc" 2 "a history given as a per-worker table exits 2"
like "$err" "all.csv: no column 'rank'.*plot it without --workers" "with a hint"
plot -o x.png --answers two-workers.csv
like "$err" "two-workers.csv: no column 'time'.*plot it with --workers" \
    "a per-worker table given as an answer log"

# A history whose optimum is unknown: an empty suboptimality column.
awk -F, -v OFS=, 'NR > 1 { $5 = "" } { print }' all.csv >noopt.csv
plot --script -o x.png noopt.csv
is "$rc" 0 "a history without an optimum plots"
like "$out" "set multiplot layout 1,2" "as one row of panels: the loss, no suboptimality"
is "$err" "" "without a word"
plot --script -o x.png -y suboptimality noopt.csv
is "$rc" 2 "asking for its suboptimality exits 2"
like "$err" "no file has positive numbers .* in column 'suboptimality'; it is empty when the optimum is unknown" \
    "and says why"
plot --script -o x.png all.csv noopt.csv
test_expect "overlaid with one that has it: two rows of panels" \
    '[ "$rc" = 0 ] && echo "$out" | grep -q "set multiplot layout 2,2"'
like "$err" "warning: noopt.csv: no values to plot in column 'suboptimality'" \
    "and a warning that names the file left out"

# ---------------------------------------------------------------- the script
plot --script -o cmp.svg --label nwait=all=all.csv --label nwait=2=two.csv \
    --title 'two runs'
is "$rc" 0 "--script exits 0 without running gnuplot"
like "$out" "set terminal svg" "an SVG terminal for .svg"
like "$out" "title 'nwait=all' noenhanced" "the first label (NAME may hold '=')"
like "$out" "title 'nwait=2' noenhanced" "the second label"
like "$out" "set multiplot layout 2,2 title 'two runs'" \
    "loss and suboptimality against time and iterations, with the title"
is "$(echo "$out" | sed -n '/^\$r1y1 << EOD$/,/^EOD$/p' | sed '1d;$d' | wc -l)" \
    "$(sed 1d all.csv | wc -l)" "every row of the history is in the script"

# Columns are found by name: shuffled, with one more, the data are the same.
awk -F, -v OFS=, '{ m = NR == 1 ? "accuracy" : 0.5; print $4, m, $5, $3, $2, $1 }' \
    all.csv >shuffled.csv
plot --script -o x.png all.csv
a=$(echo "$out" | sed -n '/<< EOD/,/^EOD/p')
plot --script -o x.png shuffled.csv
b=$(echo "$out" | sed -n '/<< EOD/,/^EOD/p' | sed 's/^\$shuffled/$all/')
test_expect "a history with its columns in another order gives the same data" \
    '[ -n "$a" ] && [ "$a" = "$b" ]'
plot --script -o x.png --y accuracy --x epoch shuffled.csv
test_expect "any column can be plotted" \
    '[ "$rc" = 0 ] && echo "$out" | grep -q "set ylabel '\''accuracy'\''"'

# ---------------------------------------------------------------- no gnuplot
# A PATH with every command but gnuplot.
mkdir nognuplot
for d in $(echo "$PATH" | tr ':' ' '); do
    [ -d "$d" ] && ln -s "$d"/* nognuplot/ 2>/dev/null
done
rm -f nognuplot/gnuplot
err=$(PATH="$trash/nognuplot" "$AIARUN_PLOT" -o hidden.png all.csv 2>&1 >/dev/null)
rc=$?
is "$rc" 1 "without gnuplot it exits 1"
like "$err" "gnuplot not found" "saying gnuplot is not found"
like "$err" "apt-get install gnuplot-nox" "and how to install it"
expect_ok "and writes no picture" [ ! -e hidden.png ]
err=$(GNUPLOT="$trash/no/gnuplot" "$AIARUN_PLOT" -o hidden.png all.csv 2>&1)
is "$?" 1 "GNUPLOT naming a missing program exits 1 too"

# A gnuplot that fails, and one too old.
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "gnuplot 5.4 patchlevel 4"; exit 0; }\necho "line 1: all points undefined" >&2\nexit 1\n' >badgnuplot
printf '#!/bin/sh\necho "gnuplot 4.6 patchlevel 6"\n' >oldgnuplot
chmod +x badgnuplot oldgnuplot
err=$(GNUPLOT="$trash/badgnuplot" "$AIARUN_PLOT" -o bad.png all.csv 2>&1)
rc=$?
is "$rc" 1 "a gnuplot that fails exits 1"
like "$err" "gnuplot: line 1: all points undefined" "passing on what gnuplot said"
expect_ok "and writes no picture" [ ! -e bad.png ]
err=$(GNUPLOT="$trash/oldgnuplot" "$AIARUN_PLOT" -o bad.png all.csv 2>&1)
rc=$?
test_expect "gnuplot 4 is refused: 5.0 or later is needed" \
    '[ "$rc" = 1 ] && echo "$err" | grep -q "gnuplot 5.0 or later"'

# ---------------------------------------------------------------- pictures
if command -v gnuplot >/dev/null 2>&1; then
    plot -o cmp.png --label nwait=all=all.csv --label nwait=2=two.csv
    is "$rc" 0 "two histories overlaid as PNG"
    is "$err" "" "nothing on stderr"
    png_ok cmp.png
    ok $? "a PNG file ($(wc -c <cmp.png) bytes)"
    is "$(png_size cmp.png)" 1120x760 "of 2 by 2 panels of 560x380"

    plot -o cmp.svg --title 'sgd on lrmse' --label nwait=all=all.csv \
        --label nwait=2=two.csv
    is "$rc" 0 "two histories overlaid as SVG"
    svg_ok cmp.svg
    ok $? "an SVG file"
    test_expect "with both legend labels" \
        'grep -q ">nwait=all<" cmp.svg && grep -q ">nwait=2<" cmp.svg'
    expect_ok "and the title" grep -q '>sgd on lrmse<' cmp.svg

    plot all.csv two.csv
    test_expect "without -o: the first history's name with .png" \
        '[ "$rc" = 0 ] && png_ok all.png'
    plot -o names.svg all.csv two.csv
    test_expect "labels default to the file names" \
        'grep -q ">all<" names.svg && grep -q ">two<" names.svg'

    plot -o one.png --x iteration --y loss --size 640x400 two.csv
    test_expect "one panel" '[ "$rc" = 0 ] && png_ok one.png'
    is "$(png_size one.png)" 640x400 "of the --size asked for"

    plot -o workers.png --workers two-workers.csv
    test_expect "a per-worker table as PNG" \
        '[ "$rc" = 0 ] && png_ok workers.png'
    plot -o workers.svg --workers two-workers.csv
    test_expect "and as SVG: round trip p50 and p99, fresh and stale answers" \
        '[ "$rc" = 0 ] && svg_ok workers.svg && grep -q ">p99<" workers.svg &&
        grep -q ">stale<" workers.svg'
    plot -o answers.svg --answers two-answers.csv
    test_expect "an answer log as SVG" '[ "$rc" = 0 ] && svg_ok answers.svg'
    # nwait 2 of 4: on a loaded machine a worker may get no turn in 100
    # rounds, and then has no answer to draw
    missing=
    ranks=$(awk -F, 'NR > 1 { print $2 }' two-answers.csv | sort -u)
    # each round took 2 answers: at least 2 ranks answered, else the
    # loop below would ask nothing
    expect_ok "the answer log holds at least 2 ranks ($(echo $ranks))" \
        [ "$(echo $ranks | wc -w)" -ge 2 ]
    for r in $ranks; do
        grep -q ">rank $r<" answers.svg || missing="$missing $r"
    done
    is "$missing" "" "with one legend entry per worker that answered ($(echo $ranks))"

    # The picture is replaced only once gnuplot succeeded.
    cp cmp.png keep.png
    GNUPLOT="$trash/badgnuplot" "$AIARUN_PLOT" -o keep.png all.csv 2>/dev/null
    expect_ok "a failed plot leaves an older picture alone" \
        cmp -s cmp.png keep.png
else
    skip "gnuplot is not installed (apt-get install gnuplot-nox)"
fi
done_testing
