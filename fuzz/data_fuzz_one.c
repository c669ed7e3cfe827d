/* data_fuzz_one.c - the body of the data files' fuzz target
 * (fuzz/data_fuzz.c), apart so that t/fuzz-regress.c replays its inputs
 * in the ordinary build.  See data_fuzz.c for what an input holds.
 */
#include <config.h>

#include "data_fuzz.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

/* Tables larger than this (values) are not built: a job's memory
 * estimate refuses them before data_read is reached. */
#define MAX_VALUES (1u << 20)

/* A temporary file, already unlinked, holding len bytes; its path (by
 * its descriptor) in path.  Returns the stream, or NULL. */
static FILE *temp_file(const uint8_t *p, size_t len, char *path, size_t n)
{
    FILE *f = tmpfile();
    if (!f)
        return NULL;
    if (fwrite(p, 1, len, f) != len || fflush(f) != 0) {
        fclose(f);
        return NULL;
    }
    snprintf(path, n, "/proc/self/fd/%d", fileno(f));
    return f;
}

static int every_other(size_t r, void *arg)
{
    (void)arg;
    return r % 2 == 0;
}

static int defect(char *why, size_t n, const char *what, const char *text)
{
    snprintf(why, n, "%s: %s", what, text);
    return -2;
}

/* Whether a refusal names one of the files: "PATH: ..." or "PATH:LINE:". */
static int names_file(const char *text, const char *a, const char *b)
{
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    return (strncmp(text, a, la) == 0 && text[la] == ':') ||
           (b && strncmp(text, b, lb) == 0 && text[lb] == ':');
}

/* The table against the scan: its shape, its rows and its values. */
static int judge(const struct data_table *t, size_t rows, size_t cols, int half,
                 char *why, size_t n)
{
    size_t want = half ? (rows + 1) / 2 : rows;
    if (t->d.total_rows != rows || t->d.rows != want || t->d.cols != cols)
        return defect(why, n, "shape", "the table differs from the scan");
    for (size_t i = 0; i < t->d.rows; i++) {
        if (t->row_ids[i] != (half ? 2 * i : i))
            return defect(why, n, "rows", "a row id out of order");
        if (!isfinite(t->y[i]))
            return defect(why, n, "values", "a target that is not finite");
    }
    if (t->x) {
        for (size_t i = 0; i < t->d.rows * t->d.cols; i++)
            if (!isfinite(t->x[i]))
                return defect(why, n, "values", "a value not finite");
    } else {
        if (t->row_start[0] != 0 || t->row_start[t->d.rows] != t->nnz)
            return defect(why, n, "rows", "row starts do not cover nnz");
        for (size_t i = 0; i < t->d.rows; i++)
            if (t->row_start[i] > t->row_start[i + 1])
                return defect(why, n, "rows", "row starts decrease");
        for (size_t k = 0; k < t->nnz; k++)
            if (t->col[k] >= cols || !isfinite(t->val[k]))
                return defect(why, n, "values", "an entry out of range");
    }
    return 0;
}

int data_fuzz_one(const uint8_t *data, size_t size, char *why, size_t n)
{
    static const char delims[] = {0, ',', ';', ' '};
    if (size < 4)
        return 1;
    uint8_t flags = data[1], num = data[2];
    struct data_opts o;
    data_opts_init(&o);
    o.format = data[0] % 5;
    o.sparse = flags & 1;
    o.header = ((flags >> 1) & 3) % 3 - 1;
    o.delimiter = delims[(flags >> 3) & 3];
    char target[8];
    if (flags & 0x20) {
        snprintf(target, sizeof target, "%d", (int)num - 128);
        o.target = target;
    }
    if (o.format == DATA_BINARY)
        o.cols = 1 + num % 16u;
    if (o.format == DATA_LIBSVM && num % 4)
        o.features = num;
    size_t len = size - 4, second = 0;
    if ((flags & 0x80) && (o.format == DATA_NPY || o.format == DATA_IDX)) {
        second = data[3];
        if (second > len)
            second = len;
    }
    char path[64], tpath[64];
    FILE *f = temp_file(data + 4, len - second, path, sizeof path);
    FILE *tf = NULL;
    if (f && second &&
        (tf = temp_file(data + 4 + len - second, second, tpath, sizeof tpath)))
        o.targets = tpath;
    o.path = path;
    int rc = -1;
    if (!f || (second && !tf))
        goto out;
    struct aia_error err = {""};
    size_t rows = 0, cols = 0;
    struct data_table t;
    rc = 1;
    if (data_scan(&o, &rows, &cols, &err) < 0)
        goto refused;
    if (rows == 0 || cols == 0) {
        rc = defect(why, n, "scan", "accepted a file with no rows or columns");
        goto out;
    }
    /* dense libsvm rows too: a file of one line "1 992999995:0.5" is a
     * row of 8 GB (the memory estimate refuses it by its index) */
    if (!o.sparse && (cols > MAX_VALUES || rows > MAX_VALUES / cols)) {
        rc = 0;
        goto out;
    }
    if (rows > MAX_VALUES) {
        rc = 0;
        goto out;
    }
    int half = (flags & 0x40) != 0;
    /* a libsvm reader of part of a file is given the scan's count, as
     * the runtime does (the part's largest index may be smaller) */
    if (half && o.format == DATA_LIBSVM && !o.features)
        o.features = cols;
    if (data_read(&o, half ? every_other : NULL, NULL, &t, &err) < 0) {
        /* the scan accepted it: a read of the same file must too */
        rc = defect(why, n, "read", err.text);
        goto out;
    }
    rc = judge(&t, rows, cols, half, why, n);
    data_free(&t);
    goto out;
refused:
    if (memchr(err.text, 0, sizeof err.text) == NULL || !err.text[0])
        rc = defect(why, n, "refusal", "an empty or unterminated text");
    else if (!names_file(err.text, path, o.targets))
        rc = defect(why, n, "a refusal that names no file", err.text);
    else
        snprintf(why, n, "%s", err.text);
out:
    if (f)
        fclose(f);
    if (tf)
        fclose(tf);
    return rc;
}
