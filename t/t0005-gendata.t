#!/bin/sh
# The example data files in etc/data are what tools/gendata writes.
. "$top_srcdir/t/lib.sh"
gendata="$top_builddir/tools/gendata"
[ -x "$gendata" ] || skip_all "tools/gendata is not built"
scratch
"$gendata" "$trash"
ok $? "gendata writes the files"
for f in lr.csv lr.svm lr.bin logreg.csv; do
    cmp -s "$trash/$f" "$top_srcdir/etc/data/$f"
    ok $? "etc/data/$f is what gendata writes (make data)"
done
done_testing
