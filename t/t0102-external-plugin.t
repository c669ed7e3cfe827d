#!/bin/sh
# A plugin built outside the tree against the installed header (here:
# the uninstalled pkg-config file) and named by path in a job file.
. "$top_srcdir/t/lib.sh"
command -v pkg-config >/dev/null || skip_all "pkg-config is not installed"
scratch
cd "$trash" || exit 99

cat > heavyball.c <<'EOF_C'
/* SGD with heavy-ball momentum, written by a user of aiarun. */
#include <stdlib.h>
#include <string.h>
#include <aiarun/aiarun.h>

struct hb { const struct aia_problem_plugin *p; void *ps; size_t n;
            double step, beta, *x, *v; };

static const struct aia_param params[] = {
    {"step", AIA_DOUBLE, "0.05", "step size", NULL, 0, 10},
    {"beta", AIA_DOUBLE, "0.5", "momentum", NULL, 0, 0.999},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static void destroy(void *s) {
    struct hb *h = s; free(h->x); free(h->v); free(h);
}
static int create(const struct aia_context *c, struct aia_shape *sh,
                  void **st, struct aia_error *e) {
    struct hb *h = calloc(1, sizeof *h);
    if (!h) return aia_seterr(e, "out of memory");
    h->p = c->problem; h->ps = c->problem_state; h->n = h->p->dim(h->ps);
    h->step = aia_arg(c->args, "step")->d;
    h->beta = aia_arg(c->args, "beta")->d;
    h->x = calloc(h->n, sizeof *h->x); h->v = calloc(h->n, sizeof *h->v);
    if (!h->x || !h->v) { destroy(h); return aia_seterr(e, "out of memory"); }
    sh->query_len = sh->answer_len = h->n; *st = h; return 0;
}
static int init(void *s, double *q, struct aia_error *e) {
    struct hb *h = s; (void)e; memcpy(q, h->x, h->n * sizeof *q); return 0;
}
static int worker(void *s, const double *q, double *a,
                  const struct aia_step *st, struct aia_error *e) {
    struct hb *h = s; (void)st;
    return h->p->gradient(h->ps, q, NULL, 0, a, e);
}
static int absorb(void *s, const double *a, const struct aia_answer_info *i,
                  struct aia_error *e) {
    struct hb *h = s; (void)i; (void)e;
    for (size_t j = 0; j < h->n; j++) {
        h->v[j] = h->beta * h->v[j] - h->step * a[j];
        h->x[j] += h->v[j];
    }
    return 0;
}
const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin,
                    "heavyball", "0.1", "SGD with momentum", params),
    .create = create, .destroy = destroy, .init = init, .worker = worker,
    .absorb = absorb, .query = init,
};
EOF_C
cflags=$(pkg-config --cflags aiarun); rc=$?
is "$rc" 0 "pkg-config knows aiarun"
${CC:-cc} -shared -fPIC $cflags heavyball.c -o heavyball.so 2>cc.err
rc=$?
is "$rc" 0 "cc -shared -fPIC \$(pkg-config --cflags aiarun) builds a plugin"
[ -s cc.err ] && diag "$(cat cc.err)"

mkdir jobs
cat > jobs/momentum.yaml <<'YAML'
seed: 5
algorithm:
  plugin: ../heavyball.so
  step: 0.05
  beta: 0.5
problem: {plugin: lrmse, rows: 2000, cols: 10}
stop: {iterations: 300}
YAML
out=$("$AIARUN" --check jobs/momentum.yaml 2>&1); rc=$?
is "$rc" 0 "--check loads it by a path relative to the job file"
run 4 jobs/momentum.yaml
is "$rc" 0 "a run with it exits 0"
gap=$(field gap "$out")
expect_ok "and converges (gap $gap)" float_le "${gap:-1}" 0.01
out=$("$AIARUN" --check -o algorithm.bta=1 jobs/momentum.yaml 2>&1)
like "$out" "unknown key for plugin 'heavyball'; did you mean 'beta'" \
    "its parameters are checked against its own table"
done_testing
