/* tree.c - a worker's part in tree aggregation.
 *
 * A round: the query comes from the parent; the worker posts a receive for
 * each child's answer, forwards the query to its children, computes its
 * own answer, waits for the children's, posts its receive for the next
 * query (the children have this one: the buffer is free) and sends the
 * parent their rows-weighted mean with the sum of their rows, so that a
 * query coming down at once finds its receive posted.  Rounds are synchronous
 * (a round ends when the whole tree answered), so when the parent passes
 * on a STOP nothing is in flight: the worker forwards it, collects its
 * children's goodbyes, says its own, and waits for rank 0's FINISH.  A
 * FINISH that comes early (the coordinator gave up on a rank that never
 * answered) ends the worker wherever it is.
 */
#include <config.h>

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "poll.h"
#include "proto.h"
#include "straggle.h"
#include "tree.h"
#include "util.h"
#include "wire.h"

int tree_rank(const struct setup *s, int t)
{
    return t == 0 ? 0 : s->ranks[t - 1];
}

struct node {
    struct setup *s;
    int parent;          /* its rank */
    int n;               /* children */
    int *child;          /* their ranks */
    size_t qbytes, abytes;
    char *qbuf;          /* the query (or STOP) from the parent */
    char *own;           /* this worker's answer */
    char **cbuf;         /* each child's answer */
    char *up;            /* the answer sent up */
    struct wire_hdr *bye; /* the children's goodbyes, after a STOP */
    MPI_Request rq, rc;  /* query from the parent, FINISH from rank 0 */
    MPI_Request *creq;   /* each child's answer */
    MPI_Request *fwd;    /* the query forwarded to each child */
    MPI_Request ureq;    /* the answer sent up */
    struct wire_hdr fin;
    struct straggle delays;
    uint64_t answers;
    double rows;         /* this worker's rows */
    double sent_at, gap; /* answer sent up; average time to the next query */
    double kids;         /* average wait for the children after our step */
};

/* A worker that rank 0's FINISH ends early leaves receives pending into
 * its buffers: they stay lent to MPI, reachable from here, until the
 * process exits (it does not finalize). */
static volatile struct node lent;

static void *buffer(size_t bytes)
{
    void *p = util_alloc_aligned(bytes);
    if (!p) {
        host_error("out of memory for message buffers; aborting the job");
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    return p;
}

/* Wait for every request of reqs (n) to complete, unless rank 0's FINISH
 * comes first: 1 then, else 0; 2 when the clock passes until first. */
static int await_all(struct node *k, MPI_Request *reqs, int n, double until)
{
    MPI_Request *all = malloc((size_t)(n + 1) * sizeof *all);
    int *idx = malloc((size_t)(n + 1) * sizeof *idx);
    MPI_Status *st = malloc((size_t)(n + 1) * sizeof *st);
    if (!all || !idx || !st) {
        host_error("out of memory; aborting the job");
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    memcpy(all, reqs, (size_t)n * sizeof *all);
    all[n] = k->rc;
    int left = 0, finished = 0;
    for (int i = 0; i < n; i++)
        left += all[i] != MPI_REQUEST_NULL;
    while (left > 0 && !finished) {
        int got = poll_some(n + 1, all, idx, st, until);
        if (got < 0) {
            host_error("MPI error in the tree; aborting the job");
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        if (got == 0 && util_now() >= until) {
            finished = 2;
            break;
        }
        for (int i = 0; i < got; i++) {
            if (idx[i] == n)
                finished = 1;
            else
                left--;
        }
    }
    memcpy(reqs, all, (size_t)n * sizeof *all);
    k->rc = all[n];
    free(all);
    free(idx);
    free(st);
    return finished;
}

/* A failure here ends the job: the tree cannot route an ERROR the way
 * the star does, and a half-answered round would never end. */
static void die(const char *what) __attribute__((noreturn));
static void die(const char *what)
{
    host_error("%s; aborting the job", what);
    MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    abort(); /* MPI_Abort does not return */
}

/* Answer the query in qbuf and send up the subtree's answer; 1 when rank
 * 0's FINISH came meanwhile. */
static int round_(struct node *k)
{
    const struct setup *s = k->s;
    const struct wire_hdr *q = (const void *)k->qbuf;
    size_t alen = s->shape.answer_len;
    uint64_t round = q->round;
    for (int c = 0; c < k->n; c++) {
        MPI_Irecv(k->cbuf[c], (int)k->abytes, MPI_BYTE, k->child[c],
                  TAG_ANSWER, MPI_COMM_WORLD, &k->creq[c]);
        MPI_Isend(k->qbuf, (int)k->qbytes, MPI_BYTE, k->child[c], TAG_QUERY,
                  MPI_COMM_WORLD, &k->fwd[c]);
    }
    struct aia_step step = {.round = q->round, .answers = k->answers};
    struct aia_error err = {""};
    double t = util_now();
    if (s->alg->worker(s->alg_s, WIRE_PAYLOAD(q), WIRE_PAYLOAD(k->own), &step,
                       &err) < 0)
    {
        char text[AIA_ERROR_LEN + 40];
        snprintf(text, sizeof text, "worker step: %s", util_error_text(&err));
        die(text);
    }
    double injected = straggle_next(&k->delays);
    if (injected > 0) {
        int idx;
        MPI_Status st;
        double until = isinf(injected) ? INFINITY : util_now() + injected;
        if (poll_some(1, &k->rc, &idx, &st, until) > 0)
            return 1;
    }
    double compute = util_now() - t;
    double waited = util_now();
    if (k->n > 0 && k->kids > 0)
        poll_expect(waited + 1.5 * k->kids + 100e-6);
    if (await_all(k, k->creq, k->n, INFINITY))
        return 1;
    if (k->n > 0) {
        waited = util_now() - waited;
        k->kids = k->kids == 0 ? waited : 0.75 * k->kids + 0.25 * waited;
    }
    /* the children answered: they have the query, and its buffer takes
     * the next one */
    MPI_Waitall(k->n, k->fwd, MPI_STATUSES_IGNORE);
    MPI_Irecv(k->qbuf, (int)k->qbytes, MPI_BYTE, k->parent, TAG_QUERY,
              MPI_COMM_WORLD, &k->rq);
    /* the rows-weighted mean of this worker's answer and its children's */
    if (k->ureq != MPI_REQUEST_NULL)
        MPI_Wait(&k->ureq, MPI_STATUS_IGNORE);
    double *acc = WIRE_PAYLOAD(k->up);
    const double *own = WIRE_PAYLOAD(k->own);
    double rows = k->rows, delay = injected;
    for (size_t j = 0; j < alen; j++)
        acc[j] = own[j] * k->rows;
    for (int c = 0; c < k->n; c++) {
        const struct wire_hdr *h = (const void *)k->cbuf[c];
        if (h->magic != WIRE_MAGIC || h->kind != WIRE_ANSWER ||
            h->round != round || h->len != alen)
            die("a child sent a malformed answer");
        const double *a = WIRE_PAYLOAD(h);
        for (size_t j = 0; j < alen; j++)
            acc[j] += a[j] * (double)h->rows;
        rows += (double)h->rows;
        compute = fmax(compute, h->compute_s);
        delay = fmax(delay, h->delay_s);
    }
    for (size_t j = 0; j < alen; j++)
        acc[j] /= rows;
    *(struct wire_hdr *)k->up =
        (struct wire_hdr){.magic = WIRE_MAGIC,
                          .kind = WIRE_ANSWER,
                          .round = round,
                          .len = alen,
                          .seq = k->answers,
                          .compute_s = compute,
                          .delay_s = delay,
                          .bytes = (uint32_t)(alen * sizeof(double)),
                          .rows = (uint64_t)rows};
    MPI_Isend(k->up, (int)k->abytes, MPI_BYTE, k->parent, TAG_ANSWER,
              MPI_COMM_WORLD, &k->ureq);
    k->answers++;
    k->sent_at = util_now();
    if (k->gap > 0)
        poll_expect(k->sent_at + 1.5 * k->gap + 100e-6);
    return 0;
}

/* The STOP came down: pass it on, collect the children's goodbyes, say
 * ours.  1 when rank 0's FINISH came meanwhile. */
static int stop(struct node *k)
{
    struct wire_hdr *bye = k->bye = calloc((size_t)k->n + 1, sizeof *bye);
    if (!bye)
        die("out of memory");
    for (int c = 0; c < k->n; c++) {
        MPI_Irecv(&bye[c], sizeof *bye, MPI_BYTE, k->child[c], TAG_ANSWER,
                  MPI_COMM_WORLD, &k->creq[c]);
        MPI_Isend(k->qbuf, (int)k->qbytes, MPI_BYTE, k->child[c], TAG_QUERY,
                  MPI_COMM_WORLD, &k->fwd[c]);
    }
    if (await_all(k, k->creq, k->n, INFINITY))
        return 1; /* receives may still be pending into bye */
    free(bye);
    k->bye = NULL;
    MPI_Waitall(k->n, k->fwd, MPI_STATUSES_IGNORE);
    if (k->ureq != MPI_REQUEST_NULL)
        MPI_Wait(&k->ureq, MPI_STATUS_IGNORE);
    struct wire_hdr mine = {.magic = WIRE_MAGIC, .kind = WIRE_BYE,
                            .seq = k->answers};
    MPI_Send(&mine, sizeof mine, MPI_BYTE, k->parent, TAG_ANSWER,
             MPI_COMM_WORLD);
    return 0;
}

int tree_worker_run(struct setup *s)
{
    struct node k = {.s = s, .rq = MPI_REQUEST_NULL, .rc = MPI_REQUEST_NULL,
                     .ureq = MPI_REQUEST_NULL};
    int me = s->windex + 1, arity = s->job->arity;
    int *nodes = malloc((size_t)arity * sizeof *nodes);
    k.child = malloc((size_t)arity * sizeof *k.child);
    k.cbuf = calloc((size_t)arity, sizeof *k.cbuf);
    k.creq = malloc((size_t)arity * sizeof *k.creq);
    k.fwd = malloc((size_t)arity * sizeof *k.fwd);
    if (!nodes || !k.child || !k.cbuf || !k.creq || !k.fwd)
        die("out of memory");
    k.parent = tree_rank(s, tree_parent(me, arity));
    k.n = tree_children(me, arity, s->nworkers, nodes);
    for (int c = 0; c < k.n; c++)
        k.child[c] = tree_rank(s, nodes[c]);
    k.qbytes = WIRE_BYTES(s->shape.query_len);
    k.abytes = WIRE_BYTES(s->shape.answer_len);
    k.qbuf = buffer(k.qbytes);
    k.own = buffer(k.abytes);
    k.up = buffer(k.abytes);
    for (int c = 0; c < k.n; c++) {
        k.cbuf[c] = buffer(k.abytes);
        k.creq[c] = k.fwd[c] = MPI_REQUEST_NULL;
    }
    k.rows = (double)s->prob->rows(s->prob_s);
    straggle_init(&k.delays, &s->job->stragglers, s->job->seed, s->rank);
    poll_ignore_signals();
    poll_configure(s->job->poll);
    MPI_Irecv(&k.fin, sizeof k.fin, MPI_BYTE, 0, TAG_CTRL, MPI_COMM_WORLD,
              &k.rc);
    int finished = 0;
    /* round_ posts each next receive */
    MPI_Irecv(k.qbuf, (int)k.qbytes, MPI_BYTE, k.parent, TAG_QUERY,
              MPI_COMM_WORLD, &k.rq);
    for (;;) {
        /* the next query comes every round: silence past
         * pool.coordinator_timeout means the coordinator is stopped or
         * gone */
        double quiet = s->job->coordinator_timeout;
        int got = await_all(&k, &k.rq, 1,
                            quiet > 0 ? util_now() + quiet : INFINITY);
        if (got == 2) {
            host_error("no word from the coordinator for %g s "
                       "(pool.coordinator_timeout): it is stopped or gone; "
                       "leaving",
                       quiet);
            run_no_finalize = 1;
            return RUN_FAILED; /* its requests stay pending: leave now */
        }
        if (got) {
            finished = 1;
            break;
        }
        poll_expect_clear();
        if (k.sent_at > 0) {
            double gap = util_now() - k.sent_at;
            k.gap = k.gap == 0 ? gap : 0.75 * k.gap + 0.25 * gap;
            k.sent_at = 0;
        }
        const struct wire_hdr *q = (const void *)k.qbuf;
        if (q->magic != WIRE_MAGIC ||
            (q->kind != WIRE_QUERY && q->kind != WIRE_STOP) ||
            (q->kind == WIRE_QUERY && q->len != s->shape.query_len))
            die("received a malformed query");
        if (q->kind == WIRE_STOP) {
            finished = stop(&k);
            break;
        }
        if (round_(&k)) {
            finished = 1;
            break;
        }
    }
    /* FINISH: at once if it came early, else after the goodbyes */
    if (!finished) {
        int idx;
        MPI_Status st;
        double until = util_now() + s->job->shutdown_timeout + 10;
        if (poll_some(1, &k.rc, &idx, &st, until) != 1) {
            host_error("no word from the coordinator after the stop; "
                       "leaving");
            run_no_finalize = 1;
        }
    }
    int status = k.fin.kind == WIRE_FINISH ? k.fin.status : RUN_FAILED;
    if (k.fin.kind != WIRE_FINISH || (k.fin.flags & WIRE_NO_FINALIZE) ||
        finished)
        run_no_finalize = 1;
    free(nodes);
    if (finished) {
        lent = k;
        return status;
    }
    /* every request has completed: the buffers are free */
    for (int c = 0; c < k.n; c++)
        free(k.cbuf[c]);
    free(k.qbuf);
    free(k.own);
    free(k.up);
    free(k.child);
    free(k.cbuf);
    free(k.creq);
    free(k.fwd);
    return status;
}
