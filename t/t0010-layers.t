#!/bin/sh
# The runtime's folders are its layers, and the includes keep to them:
# mpi.h only in the MPI driver (runtime/mpi), the MPI driver and the
# simulator (runtime/sim) never include each other, the protocol core
# (runtime/core) includes nothing but itself, the data files
# (runtime/data) nothing but the core and themselves, and no folder
# reaches up into a driver.  Each rule is also tried on a made-up
# violation, so the check itself can fail.
. "$top_srcdir/t/lib.sh"

rt="$top_srcdir/runtime"
layers="core conf data record session mpi sim"

# edges DIR: one line "FILE FOLDER HEADER" for each quoted include of a
# runtime header (a bare name is in the includer's own folder) and "FILE
# mpi.h mpi.h" for <mpi.h>, over the .c and .h files of the folders under
# DIR.
edges() {
    for d in $layers; do
        for f in "$1/$d"/*.c "$1/$d"/*.h; do
            [ -f "$f" ] || continue
            awk -v own="$d" -v file="$d/${f##*/}" '
                /^[ \t]*#[ \t]*include[ \t]*<mpi\.h>/ { print file, "mpi.h", "mpi.h" }
                /^[ \t]*#[ \t]*include[ \t]*"/ {
                    split($0, q, "\""); h = q[2]
                    if (h ~ /^aiarun\//) next
                    n = split(h, p, "/")
                    if (n > 1) print file, p[1], h
                    else print file, own, own "/" h
                }' "$f"
        done
    done
}

# broken RULE EDGES: the edges that break RULE (one a line), where RULE is
# "FOLDER ALLOWED..." (FOLDER may include only the ALLOWED folders, or
# headers named as FOLDER/NAME.h) or "mpi.h FOLDER" (only FOLDER may
# include mpi.h).
broken() {
    printf '%s\n' "$2" | awk -v rule="$1" '
        BEGIN { n = split(rule, r, " ") }
        r[1] == "mpi.h" {
            split($1, f, "/")
            if ($2 == "mpi.h" && f[1] != r[2]) print; next
        }
        {
            split($1, f, "/")
            if (f[1] != r[1] || $2 == "mpi.h") next
            okay = 0
            for (i = 2; i <= n; i++) if ($2 == r[i] || $3 == r[i]) okay = 1
            if (!okay) print
        }'
}

# The recorder reads what a run holds (setup.h), its facts and its
# reference optimum (refopt.h, for the gap), the
# session's types, below the session's lifecycle that calls the recorder.
# The stop rules work over the core's own struct proto_limits, which the
# configuration binds the stop section to: the core includes no
# configuration.  The configuration reads the core and the data formats;
# it also gathers the keys of the modules that own them (the simulator's
# latency models, the outputs' formats) and binds plugin parameters
# (the loader's plugins), and reaches nothing else above it.
rules="mpi.h mpi
conf conf core data sim/latency.h record/output.h session/loader.h
core core
data data core
sim sim session record conf data core
mpi mpi session record conf data core
session session record conf data core
record record conf data core session/setup.h session/facts.h session/refopt.h"

scratch
cd "$trash" || exit 99
all=$(edges "$rt")
test_expect 'the runtime has layered folders with includes in them' \
    '[ $(printf "%s\n" "$all" | wc -l) -gt 100 ]'
while read -r rule; do
    bad=$(broken "$rule" "$all")
    test -z "$bad"
    ok $? "includes keep to: $rule"
    [ -z "$bad" ] || diag "$bad"
done <<EOF
$rules
EOF
# the top of runtime/ (main.c) picks a driver and never calls MPI
expect_nogrep 'runtime/main.c does not include mpi.h' '<mpi\.h>' "$rt/main.c"

# Each rule catches a made-up violation of it.
mkdir -p fake/core fake/mpi fake/sim fake/data
printf '#include "conf/job.h"\n' >fake/core/a.c
printf '#include "sim/sim.h"\n' >fake/mpi/b.c
printf '#include "mpi/run.h"\n' >fake/sim/c.c
printf '#include <mpi.h>\n' >fake/data/d.c
fake=$(edges fake)
test_expect 'a core file including the configuration is caught' \
    '[ -n "$(broken "core core" "$fake")" ]'
test_expect 'the MPI driver including the simulator is caught' \
    '[ -n "$(broken "mpi mpi session record conf data core" "$fake")" ]'
test_expect 'the simulator including the MPI driver is caught' \
    '[ -n "$(broken "sim sim session record conf data core" "$fake")" ]'
test_expect 'mpi.h outside runtime/mpi is caught' \
    '[ -n "$(broken "mpi.h mpi" "$fake")" ]'
done_testing
