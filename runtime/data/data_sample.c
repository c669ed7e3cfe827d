/* data_sample.c - a seeded sample of the rows a rank holds, as a table of
 * its own, for the history's evaluations on a sample
 * (output.history_sample). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "data.h"

/* Keep n of the m rows of from, each n-subset as likely as any other
 * (selection sampling, Knuth's Algorithm S), in their order. */
static void choose(size_t m, size_t n, uint64_t seed, uint64_t stream,
                   size_t *keep)
{
    struct aia_rng g;
    aia_rng_seed(&g, seed, stream);
    size_t k = 0;
    for (size_t i = 0; i < m && k < n; i++)
        if (aia_rng_below(&g, m - i) < n - k)
            keep[k++] = i;
}

int data_sample(const struct aia_dataset *from, size_t n, uint64_t seed,
                uint64_t stream, struct data_table *t, struct aia_error *err)
{
    memset(t, 0, sizeof *t);
    if (n > from->rows)
        n = from->rows;
    size_t *keep = malloc((n ? n : 1) * sizeof *keep);
    const char *src = from->source ? from->source : "";
    if (!keep || !(t->source = strdup(src)) ||
        !(t->row_ids = malloc((n ? n : 1) * sizeof *t->row_ids)) ||
        !(t->y = malloc((n ? n : 1) * sizeof *t->y)))
        goto oom;
    choose(from->rows, n, seed, stream, keep);
    size_t cols = from->cols, nnz = 0;
    for (size_t k = 0; k < n; k++) {
        t->row_ids[k] = from->row_ids ? from->row_ids[keep[k]] : keep[k];
        t->y[k] = from->y[keep[k]];
    }
    if (from->x) {
        if (!(t->x = malloc((n * cols > 0 ? n * cols : 1) * sizeof *t->x)))
            goto oom;
        for (size_t k = 0; k < n; k++)
            memcpy(t->x + k * cols, from->x + keep[k] * cols,
                   cols * sizeof *t->x);
    } else {
        for (size_t k = 0; k < n; k++)
            nnz += from->row_start[keep[k] + 1] - from->row_start[keep[k]];
        if (!(t->row_start = malloc((n + 1) * sizeof *t->row_start)) ||
            !(t->col = malloc((nnz ? nnz : 1) * sizeof *t->col)) ||
            !(t->val = malloc((nnz ? nnz : 1) * sizeof *t->val)))
            goto oom;
        size_t at = 0;
        for (size_t k = 0; k < n; k++) {
            size_t a = from->row_start[keep[k]], b = from->row_start[keep[k] + 1];
            t->row_start[k] = at;
            memcpy(t->col + at, from->col + a, (b - a) * sizeof *t->col);
            memcpy(t->val + at, from->val + a, (b - a) * sizeof *t->val);
            at += b - a;
        }
        t->row_start[n] = at;
        t->nnz = nnz;
    }
    free(keep);
    t->d = (struct aia_dataset){.rows = n,
                                .cols = cols,
                                .total_rows = from->total_rows,
                                .row_ids = t->row_ids,
                                .y = t->y,
                                .x = t->x,
                                .row_start = t->row_start,
                                .col = t->col,
                                .val = t->val,
                                .source = t->source};
    return 0;
oom:
    free(keep);
    data_free(t);
    return aia_seterr(err, "%s: out of memory for a sample of %zu rows", src,
                      n);
}
