/* sag.c - the SAG/DSAG plugin, driven by hand over lrmse: the table and
 * its step, stale answers dropped (SAG) or kept (DSAG), sub-partitions
 * cycled one per query, and convergence to the exact optimum. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/segtable.h>

#include "algtest.h"
#include "tap.h"

#define W 4
#define N 6

static struct plugtest Pb;

static void open_sag(struct algtest *t, struct plugtest *a, const char *yaml)
{
    plugtest_load(a, "sag", AIA_KIND_ALGORITHM, yaml);
    algtest_open(t, a, &Pb, W, NULL, 5);
}

static void close_sag(struct algtest *t, struct plugtest *a)
{
    algtest_close(t);
    plugtest_free(a);
}

/* The coordinator absorbs gradient g for (worker w, part), rows rows,
 * computed from the query of round sent. */
static void give(struct algtest *t, int w, double part, double rows,
                 const double *g, uint64_t sent)
{
    struct aia_error err;
    double a[N + 2];
    memcpy(a, g, N * sizeof *a);
    a[N] = part;
    a[N + 1] = rows;
    if (algtest_give(t, w, a, 100, 400, sent, &err) < 0)
        bail_out("absorb: %s", err.text);
}

static void table_rule(void)
{
    struct algtest t;
    struct plugtest a;
    double ga[N], gb[N], gc[N];
    for (int j = 0; j < N; j++)
        ga[j] = j + 1, gb[j] = 2 - j, gc[j] = 4;
    for (int dsag = 0; dsag < 2; dsag++) {
        open_sag(&t, &a,
                 dsag ? "{step: 0.5, variant: dsag}"
                      : "{step: 0.5, variant: sag}");
        const char *name = dsag ? "dsag" : "sag";
        give(&t, 0, 0, 1, ga, 1);
        give(&t, 2, 0, 3, gb, 1);
        algtest_end_round(&t);
        const double *q = algtest_query(&t, 2);
        int same = 1;
        double want[N];
        for (int j = 0; j < N; j++) {
            want[j] = -0.5 * (1 * ga[j] + 3 * gb[j]) / 4;
            same = same && q[j] == want[j];
        }
        ok(same,
           "%s: a round steps by -step * the row-weighted mean of "
           "the table",
           name);
        /* round 2: worker 1's answer to round 1's query is stale */
        give(&t, 1, 0, 4, gc, 1);
        algtest_end_round(&t);
        q = algtest_query(&t, 3);
        same = 1;
        for (int j = 0; j < N; j++) {
            want[j] += dsag ? -0.5 * (ga[j] + 3 * gb[j] + 4 * gc[j]) / 8
                            : -0.5 * (ga[j] + 3 * gb[j]) / 4;
            same = same && q[j] == want[j];
        }
        ok(same, dsag ? "dsag: a stale answer enters the table"
                      : "sag: a stale answer is dropped");
        /* an answer older than its entry changes nothing */
        give(&t, 0, 0, 2, gc, 3);
        give(&t, 0, 0, 1, gb, 1);
        algtest_end_round(&t);
        q = algtest_query(&t, 4);
        same = 1;
        for (int j = 0; j < N; j++) {
            want[j] += dsag ? -0.5 * (2 * gc[j] + 3 * gb[j] + 4 * gc[j]) / 9
                            : -0.5 * (2 * gc[j] + 3 * gb[j]) / 5;
            same = same && fabs(q[j] - want[j]) < 1e-12;
        }
        ok(same,
           "%s: a worker's newer answer replaces its entry, an older "
           "one does not",
           name);
        close_sag(&t, &a);
    }
}

/* The step shrinks with the table's age: by 2/a, a the entries'
 * row-weighted mean age in rounds, unless entries at most a round old
 * hold more than half the rows. */
static void age_factor(void)
{
    struct algtest t;
    struct plugtest a;
    double g[N];
    for (int j = 0; j < N; j++)
        g[j] = j - 2.5;
    for (int fresh = 1; fresh <= 3; fresh += 2) {
        open_sag(&t, &a, "{step: 0.5, variant: dsag}");
        for (int w = 0; w < W; w++)
            give(&t, w, 0, 1, g, 1);
        algtest_end_round(&t);
        /* rounds 2 to 10: only the first `fresh` workers answer */
        while (t.round < 10) {
            for (int w = 0; w < fresh; w++)
                give(&t, w, 0, 1, g, t.round);
            algtest_end_round(&t);
        }
        for (int w = 0; w < fresh; w++)
            give(&t, w, 0, 1, g, t.round);
        const double *q10 = algtest_query(&t, 10);
        double before[N];
        memcpy(before, q10, sizeof before);
        algtest_end_round(&t);
        const double *q = algtest_query(&t, 11);
        /* fresh 1: rows 1 of age 0, 3 of age 9: a = 27/4 */
        double factor = fresh == 1 ? 2.0 / (27.0 / 4.0) : 1.0;
        double most = 0;
        for (int j = 0; j < N; j++)
            most = tap_worst(most,
                             fabs(q[j] - (before[j] - 0.5 * factor * g[j])));
        ok(most < 1e-12,
           fresh == 1 ? "one entry of 4 fresh, 3 nine rounds old: the step "
                        "is times 2/a, a = 27/4 (off by %g)"
                      : "3 of 4 fresh, one nine rounds old: the step is "
                        "whole (off by %g)",
           most);
        close_sag(&t, &a);
    }
}

static void subpartitions(void)
{
    struct algtest t;
    struct plugtest a;
    struct aia_error err;
    open_sag(&t, &a, "{step: 0.5, subpartitions: 3}");
    const double *q = algtest_query(&t, 1);
    double ans[N + 2], g[N];
    size_t rows = t.rows[1], seen = 0, lo = 0;
    int parts_ok = 1, grads_ok = 1;
    for (uint64_t k = 0; k < 4; k++) {
        struct aia_step step = {.round = 1, .answers = k};
        if (t.alg->worker(t.as[2], q, ans, &step, &err) < 0)
            bail_out("worker: %s", err.text);
        parts_ok = parts_ok && ans[N] == (double)(k % 3);
        if (k < 3) {
            size_t n = (size_t)ans[N + 1], idx[200];
            for (size_t i = 0; i < n && i < 200; i++)
                idx[i] = lo + i;
            t.prob->gradient(t.ps[2], q, idx, n, g, &err);
            grads_ok = grads_ok && algtest_maxdiff(g, ans, N) == 0;
            seen += n;
            lo += n;
        }
    }
    ok(parts_ok, "a worker cycles through its 3 sub-partitions, one per "
                 "query");
    is_int((long long)seen, (long long)rows, "and the parts cover its %zu rows",
           rows);
    ok(grads_ok, "each answer is the mean gradient of its part's rows");
    close_sag(&t, &a);
}

static void converges(void)
{
    struct algtest t;
    struct plugtest a;
    open_sag(&t, &a, "{variant: sag}");
    algtest_rounds(&t, 600, -1, 0);
    ok(algtest_gap(&t) < 1e-9,
       "sag, every worker fresh: the optimum "
       "(gap %.2e)",
       algtest_gap(&t));
    close_sag(&t, &a);
    open_sag(&t, &a, "{variant: dsag, subpartitions: 2}");
    algtest_rounds(&t, 1500, 3, 2);
    ok(algtest_gap(&t) < 1e-9,
       "dsag, 2 parts, a worker 2 rounds late: "
       "the optimum (gap %.2e)",
       algtest_gap(&t));
    close_sag(&t, &a);
    open_sag(&t, &a, "{variant: sag, subpartitions: 2}");
    algtest_rounds(&t, 1500, 3, 2);
    ok(algtest_gap(&t) > 1e-6,
       "sag drops the late worker's answers: the "
       "optimum of the others' rows (gap %.2e)",
       algtest_gap(&t));
    close_sag(&t, &a);
}

/* The segment table (balance: on) against a per-row reference: workers
 * answer sub-partitions under assignments that change at random, and
 * after every answer the table's rows, sum and row-weighted steps are
 * those of the latest answer that covered each row. */
#define SW 3
#define SD 4
#define SROWS 97
static void segments(void)
{
    struct aia_segtable t;
    struct aia_rng rng;
    static double ref_g[SW][SROWS][SD];
    static uint64_t ref_when[SW][SROWS];
    static int ref_has[SW][SROWS];
    size_t parts[SW] = {1, 1, 1}, next[SW] = {0, 0, 0};
    double worst = 0, worst_rows = 0, worst_when = 0, most = 0;
    int bounded = 1;
    aia_rng_seed(&rng, 7, 1);
    if (aia_segtable_init(&t, SW, SD) < 0)
        bail_out("out of memory");
    memset(ref_has, 0, sizeof ref_has);
    for (uint64_t step = 1; step <= 3000; step++) {
        int w = (int)(aia_rng_u64(&rng) % SW);
        if (aia_rng_uniform(&rng) < 0.05) { /* a new assignment */
            size_t old = parts[w];
            parts[w] = 1 + (size_t)(aia_rng_u64(&rng) % 12);
            next[w] = 0;
            (void)old;
        }
        size_t j = next[w]++ % parts[w];
        size_t lo = SROWS * j / parts[w], hi = SROWS * (j + 1) / parts[w];
        double g[SD];
        for (int d = 0; d < SD; d++)
            g[d] = aia_rng_uniform(&rng) * 2 - 1 + (double)d;
        aia_segtable_heard(&t, step);
        if (aia_segtable_put(&t, w, lo, hi, g, step) != 1)
            bail_out("an answer was not stored");
        for (size_t r = lo; r < hi; r++) {
            memcpy(ref_g[w][r], g, sizeof g);
            ref_when[w][r] = step;
            ref_has[w][r] = 1;
        }
        double sum[SD] = {0}, rows = 0, when = 0;
        for (int v = 0; v < SW; v++)
            for (size_t r = 0; r < SROWS; r++)
                if (ref_has[v][r]) {
                    for (int d = 0; d < SD; d++)
                        sum[d] += ref_g[v][r][d];
                    rows++;
                    when += (double)ref_when[v][r];
                }
        for (int d = 0; d < SD; d++) {
            double e = fabs(t.sum[d] - sum[d]) / (1 + fabs(sum[d]));
            worst = e > worst ? e : worst;
        }
        worst_rows = tap_worst(worst_rows, fabs(t.total - rows));
        worst_when = tap_worst(worst_when, fabs(t.when_sum - when));
        for (int v = 0; v < SW; v++) {
            most = fmax(most, (double)t.nseg[v]);
            /* sorted, disjoint, within the rows */
            for (size_t k = 0; k < t.nseg[v]; k++)
                if (t.seg[v][k].lo >= t.seg[v][k].hi ||
                    t.seg[v][k].hi > SROWS ||
                    (k && t.seg[v][k].lo < t.seg[v][k - 1].hi))
                    bounded = 0;
        }
    }
    ok(worst < 1e-12,
       "segments: the running sum is the per-row re-sum after 3,000 "
       "answers under random assignments (worst relative error %.2g)",
       worst);
    is_double(worst_rows, 0, 0, "and the rows are exactly the rows answered");
    is_double(worst_when, 0, 0, "and the rows' steps exactly theirs");
    ok(bounded && most <= 24,
       "segments stay sorted and disjoint, at most p + p' a worker (%g)", most);
    /* a save and a load give back the same table */
    size_t n = aia_segtable_size(&t);
    double *buf = malloc(n * sizeof *buf);
    struct aia_segtable u;
    struct aia_error err;
    size_t rows[SW] = {SROWS, SROWS, SROWS};
    if (!buf || aia_segtable_init(&u, SW, SD) < 0)
        bail_out("out of memory");
    int same = aia_segtable_save(&t, buf) == buf + n &&
               aia_segtable_load(&u, buf, n, rows, &err) == buf + n;
    aia_segtable_resum(&t);
    for (int d = 0; same && d < SD; d++)
        same = u.sum[d] == t.sum[d];
    ok(same && u.total == t.total && u.segments == t.segments,
       "a saved table loads back to the same sums and segments");
    buf[2] = SROWS + 1; /* worker 0's first segment ends past its rows */
    aia_segtable_free(&u);
    if (aia_segtable_init(&u, SW, SD) < 0)
        bail_out("out of memory");
    ok(!aia_segtable_load(&u, buf, n, rows, &err),
       "a segment past a worker's rows is refused: %s", err.text);
    aia_segtable_free(&u);
    aia_segtable_free(&t);
    free(buf);
}

/* A balanced worker's compute time: 1 us a row, worker 0 3x slower. */
static double timed(const struct algtest *t, int w, const double *answer)
{
    return answer[t->dim + 1] * (w == 0 ? 3e-6 : 1e-6);
}

/* balance: on with worker 0 three times slower a row: a plan gives it 3
 * sub-partitions, and a run resumed from a checkpoint taken after the
 * plan goes on to the same iterate and queries (the assignment included)
 * as the uninterrupted one, bit for bit. */
static void balanced(void)
{
    struct algtest t, u;
    struct plugtest a;
    plugtest_load(&a, "sag", AIA_KIND_ALGORITHM,
                  "{variant: dsag, balance: on, balance_every: 5}");
    algtest_open(&t, &a, &Pb, W, NULL, 5);
    algtest_open(&u, &a, &Pb, W, NULL, 5);
    t.compute_s = u.compute_s = timed;
    algtest_rounds(&t, 12, -1, 0);
    const double *q = algtest_query(&t, t.round);
    ok(q[N] == 3 && q[N + 1] == 1 && q[N + 2] == 1 && q[N + 3] == 1,
       "a plan gives the 3x slower worker 3 sub-partitions, the others "
       "1 (%g %g %g %g)",
       q[N], q[N + 1], q[N + 2], q[N + 3]);
    algtest_rounds(&t, 25, 3, 2);
    algtest_resume(&u, &t);
    algtest_rounds(&t, 50, 3, 2);
    algtest_rounds(&u, 50, 3, 2);
    ok(memcmp(algtest_model(&t), algtest_model(&u), N * sizeof(double)) == 0 &&
           memcmp(algtest_query(&t, t.round), algtest_query(&u, u.round),
                  t.qlen * sizeof(double)) == 0,
       "balanced: resumed after 37 rounds, the same iterate and query 50 "
       "rounds later");
    double g = algtest_gap(&t);
    algtest_rounds(&t, 1500, -1, 0);
    ok(algtest_gap(&t) < 1e-9,
       "and the balanced table converges to the optimum (gap %.2e, "
       "from %.2e)",
       algtest_gap(&t), g);
    algtest_close(&t);
    algtest_close(&u);
    plugtest_free(&a);
}

/* In async mode the balanced table's running sums are summed afresh
 * once a period (at least AIA_TABLE_RESUM_MIN answers): a checkpoint
 * holds them, so that a run resumed between two sums afresh goes on to
 * the bit, the sums included. */
static void balanced_async(void)
{
    struct algtest t, u;
    struct plugtest a;
    algtest_async = 1;
    plugtest_load(&a, "sag", AIA_KIND_ALGORITHM,
                  "{variant: dsag, balance: on, balance_every: 5}");
    algtest_open(&t, &a, &Pb, W, NULL, 5);
    algtest_open(&u, &a, &Pb, W, NULL, 5);
    t.compute_s = u.compute_s = timed;
    size_t len = algtest_resume_async(&t, &u, 37, 50);
    size_t now;
    struct aia_error err = {""};
    ok(algtest_same_state(&t, &u),
       "balanced, async mode: resumed after 37 answers (a state of %zu "
       "bytes), the same iterate, segments and running sums 50 answers "
       "later, to the bit",
       len);
    double *st = algtest_state(&t, &now);
    /* a state without the sums (as written before they were kept) */
    size_t bare = now - (N + AIA_RUNNING_SCALARS) * sizeof(double);
    ok(u.alg->load(u.as[0], st, bare, &err) == 0,
       "a state without the running sums loads (%s)", err.text);
    st[now / sizeof *st - 6] = 1e6; /* the answers since a sum afresh */
    ok(u.alg->load(u.as[0], st, now, &err) < 0 &&
           strstr(err.text, "running sums"),
       "running sums past their period are refused (%s)", err.text);
    free(st);
    algtest_close(&t);
    algtest_close(&u);
    plugtest_free(&a);
    algtest_async = 0;
}

/* A balanced state forged one field at a time: each refused at load,
 * naming the field.  A negative count of answers timed was loaded, then
 * written and read as an index out of the balance's windows. */
static void forged(void)
{
    struct algtest t, u;
    struct plugtest a;
    plugtest_load(&a, "sag", AIA_KIND_ALGORITHM,
                  "{variant: dsag, balance: on, balance_every: 5}");
    algtest_open(&t, &a, &Pb, W, NULL, 5);
    algtest_open(&u, &a, &Pb, W, NULL, 5);
    t.compute_s = u.compute_s = timed;
    algtest_rounds(&t, 12, -1, 0);
    size_t len;
    double *good = algtest_state(&t, &len), *st = malloc(len);
    /* x, then the balance (window 20), then the segments */
    enum { B = N, P = B + 2, ROWS = P + W, TIMED = ROWS + W };
    enum { RECENT = TIMED + W, CAP = RECENT + W, FIXED = CAP + W };
    enum { RING = FIXED + W, TIMES = RING + 20 * W, SEG = TIMES + 20 * W };
    ok(good[P] == 3 && good[ROWS] > 0 && good[TIMED] == 12 && good[SEG] > 0,
       "the state holds worker 0's 3 sub-partitions (%g), its rows (%g), "
       "answers timed (%g) and segments (%g) where the forger writes",
       good[P], good[ROWS], good[TIMED], good[SEG]);
    struct {
        size_t at;
        double v;
        const char *want;
    } f[] = {
        {TIMED, -1, "answers timed of worker 0 is -1: out of bounds"},
        {TIMED + 1, 2.5, "answers timed of worker 1 is 2.5"},
        {TIMED + 2, 1e300, "answers timed of worker 2"},
        {B, -1, "count of plans is -1"},
        {B + 1, 1e9, "rounds since its last plan"},
        {P + 1, 0, "sub-partitions of worker 1 are 0"},
        {ROWS + 2, NAN, "rows of worker 2 is nan"},
        {RECENT + 3, 13, "since its sub-partitions changed of worker 3"},
        {CAP, 0, "most sub-partitions a split paid for of worker 0"},
        {FIXED + 1, -1, "fixed cost of an answer of worker 1"},
        {RING + 3, -5, "rows of an answer timed of worker 0 is -5"},
        {RING + 20 + 15, 7, "rows of an answer timed of worker 1 is 7"},
        {TIMES + 2, INFINITY, "time of an answer of worker 0 is inf"},
        {SEG, 0.5, "worker 0's count of segments is 0.5"},
        {SEG, 1e300, "worker 0's count of segments"},
        {SEG + 1, -3, "segment 0: its first row (-3)"},
        {SEG + 2, 18446744073709551616.0, "segment 0: its end row"},
        {SEG + 3, 1.5, "segment 0: its step (1.5)"},
        {SEG + 4, NAN, "segment 0: its gradient (nan)"},
        {0, NAN, "value 0 of its iterate is nan"},
    };
    int all = 1;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        struct aia_error err = {""};
        memcpy(st, good, len);
        st[f[i].at] = f[i].v;
        int rc = u.alg->load(u.as[0], st, len, &err);
        all = all && rc < 0 && strstr(err.text, f[i].want);
        if (rc == 0 || !strstr(err.text, f[i].want))
            diag("word %zu = %g: %s", f[i].at, f[i].v,
                 rc == 0 ? "loaded" : err.text);
    }
    ok(all, "every field of a balanced state forged out of its bounds is "
            "refused, naming the field (%zu forgeries)",
       sizeof f / sizeof f[0]);
    struct aia_error err = {""};
    ok(u.alg->load(u.as[0], good, len, &err) == 0 &&
           algtest_same_state(&t, &u),
       "and the state as saved loads, whole (%s)", err.text);
    free(st);
    free(good);
    algtest_close(&t);
    algtest_close(&u);
    plugtest_free(&a);
}

int main(void)
{
    plugtest_load(&Pb, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 400, cols: 6, noise: 0.1, condition: 10}");
    plan(0);
    table_rule();
    age_factor();
    subpartitions();
    converges();
    algtest_resume_check("sag", "{variant: sag}", &Pb, W);
    algtest_resume_check("sag", "{variant: dsag, subpartitions: 2}", &Pb, W);
    segments();
    algtest_resume_check("sag", "{variant: dsag, balance: on}", &Pb, W);
    balanced();
    balanced_async();
    forged();
    plugtest_free(&Pb);
    return done_testing();
}
