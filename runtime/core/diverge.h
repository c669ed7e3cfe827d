/* diverge.h - telling a diverging run from a converging one: a pure
 * detector over the losses and answers the coordinator sees, and the one
 * line that says what happened and what step to try. */
#ifndef AIARUN_DIVERGE_H
#define AIARUN_DIVERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The detector's memory: the first loss it was shown.  All zero (as in a
 * zeroed struct) is a detector that has seen nothing. */
struct diverge {
    double initial; /* the first loss seen */
    int have;       /* 1 once initial is set */
    double watch;   /* a change of the query above this asks for the loss */
};

/* Whether loss shows divergence: not finite, or, with factor > 0, above
 * factor times the first loss seen (which a positive first loss must be
 * for the bound to apply).  The first call only records its loss, unless
 * that loss is not finite.  A factor of 0 checks finiteness only. */
bool diverge_loss(struct diverge *d, double factor, double loss);

/* Whether the loss should be evaluated now, from the norm of the query's
 * change in the latest iteration (cheap where the loss is not): true
 * when it is not finite or exceeds sqrt(factor) times the first change
 * seen (the loss of a quadratic grows as the square of the distance),
 * after which the threshold doubles so that a large but steady change
 * does not ask every iteration.  NaN (no change yet) is ignored; false
 * when factor is 0. */
bool diverge_change(struct diverge *d, double factor, double change);

/* The advice that ends a divergence message, into buf: "; " and what to
 * try, from the step the algorithm took (NaN: unknown), why it took it
 * (may be NULL; "auto..." when a rule chose it) and L (0: unknown).
 * Returns buf. */
char *diverge_hint(char *buf, size_t len, double step, const char *step_why,
                   double L);

/* The one-line message for a divergence at iteration, into buf: seen in
 * the answer of rank (> 0), or else in the loss (and the initial one),
 * with the step the algorithm noted (NaN: unknown) and why it took it
 * (may be NULL or empty), and L (0: unknown).
 * Returns buf. */
char *diverge_message(char *buf, size_t len, int64_t iteration, int rank,
                      double loss, const struct diverge *d, double factor,
                      double step, const char *step_why, double L);

/* The one-line message for a well-formed answer of rank to round, from
 * algorithm alg, that holds value (NaN or infinite) at index, into buf:
 * the method diverged or the plugin is wrong, with the advice of
 * diverge_hint for L (0: unknown).  The receiving rank says it (rank 0,
 * a tree node, a shard rank; the simulator too).  Returns buf. */
char *diverge_answer(char *buf, size_t len, int rank, const char *alg,
                     uint64_t round, size_t index, double value, double L);

#endif
