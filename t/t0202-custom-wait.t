#!/bin/sh
# A wait condition built outside the tree against the installed header,
# named by path in a job file, decides when rounds end.
. "$top_srcdir/t/lib.sh"
command -v pkg-config >/dev/null || skip_all "pkg-config is not installed"
scratch
cd "$trash" || exit 99

cat > rotate.c <<'EOF_C'
/* The round ends when the worker whose turn it is (round mod workers)
 * has answered it: a condition the built-in one cannot express. */
#include <stdlib.h>
#include <aiarun/aiarun.h>

static int create(const struct aia_context *ctx, void **state,
                  struct aia_error *err)
{
    (void)ctx; (void)err;
    *state = NULL;
    return 0;
}
static void destroy(void *state) { (void)state; }
static int ready(void *state, const struct aia_pool_view *v)
{
    (void)state;
    return v->fresh_now[v->round % (uint64_t)v->nworkers];
}
const struct aia_wait_plugin aia_wait_plugin = {
    .h = AIA_HEADER(AIA_KIND_WAIT, struct aia_wait_plugin, "rotate", "0.1",
                    "each round waits for the worker whose turn it is", NULL),
    .create = create, .destroy = destroy, .ready = ready,
};
EOF_C
${CC:-cc} -shared -fPIC $(pkg-config --cflags aiarun) rotate.c -o rotate.so
ok $? "the wait condition builds outside the tree"

cat > job.yaml <<'YAML'
algorithm: {plugin: sgd, step: 0.02}
problem: {plugin: lrmse}
pool:
  wait: {plugin: ./rotate.so}
stragglers:
  work_ms: 1
  random: {probability: 0.5, delay_ms: 3}
stop: {iterations: 40}
output: {answers: a.csv}
YAML
run 5 job.yaml
is "$rc" 0 "a job with it runs"
# In round r the turn is pool index r mod 4, that is rank (r mod 4) + 1.
missing=$(awk -F, 'NR > 1 && $5 == 0 { fresh[$4 "," $2] = 1 }
    END { for (r = 1; r <= 40; r++) if (!(r "," (r % 4) + 1 in fresh)) printf "%d ", r }' a.csv)
is "$missing" "" "every round had the answer of the worker whose turn it was"
out=$("$AIARUN" --check -o pool.wait.turn=1 job.yaml 2>&1)
like "$out" "pool.wait.turn: unknown key for plugin 'rotate'" \
    "its (empty) parameter table is enforced"
done_testing
