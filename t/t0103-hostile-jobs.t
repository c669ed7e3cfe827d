#!/bin/sh
# Job files written to hurt, through the command line: aiarun --check
# refuses each with exit 2 and one line naming the file (and the line and
# key where there is one), in bounded time; under mpirun every rank exits
# 2 and only one rank says why.  (t/hostile.c holds the finer checks.)
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
export AIA_TIMEOUT=60

head='algorithm: {plugin: sgd}
problem: {plugin: lrmse}
stop: {iterations: 10}'

# check FILE : aiarun --check, bounded; sets rc and out
check() {
    out=$(timeout -k 5 30 "$AIARUN" --check "$1" 2>&1)
    rc=$?
}
# refused FILE REGEX WHAT : exit 2, one line, matching
refused() {
    check "$1"
    is "$rc" 2 "$3: exit 2"
    like "$out" "$2" "$3: says why"
    is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 1 "$3: in one line"
}

awk 'BEGIN { printf "algorithm: "; for (i = 0; i < 100000; i++) printf "[";
             for (i = 0; i < 100000; i++) printf "]"; print "" }' >deep.yaml
refused deep.yaml '^aiarun: deep.yaml:1:44: nested too deeply' \
    "100000 nested lists"

head -c 17000000 /dev/zero | tr '\0' '#' >huge.yaml
refused huge.yaml '^aiarun: huge.yaml: larger than 16777216 bytes' \
    "a 17 MB file"

{ printf '%s\n' "$head"; awk 'BEGIN { for (i = 0; i < 250000; i++)
    print "# a comment that says nothing at all, again and again" }'; } \
    >padded.yaml
check padded.yaml
is "$rc" 0 "a valid job padded with 13 MB of comments checks"

# Under the sanitizers CI unwinds the stack on every malloc (for Open
# MPI's leak suppressions), some 50 times the cost of a node: the inputs
# of many nodes are cut there, where memory safety is what is checked.
if [ -z "${AIA_SANITIZED:-}" ]; then
    awk 'BEGIN { for (i = 0; i < 150000; i++) print "k" i ": " i }' >wide.yaml
    refused wide.yaml '^aiarun: wide.yaml:100000:9: too many nodes' \
        "150000 keys"
    many=90000
else
    many=9000
fi

{ printf '%s\n' "$head"; echo "pool:"; echo "  wait:";
  awk -v n=$many 'BEGIN { for (i = 0; i < n; i++) print "    k" i ": 1" }'; } \
    >wait-keys.yaml
refused wait-keys.yaml \
    "^aiarun: wait-keys.yaml:6:5: pool.wait.k0: unknown key for plugin 'standard'" \
    "a wait section of $many keys"

cp "$FIXTURES/goodalg.so" binary.yaml
refused binary.yaml \
    '^aiarun: binary.yaml:1:1: control characters are not allowed \(byte 0x7f\)' \
    "a shared object as a job file"

: >empty.yaml
refused empty.yaml '^aiarun: empty.yaml:1:1: the job file is empty' \
    "an empty file"

printf '# only\n# comments\n' >comments.yaml
refused comments.yaml '^aiarun: comments.yaml:1:1: the job file is empty' \
    "a file of comments"

printf '%s\nalgorithm: {plugin: gd}\n' "$head" >dup.yaml
refused dup.yaml \
    '^aiarun: dup.yaml:4:1: algorithm: duplicate key \(first at line 1\)' \
    "a section given twice"

printf '%s\npool: [1, 2]\n' "$head" >type.yaml
refused type.yaml \
    '^aiarun: type.yaml:4:7: pool: expected a mapping of keys, got a list' \
    "a section of the wrong type"

printf '%s\noutput: {every: "10"}\n' "$head" >quoted.yaml
refused quoted.yaml \
    "^aiarun: quoted.yaml:4:17: output.every: expected an integer, got '10' \(quoted or tagged, so text\)" \
    "a quoted number"

cat >laughs.yaml <<'YAML'
a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
YAML
refused laughs.yaml \
    '^aiarun: laughs.yaml:2:8: aliases \(\*name\) are not supported' \
    "the billion laughs"

{ printf '%s\n"' "$head"; head -c 1000000 /dev/zero | tr '\0' k;
  printf '": 1\n'; } >longkey.yaml
refused longkey.yaml \
    '^aiarun: longkey.yaml:4:1: YAML syntax error: a key of more than 1024 characters' \
    "a 1 MB key"

{ printf 'algorithm: {plugin: sgd, '; head -c 1000 /dev/zero | tr '\0' s;
  printf ': 1}\nproblem: {plugin: lrmse}\nstop: {iterations: 1}\n'; } \
    >key1000.yaml
refused key1000.yaml \
    "^aiarun: key1000.yaml:1:26: algorithm.s{60}\.\.\.: unknown key for plugin 'sgd'" \
    "a 1000-character key, cut short"

{ printf 'algorithm: {plugin: '; head -c 1000000 /dev/zero | tr '\0' p;
  printf '}\nproblem: {plugin: lrmse}\nstop: {iterations: 1}\n'; } \
    >longname.yaml
refused longname.yaml \
    '^aiarun: longname.yaml:1:1: algorithm: p{60}\.\.\.: not a plugin name' \
    "a 1 MB plugin name"

printf 'algorithm: {plugin: sgd\000}\n' >nul.yaml
refused nul.yaml \
    '^aiarun: nul.yaml:1:24: control characters are not allowed \(byte 0x00\)' \
    "a NUL byte"

printf 'algorithm: {plugin: "\\e[2J"}\n%s\n%s\n' "problem: {plugin: lrmse}" \
    "stop: {iterations: 1}" >escape.yaml
refused escape.yaml \
    '^aiarun: escape.yaml:1:1: algorithm: \\x1b\[2J: not a plugin name' \
    "a terminal escape, shown escaped"

printf 'algorithm:\n  plugin: sgd\n  step: 0.1\377\n' >utf8.yaml
refused utf8.yaml \
    '^aiarun: utf8.yaml:3:12: invalid leading UTF-8 octet \(byte 0xff\)' \
    "invalid UTF-8"

printf 'algorithm:\n\tplugin: sgd\n' >tabs.yaml
refused tabs.yaml \
    '^aiarun: tabs.yaml:2:1: YAML syntax error: found character that cannot start any token' \
    "a tab as indentation"

printf '%s\n---\n%s\n' "$head" "$head" >twodocs.yaml
refused twodocs.yaml \
    '^aiarun: twodocs.yaml:4:1: a job file holds one YAML document, found a second' \
    "a second document"

# Under mpirun: every rank parses the same bytes and agrees; one message.
mpi() {
    run -e 3 "$1"
    is "$rank_status" "2 2 2" "mpirun, $3: every rank exits 2"
    like "$err" "$2" "mpirun, $3: rank 0 says why"
    is "$(grep -c '^aiarun\[' err.txt)" 1 "mpirun, $3: once, not once per rank"
}
mpi huge.yaml '^aiarun\[0\]: huge.yaml: larger than 16777216 bytes' "a 17 MB file"
mpi deep.yaml '^aiarun\[0\]: deep.yaml:1:44: nested too deeply \(2 more ranks failed too\)' \
    "deep nesting"
mpi laughs.yaml '^aiarun\[0\]: laughs.yaml:2:8: aliases' "the billion laughs"
mpi binary.yaml '^aiarun\[0\]: binary.yaml:1:1: control characters' \
    "a shared object"
mpi nul.yaml '^aiarun\[0\]: nul.yaml:1:24: control characters' "a NUL byte"
mpi dup.yaml '^aiarun\[0\]: dup.yaml:4:1: algorithm: duplicate key' \
    "a duplicate key"
mpi empty.yaml '^aiarun\[0\]: empty.yaml:1:1: the job file is empty' \
    "an empty file"
done_testing
