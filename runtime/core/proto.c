/* proto.c - the coordinator's protocol decisions, without MPI or a clock:
 * which answers are trusted, fresh or stale, when a round and an epoch
 * end, who gets the next query, and which stop rule holds (see proto.h
 * for the events and the decisions). */
#include <config.h>

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

/* ---------------------------------------------------------- stop rules */

static int check_iterations(const struct proto *p,
                            const struct proto_limits *lim,
                            const struct proto_measure *m)
{
    (void)m;
    return lim->iterations && p->iteration >= lim->iterations;
}

static int check_epochs(const struct proto *p, const struct proto_limits *lim,
                        const struct proto_measure *m)
{
    (void)m;
    return lim->epochs && p->epoch >= lim->epochs;
}

static int check_precision(const struct proto *p,
                           const struct proto_limits *lim,
                           const struct proto_measure *m)
{
    (void)p;
    return lim->precision > 0 && m->change(m->ctx) <= lim->precision;
}

/* The loss is measured once every stop.check_every iterations (the
 * measure keeps it for the iteration, so loss and gap share it). */
static int loss_due(const struct proto *p, const struct proto_limits *lim)
{
    return lim->check_every > 0 && p->iteration % lim->check_every == 0;
}

static int check_loss(const struct proto *p, const struct proto_limits *lim,
                      const struct proto_measure *m)
{
    double loss;
    if (lim->loss <= 0 || !loss_due(p, lim))
        return 0;
    if (m->loss(m->ctx, &loss) < 0)
        return -1;
    return loss <= lim->loss;
}

static int check_gap(const struct proto *p, const struct proto_limits *lim,
                     const struct proto_measure *m)
{
    double loss;
    if (lim->gap <= 0 || !loss_due(p, lim))
        return 0;
    if (m->loss(m->ctx, &loss) < 0)
        return -1;
    return proto_gap(loss, m->fopt) <= lim->gap;
}

double proto_gap(double loss, double fopt)
{
    return (loss - fopt) / fmax(fabs(fopt), PROTO_GAP_FLOOR);
}

/* In the order they are checked. */
/* the rows proto_stop_check's path without measures names */
enum { RULE_ITERATIONS, RULE_TIME, RULE_EPOCHS };

const struct proto_stop_rule proto_stop_rules[] = {
    [RULE_ITERATIONS] = {"iterations", check_iterations,
                         "the iteration limit was reached", 1},
    [RULE_TIME] = {"time", NULL, "the time limit passed", 1},
    [RULE_EPOCHS] = {"epochs", check_epochs, "the epoch limit was reached", 1},
    {"precision", check_precision,
     "the query changed less than the precision asked for", 1},
    {"loss", check_loss, "the loss reached its target", 1},
    {"gap", check_gap, "the relative suboptimality reached its target", 1},
    {"signal", NULL, "a signal stopped the run", 0},
    {"error", NULL, "an error stopped the run", 0},
    {NULL, NULL, NULL, 0},
};

const struct proto_stop_rule *proto_stop_rule(const char *name)
{
    for (const struct proto_stop_rule *r = proto_stop_rules; r->name; r++)
        if (strcmp(r->name, name) == 0)
            return r;
    return NULL;
}

const struct proto_stop_rule *proto_stop_check(struct proto *p,
                                               const struct proto_limits *lim,
                                               const struct proto_measure *m)
{
    if (p->why)
        return p->why;
    if (!(lim->precision > 0) && !(lim->loss > 0) && !(lim->gap > 0)) {
        /* no rule needs a measure (the usual round): the two counts,
         * in the table's order, without a call each rule */
        const struct proto_stop_rule *r =
            check_iterations(p, lim, m) ? &proto_stop_rules[RULE_ITERATIONS]
            : check_epochs(p, lim, m)   ? &proto_stop_rules[RULE_EPOCHS]
                                        : NULL;
        return r ? (p->why = r) : NULL;
    }
    for (const struct proto_stop_rule *r = proto_stop_rules; r->name; r++) {
        if (!r->check)
            continue;
        int got = r->check(p, lim, m);
        if (got < 0) {
            proto_fail(p);
            return p->why;
        }
        if (got) {
            p->why = r;
            return r;
        }
    }
    return NULL;
}

void proto_stop(struct proto *p, const char *name)
{
    if (!p->why)
        p->why = proto_stop_rule(name);
}

int proto_failed(const struct proto *p)
{
    return p->why && strcmp(p->why->name, "error") == 0;
}

int proto_fail(struct proto *p)
{
    if (proto_failed(p))
        return 0;
    p->why = proto_stop_rule("error");
    return 1;
}

int proto_time_up(const struct proto *p, const struct proto_limits *lim,
                  double now)
{
    return lim->time > 0 && now >= p->t0 + lim->time;
}

int proto_time_stop(struct proto *p, const struct proto_limits *lim, double now)
{
    if (!proto_time_up(p, lim, now))
        return 0;
    /* The answers of a round the limit cuts are absorbed, but the round
     * makes no iteration: with nwait all a partial round is a step with
     * gradients missing, a jump in the history's last row. */
    proto_stop(p, "time");
    return 1;
}

/* ---------------------------------------------------------- the tree */

int tree_parent(int t, int arity)
{
    return (t - 1) / arity;
}

int tree_children(int t, int arity, int nworkers, int *children)
{
    int n = 0;
    for (long c = (long)t * arity + 1;
         c <= (long)t * arity + arity && c <= nworkers; c++)
        children[n++] = (int)c;
    return n;
}

/* ---------------------------------------------------------- the pool */

/* Take w out of the queue of busy workers, if it is in it. */
static void unqueue(struct proto *p, int w)
{
    if (p->older[w] == -2)
        return;
    if (p->older[w] >= 0)
        p->newer[p->older[w]] = p->newer[w];
    else
        p->oldest = p->newer[w];
    if (p->newer[w] >= 0)
        p->older[p->newer[w]] = p->older[w];
    else
        p->newest = p->older[w];
    p->older[w] = p->newer[w] = -2;
}

/* Keep w's bit of the idle set true to alive and busy, and w in the
 * queue of busy workers only while it is busy and alive: called wherever
 * either changes (proto_sent queues it). */
static void mark(struct proto *p, int w)
{
    uint64_t bit = (uint64_t)1 << (w % 64), *word = &p->idle[w / 64];
    int was = (*word & bit) != 0;
    if (p->alive[w] && !p->busy[w]) {
        *word |= bit;
        p->nidle += !was;
        if (w < p->idle_lo)
            p->idle_lo = w;
    } else {
        *word &= ~bit;
        p->nidle -= was;
        if (p->nidle == 0)
            p->idle_lo = p->n; /* the next one to be idle is the lowest */
    }
    if (!(p->alive[w] && p->busy[w]))
        unqueue(p, w);
}

int proto_init(struct proto *p, int n, int mode, int arity, const int *ranks,
               struct aia_error *err)
{
    size_t m = n > 0 ? (size_t)n : 1;
    *p = (struct proto){.n = n, .mode = mode, .ranks = ranks, .idle_lo = n};
    p->repochs = calloc(m, sizeof *p->repochs);
    p->sent = calloc(m, sizeof *p->sent);
    p->busy = calloc(m, 1);
    p->alive = calloc(m, 1);
    p->fresh_now = calloc(m, 1);
    p->in_epoch = calloc(m, 1);
    p->direct = calloc(m, 1);
    p->left = calloc(m, 1);
    p->idle = calloc((m + 63) / 64, sizeof *p->idle);
    p->fresh_list = calloc(m, sizeof *p->fresh_list);
    p->older = malloc(m * sizeof *p->older);
    p->newer = malloc(m * sizeof *p->newer);
    p->sent_at = calloc(m, sizeof *p->sent_at);
    p->latency = calloc(m, sizeof *p->latency);
    if (!p->repochs || !p->sent || !p->busy || !p->alive || !p->fresh_now ||
        !p->in_epoch || !p->direct || !p->left || !p->idle ||
        !p->fresh_list || !p->older || !p->newer || !p->sent_at ||
        !p->latency) {
        proto_free(p);
        return aia_seterr(err, "out of memory for %d workers", n);
    }
    if (arity > 0) {
        /* In a tree the coordinator talks to its children only: the
         * others are reached through them. */
        for (int i = 0; i < arity && i < n; i++)
            p->direct[i] = 1;
    } else {
        memset(p->direct, 1, (size_t)n);
    }
    p->oldest = p->newest = -1;
    for (int w = 0; w < n; w++) {
        p->older[w] = p->newer[w] = -2;
        p->alive[w] = p->direct[w];
        p->live += p->direct[w];
        mark(p, w);
    }
    return 0;
}

void proto_free(struct proto *p)
{
    free(p->repochs);
    free(p->sent);
    free(p->busy);
    free(p->alive);
    free(p->fresh_now);
    free(p->in_epoch);
    free(p->direct);
    free(p->left);
    free(p->idle);
    free(p->fresh_list);
    free(p->older);
    free(p->newer);
    free(p->sent_at);
    free(p->latency);
    p->repochs = p->sent = NULL;
    p->busy = p->alive = p->fresh_now = p->in_epoch = NULL;
    p->direct = p->left = NULL;
    p->idle = NULL;
    p->fresh_list = NULL;
    p->older = p->newer = NULL;
    p->sent_at = p->latency = NULL;
}

void proto_start(struct proto *p, uint64_t round, double now, double elapsed)
{
    p->round = round;
    p->t0 = p->round_t0 = now - elapsed;
}

void proto_sent(struct proto *p, int w, double now)
{
    p->busy[w] = 1;
    mark(p, w);
    p->sent[w] = p->round;
    p->sent_at[w] = now;
    if (p->alive[w]) { /* the newest send */
        unqueue(p, w);
        p->older[w] = p->newest;
        p->newer[w] = -1;
        if (p->newest >= 0)
            p->newer[p->newest] = w;
        else
            p->oldest = w;
        p->newest = w;
    }
}

enum proto_verdict proto_check(const struct proto *p, int w, uint64_t round)
{
    if (p->left[w] & PROTO_LEFT_UNTRUSTED)
        return PROTO_DISCARD;
    if (!p->busy[w] || round != p->sent[w])
        return PROTO_DISTRUST;
    return p->why ? PROTO_LATE : PROTO_ACCEPT;
}

uint64_t proto_answer(struct proto *p, int w, uint64_t round, double now,
                      double *rtt)
{
    *rtt = now - p->sent_at[w];
    p->busy[w] = 0;
    mark(p, w);
    p->repochs[w] = round;
    /* a moving average that follows a worker whose speed changes */
    p->latency[w] =
        p->latency[w] == 0 ? *rtt : 0.75 * p->latency[w] + 0.25 * *rtt;
    return p->round - round;
}

/* An epoch ends when every live worker has answered in it. */
static void close_epoch(struct proto *p)
{
    if (p->live == 0 || p->epoch_count < p->live)
        return;
    p->epoch++;
    p->epoch_count = 0;
    memset(p->in_epoch, 0, (size_t)p->n);
}

enum proto_next proto_absorbed(struct proto *p, int w, uint64_t staleness)
{
    p->arrived++;
    if (!p->in_epoch[w]) {
        p->in_epoch[w] = 1;
        p->epoch_count++;
        close_epoch(p);
    }
    if (p->mode == PROTO_ASYNC)
        return PROTO_END_ROUND;
    if (staleness == 0) {
        p->fresh++;
        if (!p->fresh_now[w])
            p->fresh_list[p->fresh_marked++] = w;
        p->fresh_now[w] = 1;
        return PROTO_WAIT;
    }
    return PROTO_RESEND;
}

void proto_late(struct proto *p, int w)
{
    p->busy[w] = 0;
    mark(p, w);
}

void proto_bye(struct proto *p, int w)
{
    p->busy[w] = 0;
    mark(p, w);
}

/* w leaves the pool that counts: the epoch may end without it. */
static int leave(struct proto *p, int w)
{
    p->alive[w] = 0;
    p->busy[w] = 0;
    mark(p, w);
    p->live--;
    if (p->in_epoch[w]) {
        p->in_epoch[w] = 0;
        p->epoch_count--;
    }
    /* the others may all have answered already */
    close_epoch(p);
    return p->live;
}

int proto_distrust(struct proto *p, int w)
{
    p->left[w] |= PROTO_LEFT_UNTRUSTED;
    return leave(p, w);
}

int proto_dead(struct proto *p, int w)
{
    p->dead++;
    p->left[w] |= PROTO_LEFT_DEAD;
    return leave(p, w);
}

void proto_silent(struct proto *p, int w)
{
    p->alive[w] = 0;
    mark(p, w);
}

int proto_untrusted(const struct proto *p, int w)
{
    return (p->left[w] & PROTO_LEFT_UNTRUSTED) != 0;
}

int proto_lost_worker(const struct proto *p, int w)
{
    return (p->left[w] & PROTO_LEFT_DEAD) != 0;
}

void proto_lost(struct proto *p, int w)
{
    p->left[w] |= PROTO_LEFT_DEAD;
    p->alive[w] = 0;
    mark(p, w);
}

int proto_overdue(const struct proto *p, double now, double after, double *next)
{
    *next = INFINITY;
    if (after <= 0 || p->oldest < 0)
        return -1;
    int w = p->oldest;
    if (now - p->sent_at[w] > after)
        return w;
    *next = p->sent_at[w] + after;
    return -1;
}

void proto_view(const struct proto *p, struct aia_pool_view *v, double now)
{
    *v = (struct aia_pool_view){
        .nworkers = p->n,
        .fresh = p->fresh,
        .arrived = p->arrived,
        .live = p->live,
        .round = p->round,
        .ranks = p->ranks,
        .repochs = p->repochs,
        .sent = p->sent,
        .busy = p->busy,
        .alive = p->alive,
        .fresh_now = p->fresh_now,
        .latency = p->latency,
        .elapsed = now - p->round_t0,
    };
}

int proto_ready(const struct proto *p, const struct aia_wait_plugin *wait,
                void *wait_s, double now)
{
    struct aia_pool_view v;
    proto_view(p, &v, now);
    return wait->ready(wait_s, &v) != 0;
}

double proto_deadline(const struct proto *p, const struct aia_wait_plugin *wait,
                      void *wait_s, double now)
{
    if (p->mode != PROTO_ROUNDS || !wait->deadline)
        return INFINITY;
    struct aia_pool_view v;
    proto_view(p, &v, now);
    double d = wait->deadline(wait_s, &v);
    return d >= 0 ? p->round_t0 + d : INFINITY;
}

void proto_end_round(struct proto *p, double now)
{
    p->round++;
    p->iteration++;
    /* only the fresh ones were marked: async rounds, one an answer, do
     * not clear the whole pool */
    for (int i = 0; i < p->fresh_marked; i++)
        p->fresh_now[p->fresh_list[i]] = 0;
    p->fresh = p->arrived = p->fresh_marked = 0;
    p->round_t0 = now;
}

int proto_next_idle(const struct proto *p, int from)
{
    if (from < p->idle_lo)
        from = p->idle_lo; /* none idle below it */
    if (from >= p->n || p->nidle == 0)
        return -1;
    int k = from / 64;
    uint64_t word = p->idle[k] & (~(uint64_t)0 << (from % 64));
    for (;;) {
        if (word)
            return k * 64 + __builtin_ctzll(word);
        if (++k >= (p->n + 63) / 64)
            return -1;
        word = p->idle[k];
    }
}

int proto_idle(const struct proto *p, int w)
{
    return p->alive[w] && !p->busy[w];
}
