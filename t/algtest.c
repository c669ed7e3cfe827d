/* algtest.c - a whole pool in one process: the coordinator's absorb and
 * query and the workers' answers called in an order the test chooses, so
 * that fresh, stale and missing answers can be staged exactly. */
#include <config.h>

#include "algtest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

int algtest_async;

void algtest_open(struct algtest *t, const struct plugtest *alg,
                  const struct plugtest *prob, int nworkers,
                  const double *weights, uint64_t seed)
{
    struct aia_error err;
    memset(t, 0, sizeof *t);
    if (nworkers < 1 || nworkers > ALGTEST_MAX_WORKERS)
        bail_out("algtest: %d workers", nworkers);
    t->alg = (const void *)alg->p->h;
    t->prob = (const void *)prob->p->h;
    t->nworkers = nworkers;
    for (int r = 0; r <= nworkers; r++) {
        struct aia_partition part = {r == 0 ? AIA_PART_ALL : r - 1, nworkers,
                                     AIA_PART_BLOCK, 0, weights};
        int role = r == 0 ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER;
        struct aia_context ctx =
            plugtest_ctx(prob->args, role, r, nworkers, seed);
        if (t->prob->open(&ctx, &part, &t->ps[r], &err) < 0)
            bail_out("open rank %d: %s", r, err.text);
        if (r > 0) {
            t->rows[r - 1] = t->prob->rows(t->ps[r]);
            t->total_rows += t->rows[r - 1];
        }
    }
    /* L as the runtime combines it: the row-weighted mean of the
     * workers' own */
    t->facts.size = sizeof t->facts;
    t->facts.rows = t->total_rows;
    double sum = 0;
    /* only what the instances offer, as the runtime asks */
    int smooth = loader_offered(t->prob, t->ps[1], AIA_OFFER_SMOOTHNESS);
    for (int w = 0; w < nworkers && smooth; w++) {
        double L;
        if (t->prob->smoothness(t->ps[w + 1], &L, &err) < 0)
            bail_out("smoothness of worker %d: %s", w, err.text);
        sum += (double)t->rows[w] * L;
        t->facts.smallest =
            w == 0 || L < t->facts.smallest ? L : t->facts.smallest;
        t->facts.largest = L > t->facts.largest ? L : t->facts.largest;
    }
    if (smooth && t->total_rows > 0)
        t->facts.smoothness = sum / (double)t->total_rows;
    for (int r = 0; r <= nworkers; r++) {
        int role = r == 0 ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER;
        struct aia_context ctx =
            plugtest_ctx(alg->args, role, r, nworkers, seed);
        ctx.problem = t->prob;
        ctx.problem_state = t->ps[r];
        ctx.async = algtest_async;
        ctx.facts = &t->facts;
        struct aia_shape shape;
        if (t->alg->create(&ctx, &shape, &t->as[r], &err) < 0)
            bail_out("create rank %d: %s", r, err.text);
        t->dim = t->prob->dim(t->ps[r]);
        t->qlen = shape.query_len;
        t->alen = shape.answer_len;
        if (!t->alg->iterate && shape.query_len != t->dim)
            bail_out("%s's queries are not the model's size", t->alg->h.name);
    }
    if (!(t->hist = calloc(ALGTEST_HISTORY * t->qlen, sizeof *t->hist)) ||
        !(t->x = calloc(t->dim, sizeof *t->x)))
        bail_out("out of memory");
    t->round = 1;
    if (t->alg->init(t->as[0], t->hist + t->qlen, &err) < 0)
        bail_out("init: %s", err.text);
}

void algtest_close(struct algtest *t)
{
    for (int r = 0; r <= t->nworkers; r++) {
        t->alg->destroy(t->as[r]);
        t->prob->close(t->ps[r]);
    }
    free(t->hist);
    free(t->x);
}

const struct aia_algorithm_plugin *
algtest_by_hand(const struct plugtest *alg, const struct plugtest *prob,
                int nworkers, uint64_t seed, struct aia_context *ctx,
                void **ps)
{
    const struct aia_problem_plugin *p = (const void *)prob->p->h;
    struct aia_partition part = {AIA_PART_ALL, nworkers, AIA_PART_BLOCK, 0,
                                 NULL};
    struct aia_error err;
    *ctx = plugtest_ctx(prob->args, AIA_ROLE_COORDINATOR, 0, nworkers, seed);
    if (p->open(ctx, &part, ps, &err) < 0)
        bail_out("open: %s", err.text);
    ctx->args = alg->args;
    ctx->problem = p;
    ctx->problem_state = *ps;
    return (const void *)alg->p->h;
}

int algtest_load(struct algtest *u, const struct algtest *t, const void *buf,
                 size_t len, struct aia_error *err)
{
    if (u->alg->load(u->as[0], buf, len, err) < 0)
        return -1;
    u->round = t->round;
    memcpy(u->hist, t->hist, ALGTEST_HISTORY * t->qlen * sizeof *t->hist);
    memcpy(u->answers, t->answers, sizeof u->answers);
    return 0;
}

size_t algtest_resume(struct algtest *u, const struct algtest *t)
{
    struct aia_error err;
    if (!t->alg->state_size || !t->alg->save || !u->alg->load)
        bail_out("%s has no checkpoint functions", t->alg->h.name);
    size_t len;
    double *buf = algtest_state(t, &len);
    if (algtest_load(u, t, buf, len, &err) < 0)
        bail_out("load: %s", err.text);
    free(buf);
    return len;
}

size_t algtest_resume_async(struct algtest *t, struct algtest *u, int before,
                            int after)
{
    algtest_run_async(t, before);
    size_t len = algtest_resume(u, t);
    algtest_run_async(t, after);
    algtest_run_async(u, after);
    return len;
}

const double *algtest_query(const struct algtest *t, uint64_t r)
{
    if (r == 0 || r > t->round || t->round - r >= ALGTEST_HISTORY)
        bail_out("algtest: round %llu is not kept", (unsigned long long)r);
    return t->hist + (r % ALGTEST_HISTORY) * t->qlen;
}

const double *algtest_model(struct algtest *t)
{
    struct aia_error err;
    if (!t->alg->iterate)
        return algtest_query(t, t->round);
    if (t->alg->iterate(t->as[0], t->x, &err) < 0)
        bail_out("iterate: %s", err.text);
    return t->x;
}

void algtest_answer(struct algtest *t, int w, uint64_t sent)
{
    struct aia_error err;
    double *a = malloc(t->alen * sizeof *a);
    if (!a)
        bail_out("out of memory");
    struct aia_step step = {.round = sent, .answers = t->answers[w]++};
    if (t->alg->worker(t->as[w + 1], algtest_query(t, sent), a, &step, &err) <
        0)
        bail_out("worker %d: %s", w, err.text);
    struct aia_answer_info info = {
        .rank = w + 1,
        .worker = w,
        .round = t->round,
        .sent_round = sent,
        .staleness = t->round - sent,
        .rows = t->rows[w],
        .total_rows = t->total_rows,
        .compute_s = t->compute_s ? t->compute_s(t, w, a) : 0,
    };
    if (t->alg->absorb(t->as[0], a, &info, &err) < 0)
        bail_out("absorb (worker %d): %s", w, err.text);
    free(a);
}

int algtest_give(struct algtest *t, int w, const double *a, size_t rows,
                 size_t total_rows, uint64_t sent, struct aia_error *err)
{
    struct aia_answer_info info = {.rank = w + 1,
                                   .worker = w,
                                   .round = t->round,
                                   .sent_round = sent,
                                   .staleness = t->round - sent,
                                   .rows = rows,
                                   .total_rows = total_rows};
    return t->alg->absorb(t->as[0], a, &info, err);
}

void algtest_end_round(struct algtest *t)
{
    struct aia_error err;
    t->round++;
    if (t->alg->query(t->as[0], t->hist + (t->round % ALGTEST_HISTORY) * t->qlen,
                      &err) < 0)
        bail_out("query: %s", err.text);
}

void algtest_rounds(struct algtest *t, int rounds, int lagging, int lag)
{
    for (int k = 0; k < rounds; k++) {
        for (int w = 0; w < t->nworkers; w++) {
            uint64_t back = w == lagging ? (uint64_t)lag : 0;
            algtest_answer(t, w, back < t->round ? t->round - back : 1);
        }
        algtest_end_round(t);
    }
}

double algtest_gap(struct algtest *t)
{
    struct aia_error err;
    double f, fs, *xs = malloc(t->dim * sizeof *xs);
    if (!xs)
        bail_out("out of memory");
    if (t->prob->optimum(t->ps[0], xs, &fs, &err) < 0 ||
        t->prob->loss(t->ps[0], algtest_model(t), &f, &err) < 0)
        bail_out("gap: %s", err.text);
    free(xs);
    return (f - fs) / fs;
}

double algtest_distance(struct algtest *t)
{
    struct aia_error err;
    double fs, *xs = malloc(t->dim * sizeof *xs);
    if (!xs)
        bail_out("out of memory");
    if (t->prob->optimum(t->ps[0], xs, &fs, &err) < 0)
        bail_out("optimum: %s", err.text);
    double d = algtest_maxdiff(algtest_model(t), xs, t->dim);
    free(xs);
    return d;
}

double algtest_maxdiff(const double *a, const double *b, size_t n)
{
    double d = 0;
    for (size_t j = 0; j < n; j++)
        d = tap_worst(d, fabs(a[j] - b[j]));
    return d;
}

void algtest_resume_check(const char *name, const char *yaml,
                          const struct plugtest *prob, int nworkers)
{
    struct algtest t, u;
    struct plugtest a;
    if (nworkers < 4)
        bail_out("resume check: %d workers, not the 4 it needs", nworkers);
    plugtest_load(&a, name, AIA_KIND_ALGORITHM, yaml);
    algtest_open(&t, &a, prob, nworkers, NULL, 5);
    algtest_open(&u, &a, prob, nworkers, NULL, 5);
    algtest_rounds(&t, 37, 3, 2);
    size_t len = algtest_resume(&u, &t);
    algtest_rounds(&t, 50, 3, 2);
    algtest_rounds(&u, 50, 3, 2);
    double *x = malloc(t.dim * sizeof *x);
    if (!x)
        bail_out("out of memory");
    memcpy(x, algtest_model(&t), t.dim * sizeof *x);
    ok(memcmp(x, algtest_model(&u), t.dim * sizeof *x) == 0 &&
           memcmp(algtest_query(&t, t.round), algtest_query(&u, u.round),
                  t.qlen * sizeof(double)) == 0,
       "%s %s: resumed after 37 rounds (a state of %zu bytes), the same "
       "iterate and query 50 rounds later",
       name, yaml, len);
    struct aia_error err;
    void *buf = calloc(1, len + sizeof(double));
    ok(buf && u.alg->load(u.as[0], buf, len + sizeof(double), &err) < 0 &&
           strstr(err.text, "expected"),
       "a state of the wrong size is refused (%s)", buf ? err.text : "");
    double *p = buf;
    if (buf)
        p[len / sizeof(double) - 1] = -1;
    ok(buf && u.alg->load(u.as[0], buf, len, &err) < 0,
       "so is one holding a negative count or version (%s)",
       buf ? err.text : "");
    free(buf);
    free(x);
    algtest_close(&u);
    algtest_close(&t);
    plugtest_free(&a);
}

void algtest_run_async(struct algtest *t, int answers)
{
    uint64_t sent[ALGTEST_MAX_WORKERS], r = 12345;
    for (int w = 0; w < t->nworkers; w++)
        sent[w] = t->round;
    for (int k = 0; k < answers; k++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int w = (int)((r >> 33) % (uint64_t)t->nworkers);
        algtest_answer(t, w, sent[w]);
        algtest_end_round(t);
        sent[w] = t->round;
    }
}

double *algtest_state(const struct algtest *t, size_t *len)
{
    struct aia_error err;
    *len = t->alg->state_size(t->as[0]);
    double *buf = malloc(*len ? *len : 1);
    if (!buf)
        bail_out("out of memory");
    if (t->alg->save(t->as[0], buf, &err) < 0)
        bail_out("save: %s", err.text);
    return buf;
}

int algtest_same_state(const struct algtest *t, const struct algtest *u)
{
    size_t a, b;
    double *x = algtest_state(t, &a), *y = algtest_state(u, &b);
    int same = a == b && memcmp(x, y, a) == 0;
    free(x);
    free(y);
    return same;
}
