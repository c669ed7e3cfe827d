/* tree.c - a worker's part in tree aggregation.
 *
 * A round: the query comes from the parent; the worker forwards it to its
 * children, computes its own answer, waits for the children's, posts its
 * receive for the next query (the children have this one: the buffer is
 * free) and sends the parent their rows-weighted mean with the sum of
 * their rows, so that a query coming down at once finds its receive
 * posted.
 *
 * A child is untrusted whatever it sends, as a worker is to rank 0
 * (listen.c, coord.c): each child's message is probed before it is
 * received (a receive posted in advance would take a message larger than
 * its buffer, which Open MPI answers by crashing), received into a
 * buffer of its size, and checked with wire_check as rank 0 checks its
 * workers' (size, kind, round, lengths, times, rows; a well-formed
 * answer holding NaN or infinity is the method's divergence, reported up
 * naming the child, the round and the index).  A
 * bad message is named (sender, why, size) here and reported up as this
 * worker's failure, an ERROR in place of its answer; a parent passes a
 * child's ERROR up unchanged, so rank 0 stops the run with exit status 1
 * naming both ranks, and the tree stops as usual.  The tree cannot go on
 * without a subtree (its rounds wait for every worker, and a parent
 * cannot tell its answer which rows are missing), so failing the run is
 * what is left.  The distrusted child is still sent the STOP, and what
 * it sends until its goodbye is dropped.  A message too large even to
 * drop (over TREE_DISCARD_MAX) would leave its sender stuck in its send
 * and the job unable to finalize: the job is aborted then, naming it.
 *
 * Rounds are synchronous (a round ends when the whole tree answered), so
 * when the parent passes on a STOP nothing is in flight: the worker
 * forwards it, collects its children's goodbyes, says its own, and waits
 * for rank 0's FINISH.  A FINISH that comes early (the coordinator gave
 * up on a rank that never answered) ends the worker wherever it is.
 */
#include <config.h>

#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bell.h"
#include "core/diverge.h"
#include "core/host.h"
#include "poll.h"
#include "core/proto.h"
#include "run.h"
#include "session/straggle.h"
#include "tree.h"
#include "core/util.h"
#include "core/wire.h"

int tree_rank(const struct setup *s, int t)
{
    return t == 0 ? 0 : s->ranks[t - 1];
}

struct node {
    struct setup *s;
    int parent; /* its rank */
    int n;      /* children */
    int *child; /* their ranks */
    size_t qbytes, abytes;
    size_t rbytes;             /* the most a child's message may be: an answer,
                                  or an ERROR with its text */
    char *qbuf;                /* the query (or STOP) from the parent */
    char *own;                 /* this worker's answer */
    char **cbuf;               /* each child's latest message */
    char *up;                  /* the answer (or ERROR) sent up; rbytes */
    unsigned char *heard;      /* this round's message (after a STOP: the
                                  goodbye) taken from each child */
    unsigned char *distrusted; /* each child */
    int stopping;              /* a STOP came: goodbyes are expected */
    int finished;              /* rank 0's FINISH came */
    uint64_t round;            /* the round being answered */
    char report[WIRE_ERROR_TEXT]; /* the failure sent up; "": none */
    MPI_Request rq, rc; /* query from the parent, FINISH from rank 0 */
    MPI_Request *fwd;   /* the query forwarded to each child */
    MPI_Request ureq;   /* the answer sent up */
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

/* Rank 0's control message came (k->rc completed): a keep-alive (rank 0
 * waits on other workers) is taken and the receive posted again, 0; a
 * FINISH, 1. */
static int control(struct node *k)
{
    if (k->fin.magic != WIRE_MAGIC || k->fin.kind != WIRE_ALIVE)
        return 1;
    MPI_Irecv(&k->fin, sizeof k->fin, MPI_BYTE, 0, TAG_CTRL, MPI_COMM_WORLD,
              &k->rc);
    return 0;
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
            if (idx[i] != n) {
                left--;
                continue;
            }
            k->rc = all[n];
            if (control(k)) {
                finished = 1;
                continue;
            }
            all[n] = k->rc;
            /* rank 0 is there: a bound on its silence starts again */
            if (isfinite(until))
                until = util_now() + k->s->job->pool.coordinator_timeout;
        }
    }
    memcpy(reqs, all, (size_t)n * sizeof *all);
    k->rc = all[n];
    free(all);
    free(idx);
    free(st);
    return finished;
}

/* A failure of this worker's own ends the job: a half-answered round
 * would never end. */
static void die(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    char text[AIA_ERROR_LEN + 80];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    host_error("%s; aborting the job", text);
    MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    abort(); /* MPI_Abort does not return */
}

/* The most bytes of a child's message received only to be dropped, as
 * rank 0's LISTEN_DISCARD_MAX. */
#define TREE_DISCARD_MAX ((size_t)1 << 30)

/* Why child c's message (bytes, in its buffer) cannot be trusted, or
 * NULL when it can; the text is static or written into why.  A
 * well-formed answer holding a value that is not finite is trusted, and
 * becomes this worker's report up: the method diverged (the one check
 * of a child's values; the child does not check what it sends). */
static const char *check(struct node *k, int c, int bytes, char *why,
                         size_t whylen)
{
    const struct wire_hdr *h = (const void *)k->cbuf[c];
    struct wire_expect e = {.answer_len = k->s->shape.answer_len};
    const char *bad = wire_check(h, (size_t)bytes, k->rbytes, &e, why, whylen);
    if (bad)
        return bad;
    if (k->stopping)
        return h->kind == WIRE_BYE ? NULL : "a message after it was stopped";
    if (h->kind == WIRE_BYE)
        return "a goodbye before it was stopped";
    if (h->kind != WIRE_ANSWER)
        return NULL; /* an ERROR: passed up */
    if (h->round != k->round)
        return "an answer to a query it was not sent";
    if (h->rows == 0 || h->rows > ((uint64_t)1 << 53))
        return "an answer of no rows or of more rows than a job can have";
    size_t at;
    const double *x = wire_answer_values(NULL, h, NULL, &at, why, whylen);
    if (!x)
        return why;
    if (at < h->len && !k->report[0]) /* not malformed: diverged */
        diverge_answer(k->report, sizeof k->report, k->child[c],
                       k->s->alg->h.name, h->round, at, x[at],
                       k->s->facts.smoothness);
    return NULL;
}

/* Receive child c's probed message of bytes and take it: a round's
 * answer or ERROR, a goodbye after the STOP; a bad one distrusts the
 * child and, in a round, becomes this worker's report up. */
static void take(struct node *k, int c, MPI_Message *msg, int bytes)
{
    int child = k->child[c], rc;
    char why[160];
    if (bytes < 0 || (size_t)bytes > TREE_DISCARD_MAX)
        die("rank %d sent a message too large to receive (over %zu bytes)",
            child, TREE_DISCARD_MAX);
    if ((size_t)bytes <= k->rbytes) {
        rc = MPI_Mrecv(k->cbuf[c], bytes, MPI_BYTE, msg, MPI_STATUS_IGNORE);
    } else { /* into a buffer of its own, and dropped */
        void *buf = malloc(bytes ? (size_t)bytes : 1);
        if (!buf)
            die("out of memory for a message of %d bytes from rank %d", bytes,
                child);
        rc = MPI_Mrecv(buf, bytes, MPI_BYTE, msg, MPI_STATUS_IGNORE);
        free(buf);
    }
    if (rc != MPI_SUCCESS)
        die("MPI error while receiving from rank %d", child);
    const char *bad = check(k, c, bytes, why, sizeof why);
    const struct wire_hdr *h = (const void *)k->cbuf[c];
    if (k->distrusted[c]) {
        /* dropped, up to its goodbye */
        k->heard[c] = k->stopping && !bad;
        return;
    }
    if (bad) {
        k->distrusted[c] = 1;
        host_error("rank %d sent %s (%d bytes): not trusted; %s", child, bad,
                   bytes, k->stopping ? "dropped" : "reporting it up");
        if (!k->stopping && !k->report[0])
            snprintf(k->report, sizeof k->report, "rank %d sent %s (%d bytes)",
                     child, bad, bytes);
        k->heard[c] = !k->stopping;
        return;
    }
    k->heard[c] = 1;
    if (h->kind == WIRE_ERROR && !k->report[0])
        snprintf(k->report, sizeof k->report, "%s",
                 wire_error_text(k->cbuf[c], (size_t)bytes));
}

/* poll_wait's test: take what the children not heard yet have sent; 1
 * when rank 0's FINISH came. */
static int probe(void *ctx)
{
    struct node *k = ctx;
    int flag = 0, got = 0;
    if (k->rc != MPI_REQUEST_NULL) {
        if (MPI_Test(&k->rc, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (flag && control(k)) {
            k->finished = 1;
            return 1;
        }
    }
    for (int c = 0; c < k->n; c++) {
        MPI_Message msg;
        MPI_Status st;
        int bytes = 0;
        if (k->heard[c])
            continue;
        if (MPI_Improbe(k->child[c], TAG_ANSWER, MPI_COMM_WORLD, &flag, &msg,
                        &st) != MPI_SUCCESS)
            return -1;
        if (!flag)
            continue;
        if (MPI_Get_count(&st, MPI_BYTE, &bytes) != MPI_SUCCESS ||
            bytes == MPI_UNDEFINED)
            bytes = -1;
        take(k, c, &msg, bytes);
        got++;
    }
    return got;
}

/* Take a message from every child: the round's answers, or after a STOP
 * the goodbyes; 1 when rank 0's FINISH came first. */
static int collect(struct node *k)
{
    memset(k->heard, 0, (size_t)k->n);
    for (;;) {
        int left = 0;
        for (int c = 0; c < k->n; c++)
            left += !k->heard[c];
        if (!left)
            return 0;
        if (poll_wait(probe, k, INFINITY) < 0)
            die("MPI error in the tree");
        if (k->finished)
            return 1;
    }
}

/* The query (or STOP) forwarded to the children has been received by
 * them; a distrusted child's send is let go, never waited on (the
 * buffer is only read). */
static void forwarded(struct node *k)
{
    for (int c = 0; c < k->n; c++)
        if (k->distrusted[c] && k->fwd[c] != MPI_REQUEST_NULL)
            MPI_Request_free(&k->fwd[c]);
    /* one MPI_Wait each: MPICH's MPI_STATUSES_IGNORE passed to
     * MPI_Waitall's array parameter fails gcc 12's -Wstringop-overflow */
    for (int c = 0; c < k->n; c++)
        MPI_Wait(&k->fwd[c], MPI_STATUS_IGNORE);
}

/* Send up this subtree's failure (k->report) in place of its answer. */
static void send_report(struct node *k)
{
    size_t len = strlen(k->report) + 1;
    *(struct wire_hdr *)k->up =
        (struct wire_hdr){.magic = WIRE_MAGIC, .kind = WIRE_ERROR, .len = len};
    memcpy(k->up + sizeof(struct wire_hdr), k->report, len);
    bell_isend(k->up, (int)(sizeof(struct wire_hdr) + len), k->parent,
               TAG_ANSWER, &k->ureq);
}

/* Pass the message in qbuf (a query, or the STOP) on to the children. */
static void forward(struct node *k)
{
    for (int c = 0; c < k->n; c++)
        bell_isend(k->qbuf, (int)k->qbytes, k->child[c], TAG_QUERY,
                   &k->fwd[c]);
}

/* Answer the query in qbuf and send up the subtree's answer; 1 when rank
 * 0's FINISH came meanwhile. */
static int round_(struct node *k)
{
    const struct setup *s = k->s;
    const struct wire_hdr *q = (const void *)k->qbuf;
    size_t alen = s->shape.answer_len;
    uint64_t round = k->round = q->round;
    forward(k);
    struct aia_step step = {.round = q->round, .answers = k->answers};
    struct aia_error err = {""};
    double t = util_now();
    if (s->alg->worker(s->alg_s, WIRE_PAYLOAD(q), WIRE_PAYLOAD(k->own), &step,
                       &err) < 0) {
        die("worker step: %s", util_error_text(&err));
    }
    double injected = straggle_next(&k->delays);
    if (injected > 0) {
        int idx;
        MPI_Status st;
        double until = isinf(injected) ? INFINITY : util_now() + injected;
        while (poll_some(1, &k->rc, &idx, &st, until) > 0)
            if (control(k))
                return 1;
    }
    double compute = util_now() - t;
    double waited = util_now();
    if (k->n > 0 && k->kids > 0)
        poll_expect(waited + 1.5 * k->kids + 100e-6);
    if (collect(k))
        return 1;
    if (k->n > 0) {
        waited = util_now() - waited;
        k->kids = k->kids == 0 ? waited : 0.75 * k->kids + 0.25 * waited;
    }
    /* the children answered: they have the query, and its buffer takes
     * the next one */
    forwarded(k);
    MPI_Irecv(k->qbuf, (int)k->qbytes, MPI_BYTE, k->parent, TAG_QUERY,
              MPI_COMM_WORLD, &k->rq);
    if (k->ureq != MPI_REQUEST_NULL)
        MPI_Wait(&k->ureq, MPI_STATUS_IGNORE);
    if (k->report[0]) {
        send_report(k);
        return 0;
    }
    /* the rows-weighted mean of this worker's answer and its children's
     * (each checked by take) */
    double *acc = WIRE_PAYLOAD(k->up);
    const double *own = WIRE_PAYLOAD(k->own);
    double rows = k->rows, delay = injected;
    for (size_t j = 0; j < alen; j++)
        acc[j] = own[j] * k->rows;
    for (int c = 0; c < k->n; c++) {
        const struct wire_hdr *h = (const void *)k->cbuf[c];
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
    bell_isend(k->up, (int)k->abytes, k->parent, TAG_ANSWER, &k->ureq);
    k->answers++;
    k->sent_at = util_now();
    if (k->gap > 0)
        poll_expect_yield(k->sent_at + 1.5 * k->gap + 100e-6);
    return 0;
}

/* The STOP came down: pass it on, collect the children's goodbyes, say
 * ours.  1 when rank 0's FINISH came meanwhile. */
static int stop(struct node *k)
{
    k->stopping = 1;
    forward(k);
    if (collect(k))
        return 1;
    forwarded(k);
    if (k->ureq != MPI_REQUEST_NULL)
        MPI_Wait(&k->ureq, MPI_STATUS_IGNORE);
    struct wire_hdr mine = {
        .magic = WIRE_MAGIC, .kind = WIRE_BYE, .seq = k->answers};
    bell_send(&mine, sizeof mine, k->parent, TAG_ANSWER);
    return 0;
}

int tree_worker_run(struct setup *s)
{
    struct node k = {.s = s,
                     .rq = MPI_REQUEST_NULL,
                     .rc = MPI_REQUEST_NULL,
                     .ureq = MPI_REQUEST_NULL};
    int me = s->windex + 1, arity = s->job->pool.arity;
    int *nodes = malloc((size_t)arity * sizeof *nodes);
    k.child = malloc((size_t)arity * sizeof *k.child);
    k.cbuf = calloc((size_t)arity, sizeof *k.cbuf);
    k.heard = calloc((size_t)arity, 1);
    k.distrusted = calloc((size_t)arity, 1);
    k.fwd = malloc((size_t)arity * sizeof *k.fwd);
    if (!nodes || !k.child || !k.cbuf || !k.heard || !k.distrusted || !k.fwd)
        die("out of memory");
    k.parent = tree_rank(s, tree_parent(me, arity));
    k.n = tree_children(me, arity, s->nworkers, nodes);
    for (int c = 0; c < k.n; c++)
        k.child[c] = tree_rank(s, nodes[c]);
    k.qbytes = WIRE_BYTES(s->shape.query_len);
    k.abytes = WIRE_BYTES(s->shape.answer_len);
    k.rbytes = k.abytes;
    if (k.rbytes < sizeof(struct wire_hdr) + WIRE_ERROR_TEXT)
        k.rbytes = sizeof(struct wire_hdr) + WIRE_ERROR_TEXT;
    k.qbuf = buffer(k.qbytes);
    k.own = buffer(k.abytes);
    k.up = buffer(k.rbytes);
    for (int c = 0; c < k.n; c++) {
        k.cbuf[c] = buffer(k.rbytes);
        k.fwd[c] = MPI_REQUEST_NULL;
    }
    k.rows = (double)s->prob->rows(s->prob_s);
    straggle_init(&k.delays, &s->job->stragglers, s->job->seed, s->rank);
    guard_ignore_signals();
    poll_configure(s->job->pool.poll, s->job->pool.wake);
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
        double quiet = s->job->pool.coordinator_timeout;
        int got =
            await_all(&k, &k.rq, 1, quiet > 0 ? util_now() + quiet : INFINITY);
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
        if (q->kind == WIRE_QUERY && k.report[0])
            die("a query came after this worker reported a failure");
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
        double until = util_now() + s->job->pool.shutdown_timeout + 10;
        int n;
        /* a keep-alive may come after the STOP, which came another way */
        while ((n = poll_some(1, &k.rc, &idx, &st, until)) == 1 &&
               !control(&k))
            ;
        if (n != 1) {
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
    free(k.heard);
    free(k.distrusted);
    free(k.fwd);
    return status;
}
