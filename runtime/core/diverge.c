/* diverge.c - the divergence detector: a loss that is not finite, or that
 * grew past a bound set by its first value, ends the run, with one line
 * naming the iteration, the loss, the step and the stable bound 2/L when
 * the problem gives L.
 *
 * Why a factor of the first loss: a converging method may raise the loss
 * for a while (momentum, stale answers, a large first step), but not by
 * orders of magnitude; a step past the stable bound multiplies the loss
 * by (1 - step L)^2 every iteration in the direction of the largest
 * curvature, so a factor of 1e6 is crossed within a few iterations of the
 * blow-up (at 10 times the bound, (1 - 20)^2 = 361 an iteration), long
 * before doubles overflow.
 *
 * The loss is computed only where the run needs it (history rows, loss
 * and gap stops, the end); in between, the norm of the query's change,
 * which is cheap, asks for it when the iterate runs away. */
#include <config.h>

#include "diverge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool diverge_loss(struct diverge *d, double factor, double loss)
{
    if (!isfinite(loss))
        return true;
    if (!d->have) {
        d->initial = loss;
        d->have = 1;
        return false;
    }
    return factor > 0 && d->initial > 0 && loss > factor * d->initial;
}

bool diverge_change(struct diverge *d, double factor, double change)
{
    if (factor <= 0 || isnan(change))
        return false;
    if (!isfinite(change))
        return true;
    if (d->watch == 0) {
        if (change > 0)
            d->watch = sqrt(factor) * change;
        return false;
    }
    if (change <= d->watch)
        return false;
    d->watch *= 2;
    return true;
}

char *diverge_hint(char *buf, size_t len, double step, const char *step_why,
                   double L)
{
    int automatic = step_why && strncmp(step_why, "auto", 4) == 0;
    if (L > 0 && automatic && step < 2 / L)
        /* no use advising the rule that chose the step */
        snprintf(buf, len,
                 "; the stable bound of gradient descent is 2/L = %.6g: "
                 "stale answers made a step within it unstable: try a "
                 "smaller one",
                 2 / L);
    else if (L > 0 && step < 2 / L)
        /* a step within the bound that diverged all the same: steps
         * applied answer by answer (async sgd) add up over a round trip */
        snprintf(buf, len,
                 "; the stable bound of gradient descent is 2/L = %.6g, "
                 "but stale or per-answer steps add up over a round trip: "
                 "try a smaller step, or step: auto",
                 2 / L);
    else if (L > 0)
        snprintf(buf, len,
                 "; the stable bound of gradient descent is 2/L = %.6g: try "
                 "a step below it, or step: auto",
                 2 / L);
    else
        snprintf(buf, len,
                 "; try a smaller step (the problem "
                 "gives no L to bound it)");
    return buf;
}

char *diverge_message(char *buf, size_t len, int64_t iteration, int rank,
                      double loss, const struct diverge *d, double factor,
                      double step, const char *step_why, double L)
{
    char what[64], grew[96] = "", at[400] = "", bound[256] = "";
    if (rank > 0)
        snprintf(what, sizeof what, "an answer of rank %d is not finite", rank);
    else
        snprintf(what, sizeof what, "loss %.6g", loss);
    if (rank <= 0 && isfinite(loss) && d->have && d->initial > 0)
        snprintf(grew, sizeof grew,
                 " (%.3g x the initial %.6g > "
                 "stop.diverge %g)",
                 loss / d->initial, d->initial, factor);
    if (!isnan(step))
        snprintf(at, sizeof at, " with step %.6g%s%s%s", step,
                 step_why && *step_why ? " (" : "", step_why ? step_why : "",
                 step_why && *step_why ? ")" : "");
    diverge_hint(bound, sizeof bound, step, step_why, L);
    snprintf(buf, len, "the method diverged at iteration %lld: %s%s%s%s",
             (long long)iteration, what, grew, at, bound);
    return buf;
}

char *diverge_answer(char *buf, size_t len, int rank, const char *alg,
                     uint64_t round, size_t index, double value, double L)
{
    char hint[256];
    diverge_hint(hint, sizeof hint, NAN, NULL, L);
    snprintf(buf, len,
             "rank %d: algorithm '%s': answer to round %llu holds %g at "
             "index %zu: the method diverged, or the plugin is wrong%s",
             rank, alg, (unsigned long long)round, value, index, hint);
    return buf;
}
