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
    int metric;
};

struct history *history_open(const char *path, const char *metric_name,
                             struct aia_error *err)
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
    h->metric = metric_name != NULL;
    fprintf(h->f, "iteration,epoch,time,loss,suboptimality,change%s%s\n",
            metric_name ? "," : "", metric_name ? metric_name : "");
    return h;
}

/* A value, or nothing when NaN: the field stays empty. */
static void field(FILE *f, double v)
{
    fputc(',', f);
    if (!isnan(v))
        fprintf(f, "%.17g", v);
}

int history_write(struct history *h, const struct history_row *r,
                  struct aia_error *err)
{
    fprintf(h->f, "%lld,%lld,%.6f", (long long)r->iteration,
            (long long)r->epoch, r->time);
    field(h->f, r->loss);
    field(h->f, r->subopt);
    field(h->f, r->change);
    if (h->metric)
        field(h->f, r->metric);
    if (fputc('\n', h->f) == EOF)
        return aia_seterr(err, "%s: write failed: %s", h->path,
                          strerror(errno));
    return 0;
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
