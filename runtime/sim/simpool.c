/* simpool.c - the plugins of a simulated run, all in one process.
 *
 * The coordinator's side is set up as rank 0 of an mpirun sets it up; each
 * simulated worker gets what its rank would hold: its partition of the
 * problem, its own algorithm state, its codecs.  A plugin is loaded once
 * and instantiated N + 1 times, which is why plugins keep their state in
 * the state they return and not in globals.
 */
#include <config.h>

#include "simpool.h"
#include "latency.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session/facts.h"
#include "session/guard.h"
#include "session/session.h"
#include "core/diverge.h"
#include "core/host.h"
#include "conf/params.h"
#include "core/proto.h"
#include "core/wire.h"
#include "core/util.h"

static int refuse(const struct job *job, const struct mnode *at,
                  struct aia_error *err, const char *what)
{
    char where[256];
    params_where(where, sizeof where, job->m->path, at);
    return aia_seterr(err, "%s: %s: not supported by --simulate", where, what);
}

/* What a simulation cannot do, refused before anything is loaded. */
static int check_job(const struct job *job, int n, struct aia_error *err)
{
    if (job->pool.workers && job->pool.nworkers != (size_t)n) {
        char where[256];
        params_where(where, sizeof where, job->m->path, job->pool.workers_node);
        return aia_seterr(err,
                          "%s: pool.workers: %zu ranks listed for "
                          "--simulate %d",
                          where, job->pool.nworkers, n);
    }
    if (job->pool.shards > 1 &&
        job->simulate.coordinator == LATENCY_COORD_MEASURED)
        return refuse(job, job->pool.shards_node, err,
                      "pool.shards with simulate.coordinator: measured "
                      "(rank 0's measured work is not split over the shard "
                      "ranks: the model, or none)");
    if (job->simulate.cores > 0 && job->pool.shards > 1)
        return refuse(job, job->simulate.cores_node, err,
                      "simulate.cores with pool.shards (the shard ranks' "
                      "share of the cores is not modelled)");
    if (job->simulate.cores > 0 && job->pool.topology == JOB_TREE)
        return refuse(job, job->simulate.cores_node, err,
                      "simulate.cores in a tree (the inner nodes' share of "
                      "the cores is not modelled)");
    if (job->stragglers.ncorrupt && job->pool.topology == JOB_TREE)
        return refuse(job, job->stragglers.corrupt_node, err,
                      "stragglers.corrupt in a tree");
    return 0;
}

/* problem.data: the coordinator's rows (all of them) and each worker's,
 * read from the file as delivery: read has each rank read them. */
static int read_data(struct simpool *sp, struct aia_error *err)
{
    struct setup *s = &sp->s;
    const struct job_data *d = &s->job->data;
    char where[256], text[AIA_ERROR_LEN];
    params_where(where, sizeof where, s->job->m->path, d->key);
    struct data_opts o;
    session_data_opts(d, 0, &o);
    size_t rows, cols;
    if (!(sp->data = calloc((size_t)sp->n, sizeof *sp->data)))
        return aia_seterr(err, "out of memory");
    if (data_scan(&o, &rows, &cols, err) < 0)
        goto fail;
    if (rows < (size_t)sp->n) {
        aia_seterr(err,
                   "%zu rows for %d workers: every worker needs at "
                   "least one",
                   rows, sp->n);
        goto fail;
    }
    /* libsvm: every part gets the whole file's feature count */
    if (d->format == DATA_LIBSVM)
        o.features = cols;
    struct session_rows k = {.part = {.count = sp->n,
                                      .scheme = s->job->part.scheme,
                                      .weights = s->job->part.weights},
                             .total = rows};
    if (data_read(&o, NULL, NULL, &s->data, err) < 0)
        goto fail;
    for (int w = 0; w < sp->n; w++) {
        k.part.index = w;
        if (data_read(&o, session_rows_own, &k, &sp->data[w], err) < 0)
            goto fail;
    }
    return 0;
fail:
    snprintf(text, sizeof text, "%s", err->text);
    return aia_seterr(err, "%s: problem.data: %s", where, text);
}

/* The rows worker w holds (-1: the coordinator's, every row); NULL for a
 * generated problem. */
static const struct aia_dataset *data_of(const struct simpool *sp, int w)
{
    if (!sp->s.job->data.path)
        return NULL;
    return w < 0 ? &sp->s.data.d : &sp->data[w].d;
}

/* The rows a worker's step reads: while one runs, the problem's gradient
 * and loss add what they read to *rows_read (the simulation runs every
 * rank in this thread, one step at a time). */
static const struct aia_problem_plugin *plugin;
static size_t *rows_read;

static int counted_gradient(void *state, const double *x, const size_t *idx,
                            size_t nidx, double *g, struct aia_error *err)
{
    if (rows_read)
        *rows_read += idx ? nidx : plugin->rows(state);
    return plugin->gradient(state, x, idx, nidx, g, err);
}

static int counted_loss(void *state, const double *x, double *f,
                        struct aia_error *err)
{
    if (rows_read)
        *rows_read += plugin->rows(state);
    return plugin->loss(state, x, f, err);
}

/* Give the algorithms the problem with its reads counted. */
static void count_rows(struct simpool *sp)
{
    struct setup *s = &sp->s;
    size_t size = s->prob->h.size < sizeof sp->counted ? s->prob->h.size
                                                        : sizeof sp->counted;
    memset(&sp->counted, 0, sizeof sp->counted);
    memcpy(&sp->counted, s->prob, size);
    plugin = s->prob;
    sp->counted.gradient = counted_gradient;
    sp->counted.loss = counted_loss;
    s->prob = &sp->counted;
}

static int setup_coordinator(struct simpool *sp, struct aia_error *err)
{
    struct setup *s = &sp->s;
    if (session_load(s, 1, err) < 0 || session_check(s, err) < 0)
        return -1;
    count_rows(sp);
    if (s->job->data.path && read_data(sp, err) < 0)
        return -1;
    guard_call("the problem's open", 0);
    int rc = session_open(s, -1, s->job->data.path ? &s->data.d : NULL,
                          &s->prob_s, err);
    if (rc == 0 && s->job->data.path)
        rc = session_open_sample(s, -1, &s->data.d, err);
    guard_call(NULL, 0);
    if (rc < 0)
        return -1;
    s->dim = s->prob->dim(s->prob_s);
    return 0;
}

/* The pool's facts, as facts_gather makes them under mpirun: L the
 * row-weighted mean of the workers' own, when the algorithm asks for it
 * (the coordinator holds every row, and finds L itself when a divergence
 * message needs it). */
static void gather_facts(struct simpool *sp)
{
    struct setup *s = &sp->s;
    double sum[3] = {0, 0, 0}, least = INFINITY, most = 0;
    for (int w = 0; w < sp->n; w++) {
        double part[3], lo, hi;
        facts_part(s->prob, sp->w[w].prob_s, facts_wanted(s), part, &lo, &hi);
        for (int i = 0; i < 3; i++)
            sum[i] += part[i];
        least = fmin(least, lo);
        most = fmax(most, hi);
    }
    facts_set(s, sum, least, most);
}

static int create_coordinator(struct simpool *sp, struct aia_error *err)
{
    struct setup *s = &sp->s;
    guard_call("the algorithm's create", 0);
    int rc = session_create(s, -1, s->prob_s,
                            s->job->data.path ? &s->data.d : NULL, &s->alg_s,
                            &s->shape, err);
    guard_call(NULL, 0);
    if (rc < 0)
        return -1;
    guard_call("the wait condition's create", 0);
    rc = session_create_wait(s, err);
    guard_call(NULL, 0);
    return rc;
}

static int setup_worker(struct simpool *sp, int w, struct aia_error *err)
{
    struct setup *s = &sp->s;
    struct simworker *k = &sp->w[w];
    struct aia_shape shape;
    size_t alen = s->shape.answer_len;
    guard_call("the algorithm's create", s->ranks[w]);
    int rc = session_create(s, w, k->prob_s, data_of(sp, w), &k->alg_s,
                            &shape, err);
    guard_call(NULL, 0);
    if (rc < 0 ||
        session_same_shape(s->ranks[w], &shape, s->prob->dim(k->prob_s),
                           &s->shape, s->dim, err) < 0)
        return -1;
    s->rows[w] = s->prob->rows(k->prob_s);
    s->total_rows += s->rows[w];
    if (codec_init(&k->qc, s->job->codec.query, s->shape.query_len, 0,
                   s->job->codec.level, err) < 0 ||
        codec_init(&k->ac, s->job->codec.answer, alen,
                   codec_topk_count(s->job->codec.topk, alen),
                   s->job->codec.level, err) < 0)
        return -1;
    if (!(k->answer = malloc((alen ? alen : 1) * sizeof *k->answer)))
        return aia_seterr(err, "out of memory for worker %d", w);
    if ((s->job->codec.answer != CODEC_NONE &&
         !(k->enc = malloc(codec_bound(&k->ac) + 1))) ||
        (s->job->pool.topology == JOB_TREE &&
         !(k->up = malloc((alen ? alen : 1) * sizeof *k->up))))
        return aia_seterr(err, "out of memory for worker %d", w);
    latency_init(&k->lat, s->job, w, s->ranks[w], s->rows[w],
                 s->job->simulate.row_s);
    return 0;
}

int simpool_open(struct simpool *sp, struct job *job, int n,
                 struct aia_error *err)
{
    memset(sp, 0, sizeof *sp);
    struct setup *s = &sp->s;
    s->job = job;
    s->windex = -1;
    sp->n = n;
    if (check_job(job, n, err) < 0)
        return -1;
    /* the ranks of an mpirun with every rank the pool lists */
    s->size = n + (job->pool.shards > 1 ? job->pool.shards : 1);
    for (size_t i = 0; job->pool.workers && i < job->pool.nworkers; i++)
        if (job->pool.workers[i] >= s->size && job->pool.workers[i] < INT_MAX)
            s->size = (int)job->pool.workers[i] + 1;
    if (session_pool(s, err) < 0)
        return -1;
    s->rows = calloc((size_t)n, sizeof *s->rows);
    sp->w = calloc((size_t)n, sizeof *sp->w);
    if (!s->rows || !sp->w)
        return aia_seterr(err, "out of memory for %d workers", n);
    if (setup_coordinator(sp, err) < 0)
        return -1;
    for (int w = 0; w < n; w++) {
        guard_call("the problem's open", s->ranks[w]);
        int rc = session_open(s, w, data_of(sp, w), &sp->w[w].prob_s, err);
        guard_call(NULL, 0);
        if (rc < 0)
            return -1;
    }
    guard_call("the problem's facts (smoothness, rows)", 0);
    gather_facts(sp);
    guard_call(NULL, 0);
    if (create_coordinator(sp, err) < 0)
        return -1;
    /* pool.shards: the algorithm runs whole; the slices say what each
     * coordinator rank's share of its work and bytes would be */
    if (s->shards > 1 && session_slices(s, s->dim, err) < 0)
        return -1;
    session_identity(s); /* its checkpoints resume under mpirun too */
    for (int w = 0; w < n; w++)
        if (setup_worker(sp, w, err) < 0)
            return -1;
    if (job->codec.query != CODEC_NONE &&
        !(sp->qdec = malloc((s->shape.query_len + 1) * sizeof *sp->qdec)))
        return aia_seterr(err, "out of memory");
    return 0;
}

void simpool_close(struct simpool *sp)
{
    struct setup *s = &sp->s;
    for (int w = 0; sp->w && w < sp->n; w++) {
        struct simworker *k = &sp->w[w];
        if (k->alg_s)
            s->alg->destroy(k->alg_s);
        if (k->prob_s)
            s->prob->close(k->prob_s);
        codec_free(&k->qc);
        codec_free(&k->ac);
        free(k->answer);
        free(k->enc);
        free(k->up);
    }
    free(sp->w);
    free(sp->qdec);
    for (int w = 0; sp->data && w < sp->n; w++)
        data_free(&sp->data[w]);
    free(sp->data);
    session_close(s);
    memset(sp, 0, sizeof *sp);
}

int simpool_answer(struct simpool *sp, int w, const double *query,
                   const void *qenc, size_t qbytes, uint64_t round,
                   struct aia_error *err)
{
    const struct setup *s = &sp->s;
    struct simworker *k = &sp->w[w];
    struct aia_error e;
    if (qenc) {
        if (codec_decode(&k->qc, qenc, qbytes, sp->qdec, &e) < 0)
            return aia_seterr(err,
                              "rank %d: a query that does not decode: "
                              "%s",
                              s->ranks[w], e.text);
        query = sp->qdec;
    }
    struct aia_step step = {.round = round, .answers = k->answers};
    e.text[0] = '\0';
    size_t read = 0;
    rows_read = &read;
    guard_call("the algorithm's worker step", s->ranks[w]);
    int rc = s->alg->worker(k->alg_s, query, k->answer, &step, &e);
    guard_call(NULL, 0);
    rows_read = NULL;
    k->work = read > 0 && s->rows[w] > 0 ? (double)read / (double)s->rows[w]
                                          : 1.0;
    if (rc < 0)
        return aia_seterr(err, "rank %d: algorithm '%s': worker step: %s",
                          s->ranks[w], s->alg->h.name, util_error_text(&e));
    /* as rank 0 says it of an answer it receives (lead_nonfinite) */
    size_t alen = s->shape.answer_len, bad = wire_nonfinite(k->answer, alen);
    if (bad < alen) {
        char text[AIA_ERROR_LEN];
        return aia_seterr(err, "%s",
                          diverge_answer(text, sizeof text, s->ranks[w],
                                         s->alg->h.name, round, bad,
                                         k->answer[bad],
                                         facts_smoothness((struct setup *)s)));
    }
    k->bytes = alen * sizeof(double);
    if (k->enc && codec_encode(&k->ac, k->answer, k->enc, &k->bytes, &e) < 0)
        return aia_seterr(err, "rank %d: answer to round %llu: %s", s->ranks[w],
                          (unsigned long long)round, e.text);
    k->answers++;
    return 0;
}

int simpool_measure(struct simpool *sp, const double *query, double *row_s,
                    struct aia_error *err)
{
    struct setup *s = &sp->s;
    struct simworker *k = &sp->w[0];
    double best = INFINITY;
    for (int i = 0; i < 5; i++) {
        double t = util_now();
        if (simpool_answer(sp, 0, query, NULL, 0, 1, err) < 0)
            return -1;
        best = fmin(best, util_now() - t);
    }
    /* per row read: a step of a sub-partition or a batch reads fewer */
    double read = k->work * (double)s->rows[0];
    *row_s = read > 0 ? best / read : 0;
    /* worker 0 starts afresh, as if it had not answered */
    s->alg->destroy(k->alg_s);
    k->alg_s = NULL;
    struct aia_shape shape;
    if (session_create(s, 0, k->prob_s, data_of(sp, 0), &k->alg_s, &shape,
                       err) < 0)
        return -1;
    k->answers = 0;
    /* top-k's residual too */
    size_t alen = s->shape.answer_len;
    codec_free(&k->ac);
    return codec_init(&k->ac, s->job->codec.answer, alen,
                      codec_topk_count(s->job->codec.topk, alen),
                      s->job->codec.level, err);
}

double simpool_subtree(struct simpool *sp, int w, const double *query,
                       uint64_t round, double sent, struct simsub *sub,
                       struct aia_error *err)
{
    const struct setup *s = &sp->s;
    struct simworker *k = &sp->w[w];
    size_t alen = s->shape.answer_len;
    size_t abytes = sizeof(struct wire_hdr) + alen * sizeof(double);
    int arity = s->job->pool.arity < sp->n ? s->job->pool.arity : sp->n;
    if (simpool_answer(sp, w, query, NULL, 0, round, err) < 0)
        return NAN;
    int *child = malloc((size_t)arity * sizeof *child);
    if (!child)
        return aia_seterr(err, "out of memory"), NAN;
    struct latency_draw d;
    latency_next(&k->lat,
                 sizeof(struct wire_hdr) + s->shape.query_len * sizeof(double),
                 abytes, k->work, &d);
    double at = sent + d.down, leave = at + d.compute + d.delay;
    sub->compute_s = d.compute + d.delay;
    sub->delay_s = d.delay;
    sub->rows = (double)s->rows[w];
    for (size_t j = 0; j < alen; j++)
        k->up[j] = k->answer[j] * sub->rows;
    int nc = tree_children(w + 1, arity, sp->n, child);
    for (int c = 0; c < nc; c++) {
        struct simsub cs;
        int cw = child[c] - 1;
        /* the query goes on as it arrives */
        double back = simpool_subtree(sp, cw, query, round, at, &cs, err);
        if (isnan(back)) {
            free(child);
            return NAN;
        }
        const double *a = sp->w[cw].up;
        for (size_t j = 0; j < alen; j++)
            k->up[j] += a[j] * cs.rows;
        sub->rows += cs.rows;
        sub->compute_s = fmax(sub->compute_s, cs.compute_s);
        sub->delay_s = fmax(sub->delay_s, cs.delay_s);
        leave = fmax(leave, back);
    }
    free(child);
    for (size_t j = 0; j < alen; j++)
        k->up[j] /= sub->rows;
    k->bytes = alen * sizeof(double);
    return leave + d.up;
}
