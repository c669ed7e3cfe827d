#!/bin/sh
# The README's copy of the job-file reference is the one aiarun prints.
. "$top_srcdir/t/lib.sh"
scratch
"$AIARUN" --job-reference > "$trash/printed.md"
sed -n '/^<!-- job-reference -->$/,/^<!-- \/job-reference -->$/p' \
    "$top_srcdir/README.md" | sed '1d;$d' > "$trash/readme.md"
ok $([ -s "$trash/readme.md" ] && echo 0 || echo 1) "the README has a reference"
diff -u "$trash/printed.md" "$trash/readme.md" > "$trash/diff.txt"
ok $? "it is what aiarun --job-reference prints"
[ -s "$trash/diff.txt" ] && diag "$(head -40 "$trash/diff.txt")"
"$AIARUN" --list-plugins | grep -E '^ {6}[a-z_]+ ' | sed 's/ *$//' > "$trash/params.txt"
missing=$(while read -r line; do
    grep -qF -- "$line" "$top_srcdir/README.md" || printf '%s\n' "$line"
done < "$trash/params.txt" | awk '{ print $1 }' | tr '\n' ' ')
is "$missing" "" "every parameter --list-plugins prints is in the README"
done_testing
