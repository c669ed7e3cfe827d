#!/bin/sh
# aiarun --list-plugins: every plugin found, its kind, version, summary
# and parameters.
. "$top_srcdir/t/lib.sh"

out=$("$AIARUN" --list-plugins); rc=$?
is "$rc" 0 "--list-plugins exits 0"
like "$out" "^algorithm +sgd +1\.0 +/.*/sgd\.so" "sgd: kind, name, version, path"
like "$out" "asynchronous SGD" "sgd's summary"
like "$out" "step +number[|]auto +auto +step size" "sgd's step: type, default, help"
like "$out" "batch +int +0 " "sgd's batch"
like "$out" "schedule +constant[|]invsqrt[|]step +constant" "sgd's schedule"
for p in decay decay_every momentum staleness_scaling; do
    printf '%s' "$out" | grep -Eq "^ +$p " || sgd_missing="${sgd_missing:-} $p"
done
is "${sgd_missing:-}" "" "sgd's decay, decay_every, momentum, staleness_scaling"
like "$out" "^algorithm +gd +1\.1 +/.*/gd\.so" "gd"
like "$out" "^algorithm +average +1\.1 +/.*/average\.so" "average"
like "$out" "memory +latest[|]delta +latest" "average's memory"
for p in local_steps weights; do
    printf '%s' "$out" | grep -Eq "^ +$p " || avg_missing="${avg_missing:-} $p"
done
is "${avg_missing:-}" "" "average's local_steps and weights"
like "$out" "^problem +lrmse +1\.2" "lrmse"
like "$out" "^problem +logreg +1\.0" "logreg"
for p in rows cols noise ridge condition l2 flip margin; do
    printf '%s' "$out" | grep -Eq "^ +$p " || missing="${missing:-} $p"
done
is "${missing:-}" "" "lrmse's rows, cols, noise, ridge, condition; logreg's l2, flip, margin"
# a bound of 1e9 is enforced: it is shown with the lower one
like "$out" "^ +local_steps +int +1 +.*\\(1 to 1e\\+09\\)" "a parameter bounded 1..1e9 shows its range"
unlike "$out" "at least 1\\)" "no range is given as its lower bound only"
like "$out" "^wait condition +standard +[0-9.]+ +built-in" "the built-in wait"

scratch
cp "$FIXTURES/badabi.so" "$trash/"
out=$("$AIARUN" --list-plugins "$trash/job.yaml")
like "$out" "^broken +badabi.so +- +$trash/badabi.so" \
    "a broken plugin in the job's folder is listed as broken"
like "$out" "error: .*badabi.so: plugin ABI 999" "with its error"
done_testing
