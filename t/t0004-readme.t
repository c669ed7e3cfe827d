#!/bin/sh
# The generated tables of man/aiarun.5 (the job file's keys and the
# plugin listing) are what aiarun prints, and README.md names only files
# that exist and stays a short front page.
. "$top_srcdir/t/lib.sh"
scratch
page=$top_srcdir/man/aiarun.5
"$AIARUN" --job-reference=man >"$trash/reference.roff"
ok $? "aiarun --job-reference=man prints the reference"
like "$(cat "$trash/reference.roff")" '^\.SS "pool\.wait"$' \
    "with a subsection per job section"
"$AIARUN" --job-reference=yaml >/dev/null 2>"$trash/err.txt"
is $? 2 "an unknown --job-reference format is a usage error"
like "$(cat "$trash/err.txt")" "unknown format 'yaml'" "and says so"

sh "$top_srcdir/tools/man5" "$AIARUN" "$page" >"$trash/generated.5"
ok $? "tools/man5 regenerates man/aiarun.5"
# A build without Python lists no python problem or algorithm.
if [ "$AIA_HAVE_PYTHON" = yes ]; then
    cp "$page" "$trash/page.5"
else
    sed -e '/^problem        python /,+2d' -e '/^algorithm      python /,+2d' \
        "$page" >"$trash/page.5"
fi
for part in job-reference list-plugins; do
    n=$(sed -n "/^\.\\\\\" $part\$/,/^\.\\\\\" \/$part\$/p" "$trash/page.5" |
        wc -l)
    expect_ok "man/aiarun.5 holds the $part part ($n lines)" [ "$n" -gt 20 ]
done
diff -u "$trash/page.5" "$trash/generated.5" >"$trash/diff.txt"
ok $? "man/aiarun.5 is what aiarun prints (make man5 rewrites it)"
[ -s "$trash/diff.txt" ] && diag "$(head -40 "$trash/diff.txt")"

readme=$top_srcdir/README.md
n=$(wc -l <"$readme")
expect_ok "README.md is a front page ($n lines)" [ "$n" -le 300 ]
missing=
named=$(grep -oE '(etc|man|t|bench|examples|tools|python|doc)/[-A-Za-z0-9_./]*[A-Za-z0-9]' \
    "$readme" | sort -u)
for f in $named; do
    [ -e "$top_srcdir/$f" ] || missing="$missing $f"
done
# README.md names its examples and tests; a pattern that found none
# would pass the loop unasked
expect_ok "README.md names files of the tree ($(echo $named | wc -w))" \
    [ "$(echo $named | wc -w)" -ge 10 ]
is "$missing" "" "every file README.md names exists"
for s in "WAITING FOR STRAGGLERS" COMPRESSION DATA STOPPING OUTPUTS \
    "WHEN WORKERS FAIL" SIMULATION "RUNTIME KEYS" "PLUGIN PARAMETERS"; do
    grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}\$" "$page"
    ok $? "aiarun(5) has the section $s"
done
done_testing
