/* wait_standard.c - the built-in wait condition: the round ends once nwait
 * workers have answered its query (MPIAsyncPools' integer nwait). */
#include <config.h>

#include <stdlib.h>

#include "builtin.h"

struct standard {
    int nwait; /* 0: every live worker */
};

enum { P_NWAIT };

static const struct aia_param params[] = {
    {"nwait", AIA_INT, "0",
     "fresh answers that end a round (0: every live worker)", NULL, 0, 1e6},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static int create(const struct aia_context *ctx, void **state,
                  struct aia_error *err)
{
    int nwait = (int)ctx->args[P_NWAIT].i;
    if (nwait > ctx->nworkers)
        return aia_seterr(err, "nwait: %d exceeds the %d workers in the pool",
                          nwait, ctx->nworkers);
    struct standard *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->nwait = nwait;
    *state = s;
    return 0;
}

static void destroy(void *state)
{
    free(state);
}

static int ready(void *state, const struct aia_pool_view *v)
{
    const struct standard *s = state;
    int need = s->nwait == 0 || s->nwait > v->live ? v->live : s->nwait;
    return v->fresh >= need;
}

const struct aia_wait_plugin builtin_wait_standard = {
    .h = AIA_HEADER(AIA_KIND_WAIT, struct aia_wait_plugin, "standard", "1.0",
                    "built-in: end the round when nwait workers have answered "
                    "its query",
                    params),
    .create = create,
    .destroy = destroy,
    .ready = ready,
};
