#!/bin/sh
# Messages a user trips on: an unknown option in one line, every known key
# named, a denormal judged by its bounds, a pool mpirun would refuse
# refused by --check -n, too few rows blamed on the rows, and a report
# that lists a generator's parameters only for generated data.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, rows: 3, cols: 2}
stop: {iterations: 5}
YAML

err=$("$AIARUN" --bogus job.yaml 2>&1 >/dev/null)
is "$?" 2 "an unknown option: exit 2"
is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 2 "in two lines: the option and where help is"
like "$err" "unrecognized option '--bogus'" "naming the option"
unlike "$err" "Usage:" "not the whole help"

err=$("$AIARUN" --check -o bogus=1 job.yaml 2>&1)
like "$err" "bogus: unknown key; known keys: seed, algorithm, problem, pool, stop, output, limits, stragglers" \
    "an unknown top-level key lists every known key"
err=$("$AIARUN" --check -o pool.xyzzy=1 job.yaml 2>&1)
like "$err" "known keys: .*mode, .*codec, wait" "and a section its sub-sections"

err=$("$AIARUN" --check -o algorithm.step=4.9e-324 job.yaml 2>&1)
like "$err" "algorithm.step: must be between 1e-300 and 1e\\+300" \
    "a denormal step is refused by its bounds"
unlike "$err" "expected a number" "not as if it were no number"
"$AIARUN" --check -o stop.time=4.9e-324 job.yaml >/dev/null 2>&1
is "$?" 0 "a denormal within its bounds is accepted"

err=$("$AIARUN" --check -n 4 -o 'pool.workers=[1,1,2]' job.yaml 2>&1)
is "$?" 2 "--check -n 4 refuses a rank listed twice"
like "$err" "pool.workers: rank 1 is listed twice" "saying so"
err=$("$AIARUN" --check -n 4 -o 'pool.workers=[7]' job.yaml 2>&1)
like "$err" "pool.workers: rank 7 is not a worker rank of this run \\(1 to 4\\)" \
    "and a rank that is not in the run"

run 5 job.yaml
err=$(cat out.txt err.txt)
like "$err" "job.yaml:2:[0-9]+: problem.rows: worker [0-9] \\(rank [0-9]\\) holds none of the problem's rows" \
    "3 rows for 4 workers is blamed on problem.rows"
unlike "$err" "algorithm: worker" "not on the algorithm"

run 3 -o problem.rows=40 job.yaml
like "$out" "problem +lrmse .*rows=40 cols=2 noise=" "generated data: the generator's parameters"
i=0; while [ $i -lt 40 ]; do echo "$i,$((i % 7)),$((i * 3 % 11))"; i=$((i + 1)); done > d.csv
sed 's/rows: 3, cols: 2/ridge: 0.5, data: {path: d.csv}/' job.yaml > data.yaml
run 3 data.yaml
like "$out" "problem +lrmse .*: reads problem.data ridge=0.5
" "a data file: the parameters the job sets"
unlike "$out" "noise=" "and no generator's"
done_testing
