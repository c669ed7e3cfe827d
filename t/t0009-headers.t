#!/bin/sh
# The installed headers are portable C99 and C++: each compiles alone with
# -std=c99 -pedantic -Werror, and as C++ (extern "C") when g++ is here, so
# that a compiler extension (unsigned __int128, hexadecimal floats in C++)
# cannot come back into what plugin authors include.
. "$top_srcdir/t/lib.sh"

inc="$top_srcdir/runtime/include"
cc=${CC:-cc}
cxx=$(command -v g++ || command -v clang++)
scratch
tmp=$trash

cflags="-std=c99 -pedantic -Wall -Wextra -Werror"
cxxflags="-std=c++11 -pedantic -Wall -Wextra -Werror"

# The flags refuse the construct the headers once had: the test can fail.
printf 'unsigned __int128 x;\nint main(void) { return (int)x; }\n' >"$tmp/bad.c"
if $cc $cflags -c "$tmp/bad.c" -o "$tmp/bad.o" 2>/dev/null; then rc=1; else rc=0; fi
ok "$rc" "$cc $cflags refuses unsigned __int128"

for h in "$inc"/aiarun/*.h; do
    name=aiarun/$(basename "$h")
    printf '#include <%s>\nint main(void) { return 0; }\n' "$name" \
        >"$tmp/use.c"
    err=$($cc $cflags -I"$inc" -c "$tmp/use.c" -o "$tmp/use.o" 2>&1)
    is "$?" 0 "$name compiles as C99 with -pedantic -Werror"
    [ -n "$err" ] && diag "$err"
    if [ -z "$cxx" ]; then
        ok 0 "# SKIP no C++ compiler"
        continue
    fi
    cp "$tmp/use.c" "$tmp/use.cc"
    err=$($cxx $cxxflags -I"$inc" -c "$tmp/use.cc" -o "$tmp/use.o" 2>&1)
    is "$?" 0 "$name compiles as C++11 with -pedantic -Werror"
    [ -n "$err" ] && diag "$err"
done

done_testing
