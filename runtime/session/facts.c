/* facts.c - what a run learns of the problem's rows before it starts:
 * each worker's share (rows, L), the pool's facts made of them, and L of
 * the problem a rank holds.  No MPI: the MPI driver gathers the shares
 * (mpi/gather.c), the simulator sums them itself (sim/simpool.c). */
#include <config.h>

#include "facts.h"

#include <math.h>

#include "core/host.h"

int facts_wanted(const struct setup *s)
{
    if (s->alg && (s->alg->h.pflags & AIA_PARAMS_OPEN))
        return 1;
    for (const struct aia_value *v = s->alg_args; v && v->name; v++)
        if (v->type == AIA_DOUBLE && v->s)
            return 1;
    return 0;
}

void facts_part(const struct aia_problem_plugin *prob, void *prob_s,
                int smoothness, double part[3], double *lo, double *hi)
{
    double L = 0, rows = (double)prob->rows(prob_s);
    struct aia_error why = {""};
    /* a worker without rows has no loss to bound, and fails later */
    if (smoothness && rows > 0 &&
        (!loader_offered(prob, prob_s, AIA_OFFER_SMOOTHNESS) ||
         prob->smoothness(prob_s, &L, &why) < 0 || !(L > 0) || !isfinite(L)))
        L = -1;
    if (*why.text)
        host_log(AIA_LOG_INFO, "problem '%s': smoothness unknown: %s",
                 prob->h.name, why.text);
    part[0] = rows;
    part[1] = L > 0 ? rows * L : 0;
    part[2] = L < 0 ? 1 : 0;
    *lo = L > 0 ? L : INFINITY;
    *hi = L > 0 ? L : 0;
}

void facts_set(struct setup *s, const double sum[3], double least, double most)
{
    s->facts = (struct aia_problem_facts){
        .size = sizeof(struct aia_problem_facts),
        .rows = (size_t)sum[0],
    };
    if (sum[2] == 0 && sum[0] > 0 && sum[1] > 0) {
        s->facts.smoothness = sum[1] / sum[0];
        s->facts.smallest = least;
        s->facts.largest = most;
    }
}

double facts_smoothness(struct setup *s)
{
    struct aia_error err;
    double L;
    if (s->facts.smoothness > 0 || s->smoothness_tried || !s->prob_s)
        return s->facts.smoothness;
    s->smoothness_tried = 1;
    if (s->offers & AIA_OFFER_SMOOTHNESS &&
        s->prob->smoothness(s->prob_s, &L, &err) == 0 && L > 0 && isfinite(L))
        s->facts.smoothness = L;
    return s->facts.smoothness;
}
