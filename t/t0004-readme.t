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
# The plugin listing, with the install folder in place of the build's.
"$AIARUN" --list-plugins |
    sed "s|/[^ ]*/\([a-z_]*\.so\)\$|/usr/local/lib/aiarun/\1|" > "$trash/listed.txt"
sed -n '/^<!-- list-plugins -->$/,/^<!-- \/list-plugins -->$/p' \
    "$top_srcdir/README.md" | sed '1,2d;$d' | sed '$d' > "$trash/readme-list.txt.all"
# A build without Python lists no python problem.
if [ "$AIA_HAVE_PYTHON" = yes ]; then
    cp "$trash/readme-list.txt.all" "$trash/readme-list.txt"
else
    sed '/^problem        python /,+2d' "$trash/readme-list.txt.all" > "$trash/readme-list.txt"
fi
ok $([ -s "$trash/readme-list.txt" ] && echo 0 || echo 1) "the README has a plugin listing"
diff -u "$trash/listed.txt" "$trash/readme-list.txt" > "$trash/diff.txt"
ok $? "it is what aiarun --list-plugins prints"
[ -s "$trash/diff.txt" ] && diag "$(head -40 "$trash/diff.txt")"
done_testing
