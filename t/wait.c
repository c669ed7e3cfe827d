/* wait.c - the standard wait condition on constructed pool views. */
#include <config.h>

#include <string.h>

#include "core/builtin.h"
#include "plugtest.h"
#include "tap.h"

#define W 4

static const struct aia_wait_plugin *P = &builtin_wait_standard;
static const int ranks[W] = {1, 2, 3, 4};

/* A pool view that tests edit field by field. */
struct pool {
    struct aia_pool_view v;
    uint64_t repochs[W], sent[W];
    unsigned char busy[W], alive[W], fresh_now[W];
    double latency[W];
};

static void pool_init(struct pool *p, uint64_t round)
{
    memset(p, 0, sizeof *p);
    for (int w = 0; w < W; w++) {
        p->alive[w] = 1;
        p->busy[w] = 1;
        p->sent[w] = round;
    }
    p->v = (struct aia_pool_view){.nworkers = W, .live = W, .round = round,
                                  .ranks = ranks, .repochs = p->repochs,
                                  .sent = p->sent, .busy = p->busy,
                                  .alive = p->alive,
                                  .fresh_now = p->fresh_now,
                                  .latency = p->latency};
}

/* Worker w answers the current round's query. */
static void answer(struct pool *p, int w)
{
    p->busy[w] = 0;
    p->fresh_now[w] = 1;
    p->repochs[w] = p->v.round;
    p->v.fresh++;
    p->v.arrived++;
}

/* A stale answer: worker w is re-sent the current query at once. */
static void stale(struct pool *p, int w)
{
    p->repochs[w] = p->sent[w];
    p->sent[w] = p->v.round;
    p->v.arrived++;
}

static void *make(const char *yaml, struct plugtest *t, const char **error)
{
    static struct aia_error err;
    plugtest_load(t, "standard", AIA_KIND_WAIT, yaml);
    struct aia_context ctx = plugtest_ctx(t->args, AIA_ROLE_COORDINATOR, 0, W,
                                          1);
    ctx.pool_ranks = ranks;
    void *s = NULL;
    *error = P->create(&ctx, &s, &err) < 0 ? err.text : NULL;
    return s;
}

static int ready(void *s, struct pool *p)
{
    return P->ready(s, &p->v);
}

static void nwait(void)
{
    struct plugtest t;
    const char *e;
    void *s = make("{nwait: 2}", &t, &e);
    struct pool p;
    pool_init(&p, 5);
    ok(!ready(s, &p), "nwait 2: no answer, not ready");
    answer(&p, 3);
    ok(!ready(s, &p), "nwait 2: one answer, not ready");
    stale(&p, 1);
    ok(!ready(s, &p), "nwait 2: a stale answer does not count");
    answer(&p, 0);
    ok(ready(s, &p), "nwait 2: two fresh answers, ready");
    P->destroy(s);
    plugtest_free(&t);

    s = make("{}", &t, &e);
    pool_init(&p, 1);
    for (int w = 0; w < W - 1; w++)
        answer(&p, w);
    ok(!ready(s, &p), "default: three of four is not enough");
    answer(&p, W - 1);
    ok(ready(s, &p), "default: every worker");
    pool_init(&p, 1);
    p.alive[2] = 0;
    p.v.live = 3;
    answer(&p, 0);
    answer(&p, 1);
    answer(&p, 3);
    ok(ready(s, &p), "default: every live worker (a dead one is not "
                     "waited for)");
    P->destroy(s);
    plugtest_free(&t);

    s = make("{all: true}", &t, &e);
    pool_init(&p, 1);
    answer(&p, 0);
    answer(&p, 1);
    answer(&p, 2);
    ok(!ready(s, &p), "all: three of four is not enough");
    answer(&p, 3);
    ok(ready(s, &p), "all: every worker");
    P->destroy(s);
    plugtest_free(&t);

    s = make("{nwait: 5}", &t, &e);
    like(e, "nwait: 5 exceeds the 4 workers", "nwait above the pool is "
                                              "refused");
    plugtest_free(&t);
    s = make("{nwait: 2, all: true}", &t, &e);
    like(e, "give nwait or all, not both", "nwait and all conflict");
    plugtest_free(&t);
}

static void include(void)
{
    struct plugtest t;
    const char *e;
    void *s = make("{nwait: 1, include: [3]}", &t, &e);
    struct pool p;
    pool_init(&p, 2);
    answer(&p, 0);
    answer(&p, 1);
    ok(!ready(s, &p), "include [3]: two answers without rank 3, not ready");
    answer(&p, 2); /* pool index 2 is rank 3 */
    ok(ready(s, &p), "include [3]: ready once rank 3 answered");
    pool_init(&p, 2);
    answer(&p, 2);
    ok(ready(s, &p), "include [3] and nwait 1: rank 3 alone is enough");
    pool_init(&p, 2);
    p.alive[2] = 0;
    p.v.live = 3;
    answer(&p, 0);
    ok(ready(s, &p), "a dead included worker is not waited for");
    P->destroy(s);
    plugtest_free(&t);
    s = make("{include: [9]}", &t, &e);
    like(e, "include: rank 9 is not in the pool", "an unknown rank is "
                                                  "refused");
    plugtest_free(&t);
}

static void staleness(void)
{
    struct plugtest t;
    const char *e;
    void *s = make("{nwait: 1, staleness: 1}", &t, &e);
    struct pool p;
    pool_init(&p, 7);
    p.sent[3] = 6; /* still computing round 6's query */
    answer(&p, 0);
    ok(!ready(s, &p), "staleness 1: a worker busy with the last round's "
                      "query holds the round");
    p.busy[3] = 0;
    p.repochs[3] = 6;
    ok(ready(s, &p), "once it answered, the round may end");
    pool_init(&p, 7);
    answer(&p, 0);
    ok(ready(s, &p), "busy workers on this round's query do not hold it");
    P->destroy(s);
    plugtest_free(&t);

    s = make("{nwait: 1, staleness: 0}", &t, &e);
    pool_init(&p, 3);
    answer(&p, 0);
    answer(&p, 1);
    answer(&p, 2);
    ok(!ready(s, &p), "staleness 0: any busy worker holds the round");
    answer(&p, 3);
    ok(ready(s, &p), "staleness 0: synchronous");
    P->destroy(s);
    plugtest_free(&t);

    s = make("{nwait: 1, staleness: 3, timeout_ms: 5}", &t, &e);
    pool_init(&p, 10);
    p.sent[1] = 7;
    stale(&p, 2);
    p.v.elapsed = 1.0;
    ok(!ready(s, &p), "the timeout does not override the staleness bound");
    P->destroy(s);
    plugtest_free(&t);
}

static void timeout(void)
{
    struct plugtest t;
    const char *e;
    void *s = make("{timeout_ms: 20}", &t, &e);
    struct pool p;
    pool_init(&p, 4);
    p.v.elapsed = 0.005;
    is_double(P->deadline(s, &p.v), 0.020, 1e-12,
              "the deadline is the timeout");
    p.v.elapsed = 0.030;
    ok(!ready(s, &p), "past the timeout with no answer: keep waiting");
    stale(&p, 1);
    ok(ready(s, &p), "past the timeout, one answer (even stale) ends it");
    p.v.elapsed = 0.010;
    ok(!ready(s, &p), "before the timeout, one answer is not enough");
    is_double(P->deadline(s, &p.v), 0.020, 1e-12,
              "and the deadline still wakes the coordinator");
    P->destroy(s);
    plugtest_free(&t);
}

static void grace(void)
{
    struct plugtest t;
    const char *e;
    void *s = make("{nwait: 1, grace: 0.5}", &t, &e);
    struct pool p;
    pool_init(&p, 9);
    p.v.elapsed = 0.010;
    answer(&p, 0);
    ok(!ready(s, &p), "grace: the condition holds at 10 ms, keep collecting");
    is_double(P->deadline(s, &p.v), 0.015, 1e-12,
              "until 10 ms * 1.5");
    p.v.elapsed = 0.014;
    answer(&p, 1);
    ok(!ready(s, &p), "another answer meanwhile does not end it early");
    p.v.elapsed = 0.015;
    ok(ready(s, &p), "at 15 ms the round ends");
    pool_init(&p, 10);
    p.v.elapsed = 0.002;
    answer(&p, 0);
    ok(!ready(s, &p), "a new round starts its own grace");
    answer(&p, 1);
    answer(&p, 2);
    answer(&p, 3);
    ok(ready(s, &p), "every worker answered: nothing more to wait for");
    P->destroy(s);
    plugtest_free(&t);
}

int main(void)
{
    plan(0);
    nwait();
    include();
    staleness();
    timeout();
    grace();
    return done_testing();
}
