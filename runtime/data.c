/* data.c - data files to tables: options, rows kept, binary files. */
#include <config.h>

#include "data.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "data_pass.h"
#include "util.h"

/* Bytes read at a time from a binary file (whole rows, at least one). */
#define READ_CHUNK (1u << 20)

void data_opts_init(struct data_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = DATA_CSV;
    o->header = DATA_HEADER_AUTO;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcasecmp(s + ls - lx, suffix) == 0;
}

int data_format_guess(const char *path)
{
    static const struct {
        const char *ext;
        int format;
    } known[] = {
        {".csv", DATA_CSV},       {".tsv", DATA_CSV},
        {".txt", DATA_CSV},       {".svm", DATA_LIBSVM},
        {".libsvm", DATA_LIBSVM}, {".svmlight", DATA_LIBSVM},
        {".bin", DATA_BINARY},    {".f64", DATA_BINARY},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (ends_with(path, known[i].ext))
            return known[i].format;
    return -1;
}

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

static int oom(struct data_pass *p)
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
        return oom(p);
    if (b->sparse)
        b->start[0] = 0;
    return 0;
}

int data_build_begin(struct data_pass *p, size_t id, double **slot)
{
    struct data_build *b = p->b;
    if (b->rows == b->cap &&
        (b->cap > SIZE_MAX / 2 || build_reserve(b, 2 * b->cap) < 0))
        return oom(p);
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
            return oom(p);
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

static void build_free(struct data_build *b)
{
    free(b->ids);
    free(b->y);
    free(b->x);
    free(b->start);
    free(b->col);
    free(b->val);
    memset(b, 0, sizeof *b);
}

/* Move b into t, spreading sparse rows out when the caller wants dense
 * ones (libsvm files are read sparse). */
static int build_finish(struct data_pass *p, struct data_table *t)
{
    struct data_build *b = p->b;
    const struct data_opts *o = p->o;
    if (b->sparse && !o->sparse) {
        if (b->rows > SIZE_MAX / p->cols)
            return oom(p);
        double *x = calloc(b->rows ? b->rows * p->cols : 1, sizeof *x);
        if (!x)
            return oom(p);
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
            return oom(p);
    }
    t->source = strdup(o->path);
    if (!t->source)
        return oom(p);
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

/* ------------------------------------------------------------------ */
/* Binary files                                                        */

static double get_le(const unsigned char *s)
{
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | s[i];
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static int bin_rows(struct data_pass *p, FILE *f, size_t n, size_t cols)
{
    size_t rowb = cols * 8, chunk = READ_CHUNK / rowb;
    if (chunk == 0)
        chunk = 1;
    unsigned char *buf = malloc(chunk * rowb);
    if (!buf)
        return oom(p);
    int rc = 0;
    for (size_t r = 0; r < n && rc == 0;) {
        size_t want = n - r < chunk ? n - r : chunk;
        if (fread(buf, rowb, want, f) != want) {
            rc = aia_seterr(p->err, "%s: read error: %s", p->o->path,
                            ferror(f) ? strerror(errno) : "file shrank");
            break;
        }
        for (size_t i = 0; i < want && rc == 0; i++, r++) {
            int store;
            p->rows++;
            if (!data_take(p, r, &store))
                continue;
            double *slot = NULL;
            if (store && data_build_begin(p, r, &slot) < 0) {
                rc = -1;
                break;
            }
            for (size_t j = 0; j < cols; j++) {
                double v = get_le(buf + i * rowb + j * 8);
                if (!isfinite(v)) {
                    rc = aia_seterr(p->err,
                                    "%s: row %zu, column %zu (byte %zu): "
                                    "%s is not allowed",
                                    p->o->path, r + 1, j + 1, r * rowb + j * 8,
                                    isnan(v) ? "NaN" : "infinity");
                    break;
                }
                if (!store)
                    continue;
                size_t k = j - (j > p->target);
                if (j == p->target)
                    p->b->y[p->b->rows] = v;
                else if (slot)
                    slot[k] = v;
                else if (v != 0 && data_build_entry(p, k, v) < 0) {
                    rc = -1;
                    break;
                }
            }
            if (store && rc == 0)
                data_build_end(p);
        }
    }
    free(buf);
    return rc;
}

static int bin_pass(struct data_pass *p)
{
    const struct data_opts *o = p->o;
    size_t cols = o->cols;
    if (cols < 2)
        return aia_seterr(p->err,
                          "%s: a binary file needs cols, its float64 values "
                          "per row with the target (at least 2)",
                          o->path);
    if (cols > SIZE_MAX / 8)
        return aia_seterr(p->err, "%s: %zu columns is too many", o->path, cols);
    FILE *f = fopen(o->path, "rb");
    if (!f)
        return aia_seterr(p->err, "%s: cannot open: %s", o->path,
                          strerror(errno));
    struct stat st;
    int rc = -1;
    if (fstat(fileno(f), &st) < 0) {
        aia_seterr(p->err, "%s: %s", o->path, strerror(errno));
        goto out;
    }
    uintmax_t size = (uintmax_t)st.st_size;
    if (size % (cols * 8) != 0) {
        aia_seterr(p->err,
                   "%s: %ju bytes is not a whole number of rows of %zu "
                   "float64 values",
                   o->path, size, cols);
        goto out;
    }
    uintmax_t n = size / (cols * 8);
    if (o->rows && o->rows != n) {
        aia_seterr(p->err,
                   "%s: %ju bytes hold %ju rows of %zu float64 values, "
                   "not %zu",
                   o->path, size, n, cols, o->rows);
        goto out;
    }
    if (n == 0) {
        rc = 0; /* "no data rows", said by the caller */
        goto out;
    }
    p->cols = cols - 1;
    if (data_target(p, cols) < 0 || data_build_init(p, cols - 1) < 0)
        goto out;
    rc = bin_rows(p, f, (size_t)n, cols);
out:
    fclose(f);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The entry points                                                    */

static int check_opts(const struct data_opts *o, struct aia_error *err)
{
    if (!o->path || !*o->path)
        return aia_seterr(err, "no data file given");
    if (o->format != DATA_CSV && o->format != DATA_LIBSVM &&
        o->format != DATA_BINARY)
        return aia_seterr(err, "%s: unknown data format %d", o->path,
                          o->format);
    if (o->header < DATA_HEADER_AUTO || o->header > DATA_HEADER_YES)
        return aia_seterr(err, "%s: header must be -1 (auto), 0 or 1", o->path);
    char d = o->delimiter;
    if (d == '"' || d == '\n' || d == '\r')
        return aia_seterr(
            err, "%s: the delimiter cannot be a quote or a line end", o->path);
    if (o->format == DATA_LIBSVM && o->target)
        return aia_seterr(err,
                          "%s: a libsvm file's target is its label; no "
                          "target column can be chosen",
                          o->path);
    if (o->features > UINT32_MAX)
        return aia_seterr(err, "%s: %zu features is too many", o->path,
                          o->features);
    return 0;
}

/* One pass over the file with p set up; frees what the pass used. */
static int run(struct data_pass *p)
{
    const struct data_opts *o = p->o;
    int rc;
    if (o->format == DATA_BINARY)
        rc = bin_pass(p);
    else if (o->format == DATA_CSV)
        rc = data_csv_pass(p);
    else
        rc = data_svm_pass(p);
    if (p->names)
        for (size_t j = 0; j < p->ncells; j++)
            free(p->names[j]);
    free(p->names);
    free(p->cells);
    if (rc < 0)
        return -1;
    if (p->rows == 0)
        return aia_seterr(p->err, "%s: no data rows", o->path);
    if (o->format == DATA_LIBSVM) {
        p->cols = o->features ? o->features : p->maxcol;
        if (p->cols == 0)
            return aia_seterr(p->err, "%s: no features in the rows read",
                              o->path);
    }
    return 0;
}

int data_scan(const struct data_opts *o, size_t *rows, size_t *cols,
              struct aia_error *err)
{
    if (check_opts(o, err) < 0)
        return -1;
    struct data_pass p = {.o = o, .check_all = 1, .err = err};
    if (run(&p) < 0)
        return -1;
    *rows = p.rows;
    *cols = p.cols;
    return 0;
}

int data_read(const struct data_opts *o, int (*keep)(size_t r, void *arg),
              void *arg, struct data_table *t, struct aia_error *err)
{
    memset(t, 0, sizeof *t);
    if (check_opts(o, err) < 0)
        return -1;
    struct data_build b = {.sparse = o->sparse || o->format == DATA_LIBSVM};
    struct data_pass p = {
        .o = o, .keep = keep, .arg = arg, .b = &b, .err = err};
    if (run(&p) < 0 || build_finish(&p, t) < 0) {
        build_free(&b);
        data_free(t);
        return -1;
    }
    return 0;
}

void data_free(struct data_table *t)
{
    if (!t)
        return;
    free(t->source);
    free(t->row_ids);
    free(t->y);
    free(t->x);
    free(t->row_start);
    free(t->col);
    free(t->val);
    memset(t, 0, sizeof *t);
}
