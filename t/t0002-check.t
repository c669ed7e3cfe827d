#!/bin/sh
# aiarun --check: validation without mpirun, with file, line and key.
. "$top_srcdir/t/lib.sh"
scratch

job() { cat > "$trash/$1.yaml"; }
check() { "$AIARUN" --check "$@" 2>&1; }

out=$(check "$top_srcdir/etc/sgd-lrmse.yaml"); rc=$?
is "$rc" 0 "the example job checks"
like "$out" "ok \(algorithm sgd, problem lrmse, wait standard" \
    "and names its plugins"

job typo <<'YAML'
algorithm:
  plugin: sgd
  stpe: 0.1
problem:
  plugin: lrmse
stop:
  iterations: 10
YAML
out=$(check "$trash/typo.yaml"); rc=$?
is "$rc" 2 "a typo'd plugin key exits 2"
like "$out" "typo.yaml:3:3: algorithm.stpe: unknown key for plugin 'sgd'; did you mean 'step'\?" \
    "naming file, line, column and key, with a suggestion"
is "$(printf '%s\n' "$out" | wc -l)" 1 "in one line"

job wrongtype <<'YAML'
algorithm:
  plugin: sgd
  step: fast
problem:
  plugin: lrmse
stop:
  iterations: 10
YAML
out=$(check "$trash/wrongtype.yaml"); rc=$?
is "$rc" 2 "a wrong type exits 2"
like "$out" "wrongtype.yaml:3:9: algorithm.step: expected a number or auto, got 'fast'" \
    "naming the value"

job nan <<'YAML'
algorithm: {plugin: sgd, step: .nan}
problem: {plugin: lrmse}
stop: {iterations: 10}
YAML
out=$(check "$trash/nan.yaml"); rc=$?
like "$out" "nan.yaml:1:32: algorithm.step: expected a finite number" \
    "NaN is refused"

job range <<'YAML'
algorithm: {plugin: sgd}
problem: {plugin: lrmse, rows: 0}
stop: {iterations: 10}
YAML
out=$(check "$trash/range.yaml"); rc=$?
like "$out" "range.yaml:2:32: problem.rows: must be between 1 and" \
    "a value out of range is refused"

job section <<'YAML'
algorithm: {plugin: sgd}
problem: {plugin: lrmse}
stop: {iterations: 10}
outptu: {history: h.csv}
YAML
out=$(check "$trash/section.yaml"); rc=$?
like "$out" "section.yaml:4:1: outptu: unknown key; did you mean 'output'\?" \
    "an unknown section is refused"

job noplugin <<'YAML'
algorithm: {plugin: adamw}
problem: {plugin: lrmse}
stop: {iterations: 10}
YAML
out=$(check "$trash/noplugin.yaml"); rc=$?
is "$rc" 2 "a missing plugin exits 2"
like "$out" "noplugin.yaml:1:1: algorithm: adamw: algorithm plugin not found \(looked for adamw.so in .*$trash" \
    "naming the plugin and the folders searched"

job kind <<'YAML'
algorithm: {plugin: lrmse}
problem: {plugin: lrmse}
stop: {iterations: 10}
YAML
out=$(check "$trash/kind.yaml"); rc=$?
like "$out" "kind.yaml:1:1: algorithm: .*lrmse.so: is a problem plugin, not an algorithm plugin" \
    "a plugin of the wrong kind is refused"

job nwait <<'YAML'
algorithm: {plugin: sgd}
problem: {plugin: lrmse}
pool:
  wait:
    nwait: 5
stop: {iterations: 10}
YAML
out=$(check "$trash/nwait.yaml"); rc=$?
is "$rc" 0 "nwait is not checked without the pool size"
out=$(check -n 4 "$trash/nwait.yaml"); rc=$?
is "$rc" 2 "with -n 4, nwait 5 exits 2"
like "$out" "nwait.yaml:4:3: pool.wait: nwait: 5 exceeds the 4 workers" \
    "naming the wait section"
out=$(check -n 5 "$trash/nwait.yaml"); rc=$?
is "$rc" 0 "with -n 5 it checks"

out=$(check -o algorithm.step=fast "$top_srcdir/etc/sgd-lrmse.yaml"); rc=$?
like "$out" "command line \(-o\): algorithm.step: expected a number" \
    "a bad -o names the command line"
out=$(check -o algorithm.stpe=1 "$top_srcdir/etc/sgd-lrmse.yaml"); rc=$?
like "$out" "command line \(-o\): algorithm.stpe: unknown key" \
    "an unknown -o key is refused"
out=$(check -o stop.iterations=0 -o stop.time=0 "$top_srcdir/etc/sgd-lrmse.yaml"); rc=$?
like "$out" "stop: give 'iterations', 'epochs' or 'time'" "-o values are checked like the file's"

# a tree beside a wait that says what it does (nwait 0); -o KEY= (empty)
# removes a key or a section
ex="$top_srcdir/etc/average-lrmse.yaml"
out=$(check -o pool.topology=tree "$ex"); rc=$?
is "$rc" 0 "a tree keeps the example's pool.wait (nwait 0: every worker)"
out=$(check -o pool.topology=tree -o pool.wait.nwait=2 "$ex"); rc=$?
is "$rc" 2 "a tree beside a wait for 2 workers exits 2"
like "$out" "command line \\(-o\\): pool.wait.nwait: pool.topology: a tree waits for every worker each round" \
    "naming the key that contradicts it"
out=$(check -o pool.wait= -o pool.topology=tree "$ex"); rc=$?
is "$rc" 0 "-o pool.wait= removes the section: the tree checks"
out=$(check -o pool.wiat= "$ex"); rc=$?
is "$rc" 2 "removing a key aiarun does not know exits 2"
like "$out" "-o pool.wiat=: no such key or section to remove" "and names it"

# a rank listed twice in a stragglers list: only its first factor (or
# delay) applied, while the report listed both
for list in "slow: {ranks: [1, 1], factor: [2, 3]}:slow" \
    "fixed: {ranks: [2, 1, 2], delay_ms: 5}:fixed" \
    "markov: {ranks: [1, 1], p_slow: 0.1, p_fast: 0.5, delay_ms: 5}:markov" \
    "hang: {ranks: [1, 1]}:hang" "corrupt: {ranks: [3, 3]}:corrupt"; do
    job twice <<YAML
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse}
stop: {iterations: 10}
stragglers:
  ${list%:*}
YAML
    out=$(check "$trash/twice.yaml"); rc=$?
    is "$rc" 2 "stragglers.${list##*:}.ranks with a rank twice exits 2"
    like "$out" "twice.yaml:5:[0-9]+: stragglers.${list##*:}.ranks: rank [0-9] is listed twice" \
        "naming the file, line and key"
done
out=$(check -n 4 -o 'pool.workers=[1,1,2]' "$top_srcdir/etc/sgd-lrmse.yaml"); rc=$?
like "$out" "pool.workers: rank 1 is listed twice" \
    "pool.workers by the same check"

printf 'algorithm: [unclosed\n' > "$trash/syntax.yaml"
out=$(check "$trash/syntax.yaml"); rc=$?
test_expect "a YAML syntax error names the place" \
    '[ "$rc" = 2 ] && printf "%s" "$out" | grep -q "syntax.yaml:2:1: YAML syntax error"'
out=$(check "$trash/absent.yaml"); rc=$?
like "$out" "absent.yaml: cannot open: No such file" "a missing job file is named"
done_testing
