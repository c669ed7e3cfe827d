/* straggle.c - seeded delay models: fixed, slow, random, two-state bursts,
 * hang. */
#include <config.h>

#include "straggle.h"

#include <math.h>
#include <string.h>

#include "conf/params.h"

#define STREAM_STRAGGLE 0x5354524147000000ull

static int listed(const int64_t *ranks, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++)
        if (ranks[i] == rank)
            return (int)i + 1;
    return 0;
}

void straggle_init(struct straggle *s, const struct job_stragglers *st,
                   uint64_t seed, int rank)
{
    memset(s, 0, sizeof *s);
    aia_rng_seed(&s->rng, seed, STREAM_STRAGGLE + (uint64_t)rank);
    s->work = st->work;
    int k = listed(st->fixed, st->nfixed, rank);
    if (k)
        s->fixed = st->fixed_delay[st->nfixed_delay == 1 ? 0 : k - 1] / 1e3;
    s->factor = 1;
    if ((k = listed(st->slow, st->nslow, rank)))
        s->factor = st->slow_factor[st->nslow_factor == 1 ? 0 : k - 1];
    s->random_p = st->random_p;
    s->random_delay = st->random_delay;
    s->markov = st->markov &&
                (!st->markov_ranks || listed(st->markov_ranks, st->nmarkov,
                                             rank));
    s->p_slow = st->p_slow;
    s->p_fast = st->p_fast;
    s->markov_delay = st->markov_delay;
    s->hang = listed(st->hang, st->nhang, rank) != 0;
    s->hang_after = st->hang_after;
    s->corrupt = listed(st->corrupt, st->ncorrupt, rank) != 0;
    s->corrupt_after = st->corrupt_after;
}

double straggle_next(struct straggle *s)
{
    /* Draw both numbers every time: the stream stays aligned with the
     * answer count whatever the models in use. */
    double u_markov = aia_rng_uniform(&s->rng);
    double u_random = aia_rng_uniform(&s->rng);
    if (s->hang && s->answers >= (uint64_t)s->hang_after)
        return INFINITY;
    s->answers++;
    double d = s->work + s->fixed;
    if (s->markov) {
        if (s->slow ? u_markov < s->p_fast : u_markov < s->p_slow)
            s->slow = !s->slow;
        if (s->slow)
            d += s->markov_delay;
    }
    if (u_random < s->random_p)
        d += s->random_delay;
    return d;
}

int straggle_corrupt(const struct straggle *s)
{
    return s->corrupt && s->answers > (uint64_t)s->corrupt_after;
}

static int check_list(const struct job *job, const char *what,
                      const int64_t *list, size_t n, const struct mnode *at,
                      const int *ranks, int nranks, struct aia_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (int w = 0; w < nranks; w++)
            found |= ranks[w] == list[i];
        if (!found) {
            char where[256];
            params_where(where, sizeof where, job->m->path, at);
            return aia_seterr(err, "%s: stragglers.%s: rank %lld is not a "
                                   "worker of the pool",
                              where, what, (long long)list[i]);
        }
    }
    return 0;
}

int straggle_check(const struct job *job, const int *ranks, int n,
                   struct aia_error *err)
{
    const struct job_stragglers *st = &job->stragglers;
    if (check_list(job, "fixed.ranks", st->fixed, st->nfixed, st->fixed_node,
                   ranks, n, err) < 0 ||
        check_list(job, "markov.ranks", st->markov_ranks, st->nmarkov,
                   st->markov_node, ranks, n, err) < 0 ||
        check_list(job, "slow.ranks", st->slow, st->nslow, st->slow_node, ranks,
                   n, err) < 0 ||
        check_list(job, "hang.ranks", st->hang, st->nhang, st->hang_node, ranks,
                   n, err) < 0 ||
        check_list(job, "corrupt.ranks", st->corrupt, st->ncorrupt,
                   st->corrupt_node, ranks, n, err) < 0)
        return -1;
    return 0;
}
