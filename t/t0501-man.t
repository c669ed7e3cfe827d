#!/bin/sh
# The man pages: every option that aiarun --help and aiarun-plot --help
# print is in its page, the version is the programs', and groff renders
# every page without a warning and without a font escape left as text
# (when groff is installed).
. "$top_srcdir/t/lib.sh"
: "${AIARUN_PLOT:?run the tests through make check}"
scratch

# text PAGE: the page's source with troff's escapes for '-' and fonts
# undone, as plain text to search
text() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(aq/'"'"'/g' "$1"; }

# options HELP: the long and short options a --help text lists
options() {
    printf '%s\n' "$1" | grep -E '^ +-' |
        grep -oE '(^|[ ,])--?[A-Za-z][-A-Za-z]*' | sed 's/^[ ,]*//' | sort -u
}

for prog in aiarun aiarun-plot aiarun-evaluate; do
    page="$top_srcdir/man/$prog.1"
    case $prog in
    aiarun) bin=$AIARUN ;;
    aiarun-plot) bin=$AIARUN_PLOT ;;
    *) bin=${AIARUN_EVALUATE:?run the tests through make check} ;;
    esac
    expect_ok "man/$prog.1 exists" [ -s "$page" ]
    text "$page" >"$trash/page.txt"
    help=$("$bin" --help)
    opts=$(options "$help")
    n=$(printf '%s\n' "$opts" | grep -c -- '^--')
    expect_ok "$prog --help lists $n long options" [ "$n" -ge 5 ]
    missing=
    for o in $opts; do
        grep -qE -- "(^|[^-A-Za-z])$o([^-A-Za-z]|\$)" "$trash/page.txt" ||
            missing="$missing $o"
    done
    is "$missing" "" "every option of $prog --help is in man/$prog.1"
    version=$("$bin" --version | awk '{ print $2; exit }')
    like "$(grep '^\.TH' "$page")" "\"aiarun $version\"" \
        "man/$prog.1 is for version $version"
    like "$(cat "$page")" "^\.SH EXIT STATUS" "man/$prog.1 gives the exit status"
done
for v in AIARUN_PLUGIN_PATH AIARUN_PLUGINDIR; do
    grep -q "$v" "$top_srcdir/man/aiarun.1"
    ok $? "man/aiarun.1 explains $v"
done

# aiarun(1) points to the other pages; aiarun(5) is for this version.
text "$top_srcdir/man/aiarun.1" >"$trash/aiarun1.txt"
for ref in 'aiarun (5)' 'aiarun-plugin (7)' 'aiarun-plot (1)'; do
    grep -qF ".BR $ref" "$trash/aiarun1.txt"
    ok $? "man/aiarun.1 refers to $ref"
done
like "$(grep '^\.TH' "$top_srcdir/man/aiarun.5")" "\"aiarun $(
    "$AIARUN" --version | awk '{ print $2; exit }')\"" \
    "man/aiarun.5 is for this version"

# The tutorial: for this version, walking through every example that
# examples/ holds, naming only structs the header defines.
tut=$top_srcdir/man/aiarun-plugin.7
text "$tut" >"$trash/tutorial.txt"
version=$("$AIARUN" --version | awk '{ print $2; exit }')
like "$(grep '^\.TH' "$tut")" "\"aiarun $version\"" \
    "man/aiarun-plugin.7 is for version $version"
n=0
for d in "$top_srcdir"/examples/*/; do
    e=$(basename "$d")
    n=$((n + 1))
    grep -q "^\.B $e\$" "$tut"
    ok $? "man/aiarun-plugin.7 presents examples/$e"
done
expect_ok "examples/ holds $n plugins" [ "$n" -ge 3 ]
unknown=
for s in $(grep -o 'struct aia_[a-z_]*' "$trash/tutorial.txt" | sort -u |
    sed 's/struct //'); do
    cat "$top_srcdir"/runtime/include/aiarun/*.h | grep -q "^struct $s {" ||
        unknown="$unknown $s"
done
is "$unknown" "" "every struct the tutorial names is in an installed header"

# Every page: no control character in its source (a "\fB" written
# through a string that turned "\f" into a form feed), and, rendered, no
# font escape left as text: "fBword", or "Bword" and "Iword" ending in an
# "R" that was "\fR" (BmadviseR(2)), which groff passes without a warning.
pages=$(ls "$top_srcdir"/man/*.[157])
expect_ok "man/ holds at least 5 pages" [ "$(printf '%s\n' "$pages" | wc -l)" -ge 5 ]
for page in $pages; do
    name=man/${page##*/}
    bad=$(grep -n "$(printf '[\001-\010\013-\037\177]')" "$page" | cut -d: -f1 |
        tr '\n' ' ')
    is "$bad" "" "$name has no control character in its source"
    if command -v groff >/dev/null 2>&1; then
        stray=$(groff -man -Tascii -P-cbou "$page" 2>/dev/null | grep -E \
            '(^|[^A-Za-z])f[BIRP][a-z]|\\f|(^|[^A-Za-z0-9_])[BI][a-z/._][^ ]*[a-z0-9_]R([^A-Za-z0-9]|$)')
        is "$stray" "" "$name renders no font escape as text"
    fi
done

if command -v groff >/dev/null 2>&1; then
    for prog in aiarun aiarun-plot aiarun-evaluate; do
        page="$top_srcdir/man/$prog.1"
        warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
        is "$warnings" "" "groff renders man/$prog.1 without a warning"
        out=$(groff -man -Tascii -P-cbou "$page" 2>/dev/null)
        like "$out" "^SYNOPSIS" "with its synopsis"
    done
    warnings=$(groff -man -Tutf8 -ww -z "$tut" 2>&1)
    is "$warnings" "" "groff renders man/aiarun-plugin.7 without a warning"
    job5=$top_srcdir/man/aiarun.5
    for dev in utf8 ascii; do
        warnings=$(groff -man -T$dev -ww -z "$job5" 2>&1)
        is "$warnings" "" "groff -T$dev renders man/aiarun.5 without a warning"
    done
    out=$(groff -man -Tascii -P-cbou "$job5" 2>/dev/null)
    like "$out" "^RUNTIME KEYS" "with the reference of the keys"
    like "$out" "^ *pool\.wait\.nwait|^ *nwait " "and the wait condition's"
else
    test_count=$((test_count + 1))
    echo "ok $test_count # SKIP groff is not installed"
fi
done_testing
