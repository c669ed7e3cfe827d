/* history.c - CSV history rows. */
#include <config.h>

#include "history.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct history {
    FILE *f;
    char *path;
};

struct history *history_open(const char *path, struct aia_error *err)
{
    struct history *h = calloc(1, sizeof *h);
    if (!h || !(h->path = strdup(path))) {
        free(h);
        aia_seterr(err, "%s: out of memory", path);
        return NULL;
    }
    if (!(h->f = fopen(path, "w"))) {
        aia_seterr(err, "%s: cannot write the history: %s", path,
                   strerror(errno));
        free(h->path);
        free(h);
        return NULL;
    }
    fputs("iteration,epoch,time,loss,suboptimality\n", h->f);
    return h;
}

int history_row(struct history *h, int64_t iteration, int64_t epoch,
                double time, double loss, double subopt,
                struct aia_error *err)
{
    int rc;
    if (isnan(subopt))
        rc = fprintf(h->f, "%lld,%lld,%.6f,%.17g,\n", (long long)iteration,
                     (long long)epoch, time, loss);
    else
        rc = fprintf(h->f, "%lld,%lld,%.6f,%.17g,%.17g\n",
                     (long long)iteration, (long long)epoch, time, loss,
                     subopt);
    if (rc < 0)
        return aia_seterr(err, "%s: write failed: %s", h->path,
                          strerror(errno));
    return 0;
}

void history_flush(struct history *h)
{
    if (h)
        fflush(h->f);
}

int history_close(struct history *h, struct aia_error *err)
{
    if (!h)
        return 0;
    int rc = 0;
    if (ferror(h->f) | (fclose(h->f) != 0))
        rc = aia_seterr(err, "%s: write failed: %s", h->path,
                        strerror(errno));
    free(h->path);
    free(h);
    return rc;
}
