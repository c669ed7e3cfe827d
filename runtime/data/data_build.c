/* data_build.c - what every format's pass shares: numbers, the target
 * column, and the rows kept, built into a table. */
#include <config.h>

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_pass.h"
#include "core/util.h"

/* ------------------------------------------------------------------ */
/* Numbers and columns                                                 */

enum data_num data_number(const char *s, size_t len, double *v)
{
    if (len == 0)
        return DATA_NUM_BAD;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (end != s + len)
        return DATA_NUM_BAD;
    if (isnan(d))
        return DATA_NUM_NAN;
    if (isinf(d))
        return errno == ERANGE ? DATA_NUM_BIG : DATA_NUM_INF;
    /* ERANGE on a finite value is underflow: the nearest double (0 or a
     * subnormal) is what the file means. */
    *v = d;
    return DATA_NUM_OK;
}

const char *data_num_why(enum data_num kind, const char *s, size_t len,
                         char *buf, size_t size)
{
    int cut = len > 40;
    int shown = cut ? 40 : (int)len;
    switch (kind) {
    case DATA_NUM_NAN:
        return "NaN is not allowed";
    case DATA_NUM_INF:
        return "infinity is not allowed";
    case DATA_NUM_BIG:
        snprintf(buf, size, "'%.*s%s' is too large for a double", shown, s,
                 cut ? "..." : "");
        return buf;
    default:
        if (len == 0)
            return "empty cell";
        snprintf(buf, size, "'%.*s%s' is not a number", shown, s,
                 cut ? "..." : "");
        return buf;
    }
}

int data_float_over(const struct data_pass *p, double x)
{
    return p->o->float32 && fabs(x) > FLT_MAX;
}

const char *data_float_why(const char *shown, double scale, char *buf,
                           size_t size)
{
    char scaled[64] = "";
    if (scale != 1)
        snprintf(scaled, sizeof scaled, " times problem.scale %g", scale);
    snprintf(buf, size,
             "%s%s is beyond float32's range (at most %.3g in magnitude), "
             "and the problem's precision: float32 keeps the rows as floats",
             shown, scaled, (double)FLT_MAX);
    return buf;
}

const char *data_value_why(double v, double scale, char *buf, size_t size)
{
    if (isnan(v))
        return "NaN is not allowed";
    if (isinf(v))
        return "infinity is not allowed";
    char shown[40]; /* the fewest digits that read back as v */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(shown, sizeof shown, "%.*g", digits, v);
        if (strtod(shown, NULL) == v)
            break;
    }
    return data_float_why(shown, scale, buf, size);
}

/* A column index written as an optional '-' and decimal digits. */
static int parse_index(const char *s, long long *out)
{
    const char *d = s + (*s == '-');
    if (!*d || strspn(d, "0123456789") != strlen(d) || strlen(d) > 18)
        return 0;
    *out = strtoll(s, NULL, 10);
    return 1;
}

int data_target(struct data_pass *p, size_t n)
{
    const char *path = p->o->path, *target = p->o->target;
    char t[80]; /* the target as a message may show it */
    if (!target) {
        p->target = n - 1;
        return 0;
    }
    util_shown(t, sizeof t, target, 60);
    if (p->names) {
        size_t found = n;
        for (size_t j = 0; j < n; j++) {
            if (strcmp(p->names[j], target) != 0)
                continue;
            if (found < n)
                return aia_seterr(p->err,
                                  "%s: target '%s' names columns %zu and "
                                  "%zu; give an index",
                                  path, t, found + 1, j + 1);
            found = j;
        }
        if (found < n) {
            p->target = found;
            return 0;
        }
    }
    long long k;
    if (parse_index(target, &k)) {
        if (k >= (long long)n || k < -(long long)n)
            return aia_seterr(p->err,
                              "%s: target %s is out of range: %zu columns "
                              "(0 to %zu, or -%zu to -1)",
                              path, t, n, n - 1, n);
        p->target = k < 0 ? (size_t)((long long)n + k) : (size_t)k;
        return 0;
    }
    if (!p->names)
        return aia_seterr(p->err,
                          "%s: target '%s' is a name, but the file has no "
                          "header; give a column index (0 is the first, -1 "
                          "the last)",
                          path, t);
    char list[200];
    size_t used = 0;
    for (size_t j = 0; j < n && used < sizeof list; j++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", j ? ", " : "",
                         p->names[j]);
        used += w < 0 ? 0 : (size_t)w;
    }
    if (used >= sizeof list)
        strcpy(list + sizeof list - 5, " ...");
    return aia_seterr(p->err, "%s: no column '%s' in the header: %s", path, t,
                      list);
}

/* ------------------------------------------------------------------ */
/* Rows kept                                                           */

int data_take(struct data_pass *p, size_t r, int *store)
{
    *store = p->b && (!p->keep || p->keep(r, p->arg));
    return *store || p->check_all;
}

/* realloc for n items of size bytes, refusing products that overflow. */
static void *resize(void *ptr, size_t n, size_t size)
{
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX / size)
        return NULL;
    return realloc(ptr, n * size);
}

int data_oom(struct data_pass *p)
{
    return aia_seterr(p->err, "%s: out of memory", p->o->path);
}

/* Room for cap rows in every row array. */
static int build_reserve(struct data_build *b, size_t cap)
{
    size_t *ids = resize(b->ids, cap, sizeof *ids);
    if (!ids)
        return -1;
    b->ids = ids;
    double *y = resize(b->y, cap, sizeof *y);
    if (!y)
        return -1;
    b->y = y;
    if (b->sparse) {
        size_t *start = resize(b->start, cap + 1, sizeof *start);
        if (!start)
            return -1;
        b->start = start;
    } else {
        if (cap > SIZE_MAX / b->width)
            return -1;
        double *x = resize(b->x, cap * b->width, sizeof *x);
        if (!x)
            return -1;
        b->x = x;
    }
    b->cap = cap;
    return 0;
}

int data_build_init(struct data_pass *p, size_t width)
{
    struct data_build *b = p->b;
    if (!b)
        return 0;
    b->width = width;
    if (build_reserve(b, 64) < 0)
        return data_oom(p);
    if (b->sparse)
        b->start[0] = 0;
    return 0;
}

int data_build_begin(struct data_pass *p, size_t id, double **slot)
{
    struct data_build *b = p->b;
    if (b->rows == b->cap &&
        (b->cap > SIZE_MAX / 2 || build_reserve(b, 2 * b->cap) < 0))
        return data_oom(p);
    b->ids[b->rows] = id;
    b->y[b->rows] = 0;
    *slot = NULL;
    if (!b->sparse) {
        *slot = b->x + b->rows * b->width;
        memset(*slot, 0, b->width * sizeof **slot);
    }
    return 0;
}

int data_build_entry(struct data_pass *p, size_t col, double v)
{
    struct data_build *b = p->b;
    if (b->nnz == b->nzcap) {
        size_t cap = b->nzcap ? 2 * b->nzcap : 256;
        uint32_t *c = resize(b->col, cap, sizeof *c);
        if (c)
            b->col = c;
        double *val = c ? resize(b->val, cap, sizeof *val) : NULL;
        if (!val)
            return data_oom(p);
        b->val = val;
        b->nzcap = cap;
    }
    b->col[b->nnz] = (uint32_t)col;
    b->val[b->nnz++] = v;
    return 0;
}

void data_build_end(struct data_pass *p)
{
    struct data_build *b = p->b;
    b->rows++;
    if (b->sparse)
        b->start[b->rows] = b->nnz;
}

void data_build_free(struct data_build *b)
{
    free(b->ids);
    free(b->y);
    free(b->x);
    free(b->start);
    free(b->col);
    free(b->val);
    memset(b, 0, sizeof *b);
}

int data_build_finish(struct data_pass *p, struct data_table *t)
{
    struct data_build *b = p->b;
    const struct data_opts *o = p->o;
    if (b->sparse && !o->sparse) {
        if (b->rows > SIZE_MAX / p->cols)
            return data_oom(p);
        double *x = calloc(b->rows ? b->rows * p->cols : 1, sizeof *x);
        if (!x)
            return data_oom(p);
        for (size_t i = 0; i < b->rows; i++)
            for (size_t k = b->start[i]; k < b->start[i + 1]; k++)
                x[i * p->cols + b->col[k]] = b->val[k];
        free(b->start);
        free(b->col);
        free(b->val);
        b->start = NULL;
        b->col = NULL;
        b->val = NULL;
        b->nnz = b->nzcap = 0;
        b->x = x;
        b->sparse = 0;
    } else if (b->sparse && !b->col) {
        /* no entry at all: still arrays, so that col != NULL means CSR */
        b->col = malloc(sizeof *b->col);
        b->val = malloc(sizeof *b->val);
        if (!b->col || !b->val)
            return data_oom(p);
    }
    t->source = strdup(o->path);
    if (!t->source)
        return data_oom(p);
    /* give back the room doubling left over; failing to shrink is fine */
    size_t n = b->rows ? b->rows : 1;
    void *q;
    if ((q = resize(b->ids, n, sizeof *b->ids)))
        b->ids = q;
    if ((q = resize(b->y, n, sizeof *b->y)))
        b->y = q;
    if (!b->sparse && b->width == p->cols &&
        (q = resize(b->x, n * p->cols, sizeof *b->x)))
        b->x = q;
    if (b->sparse && (q = resize(b->start, b->rows + 1, sizeof *b->start)))
        b->start = q;
    if (b->sparse && (q = resize(b->col, b->nnz, sizeof *b->col)))
        b->col = q;
    if (b->sparse && (q = resize(b->val, b->nnz, sizeof *b->val)))
        b->val = q;
    t->row_ids = b->ids;
    t->y = b->y;
    t->x = b->x;
    t->row_start = b->start;
    t->col = b->col;
    t->val = b->val;
    t->nnz = b->nnz;
    t->d.rows = b->rows;
    t->d.cols = p->cols;
    t->d.total_rows = p->rows;
    t->d.row_ids = t->row_ids;
    t->d.y = t->y;
    t->d.x = t->x;
    t->d.row_start = t->row_start;
    t->d.col = t->col;
    t->d.val = t->val;
    t->d.source = t->source;
    memset(b, 0, sizeof *b);
    return 0;
}

int data_put_values(struct data_pass *p, size_t r, const double *v, size_t nv,
                    int has_target, double y)
{
    int store;
    p->rows++;
    if (!data_take(p, r, &store))
        return 0;
    return data_store_values(p, r, v, nv, has_target, y, store);
}

int data_store_values(struct data_pass *p, size_t r, const double *v, size_t nv,
                      int has_target, double y, int store)
{
    double scale = p->o->scale != 0 ? p->o->scale : 1;
    for (size_t j = 0; j < nv; j++)
        if (!isfinite(v[j]) || (!(has_target && j == p->target) &&
                                data_float_over(p, v[j] * scale)))
            return 1 + (int)(j < INT32_MAX ? j : INT32_MAX);
    if (!has_target && !isfinite(y))
        return 1 + (int)(nv < INT32_MAX ? nv : INT32_MAX);
    if (!store)
        return 0;
    double *slot = NULL;
    if (data_build_begin(p, r, &slot) < 0)
        return -1;
    p->b->y[p->b->rows] = y;
    for (size_t j = 0; j < nv; j++) {
        if (has_target && j == p->target) {
            p->b->y[p->b->rows] = v[j];
            continue;
        }
        size_t k = j - (has_target && j > p->target);
        double x = v[j] * scale;
        if (slot)
            slot[k] = x;
        else if (x != 0 && data_build_entry(p, k, x) < 0)
            return -1;
    }
    data_build_end(p);
    return 0;
}

double data_decode(const unsigned char *s, char kind, int size, int big)
{
    unsigned char b[8];
    for (int i = 0; i < size; i++)
        b[i] = s[big ? size - 1 - i : i]; /* now little-endian */
    uint64_t u = 0;
    for (int i = size - 1; i >= 0; i--)
        u = u << 8 | b[i];
    if (kind == 'f' && size == 8) {
        double d;
        memcpy(&d, &u, sizeof d);
        return d;
    }
    if (kind == 'f' && size == 4) {
        uint32_t u32 = (uint32_t)u;
        float f;
        memcpy(&f, &u32, sizeof f);
        return (double)f;
    }
    if (kind == 'u')
        return (double)u;
    /* signed: sign-extend from size bytes */
    if (size < 8 && (u >> (8 * size - 1)) & 1)
        u |= ~(uint64_t)0 << (8 * size);
    return (double)(int64_t)u;
}

/* Read want values of src (width a row), from row, into *buf, which
 * grows (its capacity in *cap) only as the bytes arrive: a header that
 * promises rows of 10^9 values costs no more memory than the file holds.
 * 0, or -1 with err set when the file ends or fails first. */
static int src_read(struct data_pass *p, struct data_source *src,
                    unsigned char **buf, size_t *cap, size_t want, size_t width,
                    size_t row)
{
    size_t bytes = want * (size_t)src->size, done = 0;
    while (done < bytes) {
        if (done == *cap) {
            size_t grown = *cap ? 2 * *cap : (size_t)1 << 16;
            grown = grown < bytes ? grown : bytes;
            unsigned char *b = realloc(*buf, grown);
            if (!b)
                return data_oom(p);
            *buf = b;
            *cap = grown;
        }
        size_t piece = (*cap < bytes ? *cap : bytes) - done;
        size_t got = src->read(src->h, *buf + done, piece);
        src->at += got;
        done += got;
        if (got < piece)
            return aia_seterr(p->err,
                              "%s: byte %ju: the data end in row %zu of the "
                              "%zu the header promises (%s)",
                              src->path, (uintmax_t)src->at,
                              row + done / (size_t)src->size / width + 1,
                              src->rows,
                              src->why ? src->why(src->h) : "short file");
    }
    return 0;
}

int data_array_pass(struct data_pass *p, struct data_source *x, size_t width,
                    int has_target, struct data_source *t)
{
    size_t rowb;
    if (util_mul(width, (size_t)x->size, &rowb) < 0)
        return aia_seterr(p->err,
                          "%s: rows of %zu values of %d bytes: more bytes "
                          "than a file can hold",
                          x->path, width, x->size);
    size_t chunk = (1u << 20) / (rowb ? rowb : 1);
    chunk = chunk ? chunk : 1;
    /* the buffers grow as the file fills them; v once a row has come */
    unsigned char *buf = NULL, *tbuf = NULL;
    size_t cap = 0, tcap = 0;
    double *v = NULL;
    int rc = 0;
    for (size_t r = 0; rc == 0 && r < x->rows;) {
        size_t want = x->rows - r < chunk ? x->rows - r : chunk;
        size_t at = x->at;
        if (src_read(p, x, &buf, &cap, want * width, width, r) < 0 ||
            (t && src_read(p, t, &tbuf, &tcap, want, 1, r) < 0)) {
            rc = -1;
            break;
        }
        if (!v && !(v = malloc((width ? width : 1) * sizeof *v))) {
            rc = data_oom(p);
            break;
        }
        for (size_t i = 0; i < want && rc == 0; i++, r++) {
            for (size_t j = 0; j < width; j++)
                v[j] = data_decode(buf + i * rowb + j * (size_t)x->size,
                                   x->kind, x->size, x->big);
            double y = t ? data_decode(tbuf + i * (size_t)t->size, t->kind,
                                       t->size, t->big)
                         : 0;
            int bad = data_put_values(p, r, v, width, has_target, y);
            if (bad < 0)
                rc = -1;
            else if (bad > 0 && (size_t)(bad - 1) < width) {
                char why[AIA_ERROR_LEN / 2];
                rc = aia_seterr(
                    p->err, "%s: row %zu, column %d (byte %ju): %s", x->path,
                    r + 1, bad,
                    (uintmax_t)(at + i * rowb + (size_t)(bad - 1) * x->size),
                    data_value_why(v[bad - 1],
                                   p->o->scale != 0 ? p->o->scale : 1, why,
                                   sizeof why));
            } else if (bad > 0)
                rc = aia_seterr(p->err,
                                "%s: row %zu (byte %ju): the target %s is "
                                "not allowed",
                                t->path, r + 1,
                                (uintmax_t)(t->at - (want - i) * t->size),
                                isnan(y) ? "NaN" : "infinity");
        }
    }
    free(buf);
    free(tbuf);
    free(v);
    return rc;
}
