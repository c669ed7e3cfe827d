/* average_mix.c - how the average plugin forms its query from the
 * workers' latest answers.
 *
 * staleness: none queries the weighted average of the latest models,
 *
 *     x <- (sum_i w_i y_i) / (sum_i w_i),
 *
 * which a persistent straggler pulls back: its model is many rounds old
 * and keeps its full weight (bench case 3 measures how far behind gd
 * that left average).  Two schemes count age:
 *
 * - decay: worker i's weight is w_i * decay^a_i, a_i the model's age in
 *   rounds (the current round less the round of the query it answered):
 *   an old model still counts, less the older it is.  A fixed point of
 *   the average is still a weighted mean of the local models, so with
 *   local steps it is biased toward the fresh workers' rows.
 * - gd: each worker answers with its local progress d_i = y_i - x_sent
 *   (the model less the query it started from), the coordinator keeps
 *   every worker's latest d_i and steps from the current iterate,
 *
 *     x <- x + (sum_i w_i d_i) / (sum_i w_i),
 *
 *   gradient descent with every worker's latest gradient when
 *   local_steps is 1 (the gd plugin's table): a stale d_i is an old
 *   gradient, not an old iterate, so it does not pull x back.  With every
 *   worker fresh it gives the same query as none.  It needs memory:
 *   latest, delay 0 and no preemption (auto chooses it then, else none).
 *
 * Preemption (preempt_every) replaces the worst-scored workers' models by
 * the best one's before the query is formed (see average.c).
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include <aiarun/alg.h>

#include "average.h"

/* Replace the models of the preempt worst-scored workers by the best
 * one's, among the workers scored since their latest answer (at least
 * preempt + 1 of them); a worker scoring as well as the best is kept. */
static void preempt(struct average *s)
{
    int n = s->nworkers, best = -1, scored = 0;
    for (int i = 0; i < n; i++) {
        if (!s->heard[i] || !s->scored[i])
            continue;
        scored++;
        if (best < 0 || s->score[i] < s->score[best])
            best = i;
    }
    if (best < 0 || (uint64_t)scored <= s->preempt)
        return;
    const double *bm = s->models + (size_t)best * s->dim;
    memcpy(s->best, bm, s->dim * sizeof *s->best);
    for (uint64_t k = 0; k < s->preempt; k++) {
        int worst = -1;
        for (int i = 0; i < n; i++)
            if (s->heard[i] && s->scored[i] && i != best &&
                (worst < 0 || s->score[i] > s->score[worst]))
                worst = i;
        if (worst < 0 || !(s->score[worst] > s->score[best]))
            return;
        memcpy(s->models + (size_t)worst * s->dim, bm,
               s->dim * sizeof *s->models);
        s->scored[worst] = 0;
        s->replaced[worst] += 1;
        if (s->host && s->host->log)
            s->host->log(s->host, AIA_LOG_INFO,
                         "average: round %llu: worker %d (score %.6g) "
                         "replaced by worker %d's model (score %.6g)",
                         (unsigned long long)s->rounds + 1, worst,
                         s->score[worst], best, s->score[best]);
    }
}

void average_keep(struct average *s, int i, const double *a, uint64_t round,
                  uint64_t now)
{
    if (s->scheme == SCHEME_DECAY) {
        s->sent_round[i] = (double)round;
        s->round = fmax(s->round, (double)now);
    }
    if (s->running) {
        /* now too, so that a checkpoint's latest step is the table's */
        aia_table_heard(&s->table, now);
        aia_table_add(&s->table, (size_t)i, a, s->w[i], round);
        return;
    }
    if (s->memory == MEM_LATEST) {
        memcpy(s->models + (size_t)i * s->dim, a, s->dim * sizeof *a);
        return;
    }
    for (size_t j = 0; j < s->dim; j++)
        s->sum[j] += s->w[i] * a[j];
}

/* Worker i's weight in this query. */
static double weight(const struct average *s, int i)
{
    if (s->scheme != SCHEME_DECAY)
        return s->w[i];
    double age = fmax(s->round - s->sent_round[i], 0);
    return s->w[i] * pow(s->decay, age);
}

void average_resum(struct average *s)
{
    for (int i = 0; i < s->nworkers; i++)
        s->table.n[i] = s->heard[i] ? s->w[i] : 0;
    aia_table_resum(&s->table);
}

void average_mix(struct average *s)
{
    s->rounds++;
    if (PREEMPTING(s) && s->rounds % s->preempt_every == 0) {
        preempt(s);
        if (s->running)
            average_resum(s); /* models were replaced */
    }
    /* Only workers of weight 0 heard from yet: the query stays. */
    if (!(s->total > 0))
        return;
    if (s->memory == MEM_DELTA) {
        for (size_t j = 0; j < s->dim; j++)
            s->x[j] = s->sum[j] / s->total;
        return;
    }
    if (s->running) { /* the weights do not age: the table's total */
        const double *sum = s->table.sum;
        double total = s->table.total;
        if (!(total > 0))
            return;
        if (s->scheme == SCHEME_GD)
            for (size_t j = 0; j < s->dim; j++)
                s->x[j] += sum[j] / total;
        else
            for (size_t j = 0; j < s->dim; j++)
                s->x[j] = sum[j] / total;
        return;
    }
    double total = 0;
    for (int i = 0; i < s->nworkers; i++)
        if (s->heard[i])
            total += weight(s, i);
    if (!(total > 0))
        return; /* every weight decayed to nothing: keep the query */
    if (s->scheme != SCHEME_GD)
        memset(s->x, 0, s->dim * sizeof *s->x);
    /* the workers' weights first, then the models a block of x at a time:
     * the block stays in cache while every model adds to it, so x is
     * read and written once, not once a worker (the same sums in the same
     * order) */
    for (int i = 0; i < s->nworkers; i++)
        s->wq[i] = s->heard[i] ? weight(s, i) / total : 0;
    for (size_t j0 = 0; j0 < s->dim; j0 += AIA_SUM_BLOCK) {
        size_t j1 = s->dim - j0 < AIA_SUM_BLOCK ? s->dim : j0 + AIA_SUM_BLOCK;
        for (int i = 0; i < s->nworkers; i++) {
            double w = s->wq[i];
            if (w == 0)
                continue;
            const double *y = s->models + (size_t)i * s->dim;
            double *x = s->x;
            AIA_SIMD
            for (size_t j = j0; j < j1; j++)
                x[j] += w * y[j];
        }
    }
}
