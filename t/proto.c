/* proto.c - the coordinator's protocol state machine on constructed
 * event sequences, without MPI: answers fresh, stale, late and
 * distrusted, dead workers, epochs, rounds ended by nwait and by the
 * deadline, async mode, who gets the next query, and every stop rule. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "core/builtin.h"
#include "plugtest.h"
#include "core/proto.h"
#include "tap.h"

#define W 4

static const struct aia_wait_plugin *P = &builtin_wait_standard;
static const int ranks[W] = {1, 2, 3, 4};

/* The standard wait condition over W workers, bound from yaml. */
static void *wait_make(const char *yaml, struct plugtest *t)
{
    struct aia_error err;
    plugtest_load(t, "standard", AIA_KIND_WAIT, yaml);
    struct aia_context ctx =
        plugtest_ctx(t->args, AIA_ROLE_COORDINATOR, 0, W, 1);
    ctx.pool_ranks = ranks;
    void *s = NULL;
    if (P->create(&ctx, &s, &err) < 0)
        bail_out("wait condition %s: %s", yaml, err.text);
    return s;
}

static void wait_free(void *s, struct plugtest *t)
{
    P->destroy(s);
    plugtest_free(t);
}

/* A pool of W workers in mode, each sent round 1's query at time 0. */
static void start(struct proto *p, int mode)
{
    struct aia_error err;
    if (proto_init(p, W, mode, 0, ranks, &err) < 0)
        bail_out("proto_init: %s", err.text);
    proto_start(p, 1, 0.0, 0.0);
    for (int w = 0; w < W; w++)
        proto_sent(p, w, 0.0);
}

/* w's answer to round arrives at now and is absorbed. */
static enum proto_next answer(struct proto *p, int w, uint64_t round,
                              double now)
{
    double rtt;
    uint64_t st = proto_answer(p, w, round, now, &rtt);
    return proto_absorbed(p, w, st);
}

static int idle_count(const struct proto *p)
{
    int k = 0;
    for (int w = 0; w < p->n; w++)
        k += proto_idle(p, w);
    return k;
}

static void fresh_and_stale(void)
{
    struct plugtest t;
    void *ws = wait_make("{nwait: 2}", &t);
    struct proto p;
    start(&p, PROTO_ROUNDS);
    is_int(proto_check(&p, 0, 1), PROTO_ACCEPT,
           "an answer to the query "
           "sent is accepted");
    double rtt;
    uint64_t st = proto_answer(&p, 0, 1, 0.5, &rtt);
    is_int((long long)st, 0, "an answer to this round is fresh");
    is_double(rtt, 0.5, 1e-12, "its round trip is from its send");
    is_double(p.latency[0], 0.5, 1e-12, "the first latency is the rtt");
    is_int(proto_absorbed(&p, 0, st), PROTO_WAIT,
           "a fresh answer waits "
           "for the round's end");
    ok(p.fresh == 1 && p.arrived == 1 && p.fresh_now[0],
       "it counts as fresh this round");
    ok(!proto_ready(&p, P, ws, 0.5), "nwait 2: one answer does not end "
                                     "the round");
    answer(&p, 1, 1, 0.7);
    ok(proto_ready(&p, P, ws, 0.7), "nwait 2: two fresh answers end it");
    proto_end_round(&p, 1.0);
    ok(p.round == 2 && p.iteration == 1, "round 2, iteration 1");
    ok(p.fresh == 0 && p.arrived == 0 && !p.fresh_now[0],
       "the new round has no answers");
    ok(proto_idle(&p, 0) && proto_idle(&p, 1) && !proto_idle(&p, 2) &&
           !proto_idle(&p, 3),
       "only the idle workers get the next query");
    proto_sent(&p, 0, 1.0);
    proto_sent(&p, 1, 1.0);
    ok(p.sent[0] == 2 && p.busy[0], "a sent worker is busy with round 2");
    is_int(proto_check(&p, 2, 1), PROTO_ACCEPT,
           "an answer to round 1 in "
           "round 2 is accepted");
    st = proto_answer(&p, 2, 1, 1.2, &rtt);
    is_int((long long)st, 1, "its staleness is 1");
    is_int(proto_absorbed(&p, 2, st), PROTO_RESEND,
           "a stale answerer is sent the current query at once");
    ok(proto_idle(&p, 2) && p.fresh == 0 && p.arrived == 1,
       "it is idle, and counts as arrived, not fresh");
    ok(!proto_ready(&p, P, ws, 1.2), "a stale answer does not count for "
                                     "nwait");
    proto_sent(&p, 2, 1.2);
    is_int((long long)p.repochs[2], 1, "repochs holds the answer's round");
    answer(&p, 0, 2, 1.5);
    is_double(p.latency[0], 0.75 * 0.5 + 0.25 * 0.5, 1e-12,
              "the latency is a moving average");
    proto_free(&p);
    wait_free(ws, &t);
}

static void distrusted_and_late(void)
{
    struct proto p;
    start(&p, PROTO_ROUNDS);
    is_int(proto_check(&p, 1, 7), PROTO_DISTRUST,
           "an answer to a round the worker was not sent is distrusted");
    answer(&p, 2, 1, 0.1);
    is_int(proto_check(&p, 2, 1), PROTO_DISTRUST,
           "a second answer from an idle worker is distrusted");
    is_int(proto_distrust(&p, 1), W - 1,
           "a distrusted worker leaves the "
           "live count");
    ok(!p.alive[1] && !proto_idle(&p, 1), "and gets no more queries");
    is_int(proto_check(&p, 1, 1), PROTO_DISCARD,
           "what it sends then is discarded");
    proto_stop(&p, "iterations");
    is_int(proto_check(&p, 3, 1), PROTO_LATE,
           "an answer after the stop is "
           "late");
    proto_late(&p, 3);
    ok(!p.busy[3], "a late answerer is idle");
    is_int(proto_check(&p, 1, 1), PROTO_DISCARD,
           "a distrusted worker's answer is discarded, even late");
    proto_free(&p);
}

static void dead_and_epochs(void)
{
    struct proto p;
    start(&p, PROTO_ROUNDS);
    double next;
    is_int(proto_overdue(&p, 0.5, 1.0, &next), -1,
           "nobody is overdue "
           "before dead_after");
    is_double(next, 1.0, 1e-12, "the next possible death is at 1 s");
    is_int(proto_overdue(&p, 5.0, 0.0, &next), -1,
           "dead_after 0: never overdue");
    ok(isinf(next), "and never due");
    answer(&p, 0, 1, 0.2);
    answer(&p, 1, 1, 0.3);
    answer(&p, 0, 1, 0.4); /* a second answer in the same epoch */
    is_int((long long)p.epoch, 0, "an epoch needs every live worker");
    answer(&p, 2, 1, 0.5);
    is_int(proto_overdue(&p, 1.5, 1.0, &next), 3,
           "a busy worker silent past dead_after is overdue");
    is_int(proto_dead(&p, 3), W - 1, "a dead worker leaves the live count");
    ok(p.dead == 1 && !p.alive[3] && !proto_idle(&p, 3),
       "it is counted dead and gets no more queries");
    is_int((long long)p.epoch, 1,
           "the epoch closes when the dead worker was the last one missing");
    is_int(proto_overdue(&p, 1.5, 1.0, &next), -1,
           "no one else is overdue (the others are idle)");
    answer(&p, 0, 1, 1.6);
    answer(&p, 1, 1, 1.7);
    is_int((long long)p.epoch, 1, "two of three: no epoch yet");
    answer(&p, 2, 1, 1.8);
    is_int((long long)p.epoch, 2,
           "the next epoch needs the live workers "
           "only");
    answer(&p, 0, 1, 1.9);
    proto_dead(&p, 1);
    is_int((long long)p.epoch, 2, "one of two live answered: no epoch");
    proto_dead(&p, 2);
    is_int((long long)p.epoch, 3,
           "the one live worker left answered: an "
           "epoch");
    int live = p.live;
    proto_silent(&p, 0);
    ok(!p.alive[0] && p.live == live && p.dead == 3,
       "a worker let go at the shutdown is not alive, nothing counted");
    p.alive[0] = 1;
    is_int(proto_dead(&p, 0), 0, "the last dead worker leaves none live");
    is_int((long long)p.epoch, 3, "an empty pool counts no epoch");
    proto_free(&p);
}

static void deadline_round(void)
{
    struct plugtest t;
    void *ws = wait_make("{timeout_ms: 20}", &t);
    struct proto p;
    start(&p, PROTO_ROUNDS);
    proto_end_round(&p, 10.0);
    for (int w = 0; w < W; w++)
        proto_sent(&p, w, 10.0);
    is_double(proto_deadline(&p, P, ws, 10.005), 10.020, 1e-9,
              "the deadline is the round's start plus the timeout");
    answer(&p, 1, 2, 10.010);
    ok(!proto_ready(&p, P, ws, 10.010), "one answer before the timeout: "
                                        "keep waiting");
    ok(proto_ready(&p, P, ws, 10.021), "past the deadline the round ends");
    wait_free(ws, &t);
    ws = wait_make("{}", &t);
    ok(isinf(proto_deadline(&p, P, ws, 10.0)),
       "without a timeout there is no deadline");
    for (int w = 0; w < W; w++)
        if (w != 1)
            answer(&p, w, 2, 10.03);
    ok(proto_ready(&p, P, ws, 10.03), "nwait 0: every live worker answered");
    wait_free(ws, &t);
    proto_free(&p);
}

static void async_mode(void)
{
    struct plugtest t;
    void *ws = wait_make("{timeout_ms: 20}", &t);
    struct proto p;
    start(&p, PROTO_ASYNC);
    ok(isinf(proto_deadline(&p, P, ws, 0.0)), "async mode has no round "
                                              "deadline");
    is_int(answer(&p, 2, 1, 0.1), PROTO_END_ROUND,
           "async: every answer ends an iteration");
    proto_end_round(&p, 0.1);
    ok(p.iteration == 1 && p.round == 2, "iteration 1, round 2");
    is_int(idle_count(&p), 1, "only the answerer is idle");
    ok(proto_idle(&p, 2), "and gets the next query");
    proto_sent(&p, 2, 0.1);
    double rtt;
    uint64_t st = proto_answer(&p, 0, 1, 0.2, &rtt);
    is_int((long long)st, 1, "async: an answer to an older query is stale");
    is_int(proto_absorbed(&p, 0, st), PROTO_END_ROUND,
           "and still an "
           "iteration");
    wait_free(ws, &t);
    proto_free(&p);
}

/* A measure with a given change and loss; loss_calls counts uses. */
static double m_change = NAN, m_loss = 1.0;
static int m_fail, loss_calls;
static double change_of(void *ctx)
{
    (void)ctx;
    return m_change;
}
static int loss_of(void *ctx, double *loss)
{
    (void)ctx;
    loss_calls++;
    *loss = m_loss;
    return m_fail ? -1 : 0;
}

static const char *stop_after(struct proto *p, const struct proto_limits *lim,
                              const struct proto_measure *m)
{
    p->why = NULL;
    const struct proto_stop_rule *r = proto_stop_check(p, lim, m);
    return r ? r->name : "none";
}

static void stop_rules(void)
{
    struct proto p;
    struct proto_limits lim = {.check_every = 1};
    struct proto_measure m = {
        .change = change_of, .loss = loss_of, .fopt = 2.0};
    start(&p, PROTO_ROUNDS);
    is_string(stop_after(&p, &lim, &m), "none", "no limit: no stop");
    is_int(loss_calls, 0, "without a loss target the loss is not measured");
    lim.iterations = 3;
    p.iteration = 2;
    is_string(stop_after(&p, &lim, &m), "none", "2 of 3 iterations");
    p.iteration = 3;
    is_string(stop_after(&p, &lim, &m), "iterations", "3 of 3 iterations");
    lim.iterations = 0;
    lim.epochs = 2;
    p.epoch = 2;
    is_string(stop_after(&p, &lim, &m), "epochs", "2 of 2 epochs");
    lim.epochs = 0;
    lim.precision = 1e-3;
    m_change = NAN;
    is_string(stop_after(&p, &lim, &m), "none",
              "no change yet: no "
              "precision stop");
    m_change = 1e-4;
    is_string(stop_after(&p, &lim, &m), "precision",
              "a small change "
              "stops");
    lim.precision = 0;
    lim.loss = 0.5;
    m_loss = 0.6;
    is_string(stop_after(&p, &lim, &m), "none", "loss above its target");
    m_loss = 0.4;
    lim.check_every = 2; /* iteration 3 */
    is_string(stop_after(&p, &lim, &m), "none",
              "the loss is checked "
              "every check_every only");
    p.iteration = 4;
    is_string(stop_after(&p, &lim, &m), "loss", "loss at its target");
    lim.loss = 0;
    lim.gap = 0.01;
    m_loss = 2.1;
    is_string(stop_after(&p, &lim, &m), "none", "gap 5%% above 1%%");
    m_loss = 2.01;
    is_string(stop_after(&p, &lim, &m), "gap", "gap 0.5%% within 1%%");
    m.fopt = 0;
    m_loss = 1e-10;
    is_string(stop_after(&p, &lim, &m), "none",
              "optimum 0: loss 1e-10 is above the floor's 1e-11");
    m_loss = 1e-12;
    is_string(stop_after(&p, &lim, &m), "gap",
              "optimum 0: the gap's absolute floor stops the run");
    /* the gap is relative to max(|optimum|, the floor) wherever an
     * optimum is negative, 0 or tiny: the stop rule's gap is the
     * summary's (proto_gap) */
    m.fopt = -2.0;
    m_loss = -1.99;
    is_string(stop_after(&p, &lim, &m), "gap",
              "optimum -2: loss -1.99 is 0.5%% above it");
    is_double(proto_gap(-1.99, -2.0), 0.005, 1e-12,
              "proto_gap of a negative optimum is relative to |optimum|");
    is_double(proto_gap(-1.9, -2.0), 0.05, 1e-12,
              "and positive when the loss is above it");
    m_loss = -1.9;
    is_string(stop_after(&p, &lim, &m), "none",
              "optimum -2: loss -1.9 is 5%% above it");
    is_double(proto_gap(1e-12, 0), 1e-3, 1e-15,
              "optimum 0: the gap is the difference over the floor");
    is_double(proto_gap(1.8e-13, 5.024e-31), 1.8e-4, 1e-15,
              "a tiny optimum (5e-31) is measured as the floor, not 1e17");
    ok(proto_gap(1.0, 2.0) < 0, "a loss below the optimum: a negative gap");
    ok(isnan(proto_gap(NAN, 1.0)), "a NaN loss: a NaN gap");
    m.fopt = 2.0;
    m_fail = 1;
    is_string(stop_after(&p, &lim, &m), "error",
              "a failed loss is an "
              "error stop");
    ok(proto_failed(&p), "proto_failed says so");
    m_fail = 0;

    lim = (struct proto_limits){.time = 2.0, .check_every = 1};
    ok(!proto_time_up(&p, &lim, 1.9), "before the time limit");
    ok(proto_time_up(&p, &lim, 2.0), "at the time limit");
    lim.time = 0;
    ok(!proto_time_up(&p, &lim, 1e9), "no time limit");
    ok(!proto_time_stop(&p, &lim, 1e9), "no time limit: no time stop");
    proto_free(&p);

    /* A time limit that cuts a round: its answers make no iteration. */
    start(&p, PROTO_ROUNDS);
    lim.time = 2.0;
    uint64_t it = p.iteration;
    answer(&p, 0, p.round, 1.0);
    is_int(p.arrived, 1, "one answer of the round arrived");
    ok(!proto_time_stop(&p, &lim, 1.5), "before the limit: no stop");
    ok(p.why == NULL, "no reason yet");
    ok(proto_time_stop(&p, &lim, 2.5), "the limit passed mid-round: stop");
    is_string(p.why->name, "time", "with the time rule");
    is_int((int)p.iteration, (int)it,
           "the cut round counts no iteration (the history's last row "
           "does not jump)");
    p.why = NULL;
    proto_stop(&p, "time");
    is_string(p.why->name, "time", "the time stop");
    proto_stop(&p, "signal");
    is_string(p.why->name, "time", "the first reason stays");
    is_int(proto_fail(&p), 1, "an error overrides any other reason");
    is_string(p.why->name, "error", "the error stop");
    is_int(proto_fail(&p), 0, "the first error wins");
    p.why = NULL;
    proto_stop(&p, "signal");
    is_string(p.why->name, "signal", "the signal stop");
    lim.iterations = 1;
    p.iteration = 5;
    is_string(proto_stop_check(&p, &lim, &m)->name, "signal",
              "a reason set is kept by the check");
    proto_free(&p);
}

static void registry(void)
{
    static const char *const names[] = {"iterations", "time",  "epochs",
                                        "precision",  "loss",  "gap",
                                        "signal",     "error", NULL};
    int k = 0;
    for (const struct proto_stop_rule *r = proto_stop_rules; r->name; r++)
        k++;
    is_int(k, 8, "eight stop rules");
    for (int i = 0; names[i]; i++) {
        const struct proto_stop_rule *r = proto_stop_rule(names[i]);
        ok(r && strcmp(r->name, names[i]) == 0 && r->text,
           "stop rule '%s' is registered with its text", names[i]);
    }
    ok(proto_stop_rule("iterations")->check && !proto_stop_rule("time")->check,
       "limits are checked each iteration, time is an event");
    int keyed = 0;
    for (const struct proto_stop_rule *r = proto_stop_rules; r->name; r++)
        keyed += r->keyed;
    is_int(keyed, 6, "six rules have a limit of the stop section");
    ok(!proto_stop_rule("signal")->keyed && !proto_stop_rule("error")->keyed,
       "signal and error have none");
    ok(proto_stop_rule("nonsense") == NULL, "an unknown rule is NULL");
}

static void tree(void)
{
    int child[100];
    is_int(tree_children(0, 100, 70, child), 70,
           "arity 100 over 70 workers: the coordinator has 70 children");
    is_int(child[69], 70, "the last is node 70");
    is_int(tree_children(1, 2, 6, child), 2,
           "node 1 of a binary tree has "
           "two children");
    ok(child[0] == 3 && child[1] == 4, "nodes 3 and 4");
    is_int(tree_parent(4, 2), 1, "node 4's parent is node 1");
    struct aia_error err;
    struct proto p;
    int r[70];
    for (int i = 0; i < 70; i++)
        r[i] = i + 1;
    if (proto_init(&p, 70, PROTO_ROUNDS, 100, r, &err) < 0)
        bail_out("proto_init: %s", err.text);
    is_int(p.live, 70, "arity 100: every one of 70 workers is talked to");
    ok(p.direct[65] && p.direct[69], "workers past 64 included");
    proto_free(&p);
    if (proto_init(&p, 6, PROTO_ROUNDS, 2, r, &err) < 0)
        bail_out("proto_init: %s", err.text);
    ok(p.live == 2 && p.direct[0] && p.direct[1] && !p.direct[2] && !p.alive[2],
       "arity 2: the coordinator talks to its two children only");
    proto_free(&p);
}

/* The idle set walked by proto_next_idle is the predicate proto_idle, in
 * index order, across words of 64 workers, through every change of busy
 * and alive; the fresh marks of a round are all cleared at its end. */
static void idle_set(void)
{
    enum { N = 150 };
    static int r[N];
    struct proto p;
    struct aia_error err;
    for (int w = 0; w < N; w++)
        r[w] = w + 1;
    if (proto_init(&p, N, PROTO_ROUNDS, 0, r, &err) < 0)
        bail_out("proto_init: %s", err.text);
    proto_start(&p, 1, 0.0, 0.0);
    unsigned seed = 7;
    int agree = 1, overdue_agrees = 1, steps = 0;
    for (int i = 0; i < 4000 && agree && overdue_agrees; i++) {
        double t = 1.0 + i; /* a clock that moves on, as the drivers' */
        seed = seed * 1103515245u + 12345u;
        int w = (int)((seed >> 8) % N), what = (int)((seed >> 20) % 8);
        double rtt;
        if (what < 4 && proto_idle(&p, w))
            proto_sent(&p, w, t);
        else if (what < 6 && p.busy[w] && p.alive[w])
            proto_absorbed(&p, w, proto_answer(&p, w, p.sent[w], 1.0, &rtt));
        else if (what == 6 && p.busy[w])
            proto_late(&p, w);
        else if (what == 7 && p.alive[w] && p.live > N / 2)
            (seed & 1) ? proto_dead(&p, w) : proto_distrust(&p, w);
        if (seed % 97 == 0)
            proto_end_round(&p, 1.0);
        /* the walk against the predicate, from every start */
        int from = (int)((seed >> 4) % (N + 2)) - 1;
        int want = -1;
        for (int v = from < 0 ? 0 : from; v < N && want < 0; v++)
            if (proto_idle(&p, v))
                want = v;
        agree = proto_next_idle(&p, from) == want;
        /* the longest silent busy worker, by a look at every one */
        int old = -1;
        for (int v = 0; v < N; v++)
            if (p.alive[v] && p.busy[v] &&
                (old < 0 || p.sent_at[v] < p.sent_at[old]))
                old = v;
        double next, after = 1.0 + (double)((seed >> 12) % 300);
        int got = proto_overdue(&p, t, after, &next);
        int wanted = old >= 0 && t - p.sent_at[old] > after ? old : -1;
        double wnext = old >= 0 && wanted < 0 ? p.sent_at[old] + after
                                              : INFINITY;
        overdue_agrees = got == wanted && (got >= 0 || next == wnext);
        steps++;
    }
    ok(agree, "proto_next_idle finds the first idle worker from any start, "
              "across 3 words, through %d random sends, answers, late "
              "answers, deaths and distrust",
       steps);
    ok(overdue_agrees, "proto_overdue names the busy worker silent the "
                       "longest, and when the next is due, as a look at "
                       "every worker does");
    int walked = 0;
    for (int w = proto_next_idle(&p, 0); w >= 0; w = proto_next_idle(&p, w + 1))
        walked++;
    is_int(walked, idle_count(&p), "the walk visits every idle worker once");
    proto_end_round(&p, 2.0);
    int marked = 0;
    for (int w = 0; w < N; w++)
        marked += p.fresh_now[w];
    is_int(marked, 0, "no fresh mark outlives its round");
    proto_free(&p);
}

int main(void)
{
    plan(0);
    fresh_and_stale();
    distrusted_and_late();
    dead_and_epochs();
    deadline_round();
    async_mode();
    stop_rules();
    registry();
    tree();
    idle_set();
    return done_testing();
}
