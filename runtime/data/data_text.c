/* data_text.c - the lines of CSV and libsvm files, checked and kept. */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "data_pass.h"

/* stdio buffer: large reads whatever the length of the lines. */
#define READ_BUFFER (1u << 20)

/* Error at line:col of the file. */
static int fail_at(struct data_pass *p, size_t line, size_t col,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail_at(struct data_pass *p, size_t line, size_t col,
                   const char *fmt, ...)
{
    char msg[AIA_ERROR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return aia_seterr(p->err, "%s:%zu:%zu: %s", p->o->path, line, col, msg);
}

/* s (len bytes) in quotes for a message, cut after 40 bytes. */
static const char *quoted(const char *s, size_t len, char *buf, size_t size)
{
    snprintf(buf, size, "'%.*s%s'", len > 40 ? 40 : (int)len, s,
             len > 40 ? "..." : "");
    return buf;
}

static int is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return 0;
    return 1;
}

/* Feed every line but trailing blank ones to fn, without its line end.
 * fn may write into the line (up to its NUL). */
static int each_line(struct data_pass *p,
                     int (*fn)(struct data_pass *p, char *s, size_t len,
                               size_t line))
{
    const char *path = p->o->path;
    FILE *f = fopen(path, "rb");
    if (!f)
        return aia_seterr(p->err, "%s: cannot open: %s", path, strerror(errno));
    setvbuf(f, NULL, _IOFBF, READ_BUFFER);
    char *buf = NULL;
    size_t cap = 0, line = 0, blank = 0;
    ssize_t got;
    int rc = 0;
    while (rc == 0 && (got = getline(&buf, &cap, f)) >= 0) {
        char *s = buf;
        size_t len = (size_t)got;
        line++;
        if (len && s[len - 1] == '\n')
            len--;
        if (len && s[len - 1] == '\r')
            len--;
        s[len] = '\0';
        if (line == 1 && len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
            s += 3;
            len -= 3;
        }
        const char *nul = memchr(s, '\0', len);
        if (nul)
            rc = fail_at(p, line, (size_t)(nul - s) + 1,
                         "a NUL byte: this is not a text file");
        else if (is_blank(s, len))
            blank = blank ? blank : line;
        else if (blank)
            rc = aia_seterr(p->err,
                            "%s:%zu: empty line (empty lines are allowed "
                            "only at the end of the file)",
                            path, blank);
        else
            rc = fn(p, s, len, line);
    }
    if (rc == 0 && ferror(f))
        rc = aia_seterr(p->err, "%s: read error: %s", path, strerror(errno));
    free(buf);
    fclose(f);
    return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* CSV                                                                 */

/* The first of ',', ';', tab that s holds outside quotes; ' ' (runs of
 * blanks) when none. */
static char detect(const char *s)
{
    static const char order[] = ",;\t";
    int seen[3] = {0, 0, 0}, inq = 0;
    for (; *s; s++) {
        if (*s == '"')
            inq = !inq;
        else if (!inq)
            for (int i = 0; i < 3; i++)
                seen[i] |= *s == order[i];
    }
    for (int i = 0; i < 3; i++)
        if (seen[i])
            return order[i];
    return ' ';
}

/* Blanks are trimmed around cells: spaces, and tabs unless they part. */
static int blank_for(char c, char delim)
{
    return c == ' ' || (c == '\t' && delim != '\t');
}

/* Split s in place into p->cells (NUL-terminated, unquoted); sets *n. */
static int split(struct data_pass *p, char *s, size_t line, size_t *n)
{
    const char d = p->delim;
    const int runs = d == ' ';
    char *r = s;
    size_t k = 0;
    for (;;) {
        while (blank_for(*r, d))
            r++;
        if (runs && !*r)
            break;
        if (k == p->cellcap) {
            size_t cap = p->cellcap ? 2 * p->cellcap : 64;
            struct data_cell *c = realloc(p->cells, cap * sizeof *c);
            if (!c)
                return aia_seterr(p->err, "%s: out of memory", p->o->path);
            p->cells = c;
            p->cellcap = cap;
        }
        struct data_cell *c = &p->cells[k++];
        char *w = r, *next;
        c->s = r;
        c->at = (size_t)(r - s) + 1;
        if (*r == '"') {
            /* unquote in place: the text only ever moves left */
            for (r++;; r++) {
                if (!*r)
                    return fail_at(p, line, c->at, "a quote is not closed");
                if (*r == '"' && r[1] != '"')
                    break;
                r += *r == '"';
                *w++ = *r;
            }
            char *after = ++r;
            while (blank_for(*r, d))
                r++;
            int parted = runs ? r > after || !*r : *r == d || !*r;
            if (!parted)
                return fail_at(p, line, (size_t)(r - s) + 1,
                               "text after a closing quote");
            /* runs of blanks: r is at the next cell already */
            next = runs || !*r ? r : r + 1;
        } else {
            while (*r && *r != d && !(runs && *r == '\t'))
                r++;
            w = r;
            while (w > c->s && blank_for(w[-1], d))
                w--;
            next = *r ? r + 1 : r;
        }
        int more = *r != '\0';
        *w = '\0';
        if (!more)
            break;
        r = next;
    }
    *n = k;
    return 0;
}

/* Error at cell j of a row. */
static int cell_fail(struct data_pass *p, size_t line, size_t j,
                     const char *why)
{
    size_t at = p->cells[j].at;
    if (p->names)
        return fail_at(p, line, at, "column %zu ('%.40s'): %s", j + 1,
                       p->names[j], why);
    return fail_at(p, line, at, "column %zu: %s", j + 1, why);
}

/* Check the n cells of data row p->rows and keep them when store. */
static int csv_row(struct data_pass *p, size_t line, size_t n, int store)
{
    size_t r = p->rows++;
    if (n != p->ncells) {
        if (p->names)
            return aia_seterr(p->err,
                              "%s:%zu: %zu cells, but the header has %zu",
                              p->o->path, line, n, p->ncells);
        return aia_seterr(p->err, "%s:%zu: %zu cells, but line %zu has %zu",
                          p->o->path, line, n, p->first_line, p->ncells);
    }
    double *slot = NULL;
    if (store && data_build_begin(p, r, &slot) < 0)
        return -1;
    for (size_t j = 0; j < n; j++) {
        const char *s = p->cells[j].s;
        size_t len = strlen(s);
        double v;
        enum data_num kind = data_number(s, len, &v);
        if (kind != DATA_NUM_OK) {
            char buf[80];
            return cell_fail(p, line, j,
                             data_num_why(kind, s, len, buf, sizeof buf));
        }
        if (j != p->target && data_float_over(p, v)) {
            char q[64], buf[AIA_ERROR_LEN / 2];
            return cell_fail(
                p, line, j,
                data_float_why(quoted(s, len, q, sizeof q), 1, buf, sizeof buf));
        }
        if (!store)
            continue;
        size_t col = j - (j > p->target);
        if (j == p->target)
            p->b->y[p->b->rows] = v;
        else if (slot)
            slot[col] = v;
        else if (v != 0 && data_build_entry(p, col, v) < 0)
            return -1;
    }
    if (store)
        data_build_end(p);
    return 0;
}

/* A header cell: neither a number (strtod's whole syntax, NaN included)
 * nor empty. */
static int is_name(const char *s)
{
    char *end;
    if (!*s)
        return 0;
    (void)strtod(s, &end);
    return *end != '\0';
}

/* The first line: delimiter, header, width, target; then a row. */
static int csv_first(struct data_pass *p, char *s, size_t line)
{
    const struct data_opts *o = p->o;
    size_t n;
    p->started = 1;
    p->first_line = line;
    p->delim = o->delimiter ? o->delimiter : detect(s);
    if (split(p, s, line, &n) < 0)
        return -1;
    int header = o->header == DATA_HEADER_YES;
    for (size_t j = 0; o->header == DATA_HEADER_AUTO && j < n; j++)
        header |= is_name(p->cells[j].s);
    if (n < 2)
        return aia_seterr(p->err,
                          "%s:%zu: one column only; a row needs a target "
                          "and at least one feature",
                          o->path, line);
    p->ncells = n;
    if (header) {
        p->names = calloc(n, sizeof *p->names);
        for (size_t j = 0; p->names && j < n; j++)
            if (!(p->names[j] = strdup(p->cells[j].s)))
                return aia_seterr(p->err, "%s: out of memory", o->path);
        if (!p->names)
            return aia_seterr(p->err, "%s: out of memory", o->path);
    }
    p->cols = n - 1;
    if (data_target(p, n) < 0 || data_build_init(p, n - 1) < 0)
        return -1;
    int store;
    if (header)
        return 0;
    if (!data_take(p, 0, &store)) {
        p->rows++;
        return 0;
    }
    return csv_row(p, line, n, store);
}

static int csv_line(struct data_pass *p, char *s, size_t len, size_t line)
{
    (void)len;
    if (!p->started)
        return csv_first(p, s, line);
    int store;
    if (!data_take(p, p->rows, &store)) {
        p->rows++;
        return 0;
    }
    size_t n;
    if (split(p, s, line, &n) < 0)
        return -1;
    return csv_row(p, line, n, store);
}

int data_csv_pass(struct data_pass *p)
{
    return each_line(p, csv_line);
}

/* ------------------------------------------------------------------ */
/* libsvm                                                              */

static size_t skip_blanks(const char *s, size_t i, size_t len)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

static size_t token_end(const char *s, size_t i, size_t len)
{
    while (i < len && s[i] != ' ' && s[i] != '\t')
        i++;
    return i;
}

/* The entry index:value in s[a, e); sets *idx (from 1) and *v. */
static int svm_entry(struct data_pass *p, const char *s, size_t a, size_t e,
                     size_t line, size_t prev, size_t *idx, double *v)
{
    char q[64], why[80];
    const char *colon = memchr(s + a, ':', e - a);
    if (!colon)
        return fail_at(p, line, a + 1, "%s is not index:value",
                       quoted(s + a, e - a, q, sizeof q));
    size_t i = 0;
    const char *c = s + a;
    for (; c < colon && *c >= '0' && *c <= '9'; c++) {
        if (i > (UINT32_MAX - (size_t)(*c - '0')) / 10)
            return fail_at(p, line, a + 1, "index %s is too large",
                           quoted(s + a, (size_t)(colon - s) - a, q, sizeof q));
        i = 10 * i + (size_t)(*c - '0');
    }
    if (c != colon || c == s + a)
        return fail_at(p, line, a + 1, "%s is not an index",
                       quoted(s + a, (size_t)(colon - s) - a, q, sizeof q));
    if (i == 0)
        return fail_at(p, line, a + 1, "index 0: indices count from 1");
    if (i <= prev)
        return fail_at(p, line, a + 1,
                       "index %zu after %zu: indices must increase", i, prev);
    if (p->o->features && i > p->o->features)
        return fail_at(p, line, a + 1, "index %zu is above the %zu features", i,
                       p->o->features);
    size_t at = (size_t)(colon - s) + 1, len = e - at;
    if (len == 0)
        return fail_at(p, line, at + 1, "index %zu: no value after ':'", i);
    enum data_num kind = data_number(s + at, len, v);
    if (kind != DATA_NUM_OK)
        return fail_at(p, line, at + 1, "index %zu: %s", i,
                       data_num_why(kind, s + at, len, why, sizeof why));
    if (data_float_over(p, *v)) {
        char big[AIA_ERROR_LEN / 2];
        return fail_at(
            p, line, at + 1, "index %zu: %s", i,
            data_float_why(quoted(s + at, len, q, sizeof q), 1, big,
                           sizeof big));
    }
    *idx = i;
    return 0;
}

static int svm_line(struct data_pass *p, char *s, size_t len, size_t line)
{
    const char *hash = memchr(s, '#', len);
    if (hash)
        len = (size_t)(hash - s);
    size_t i = skip_blanks(s, 0, len);
    if (i == len)
        return 0; /* a comment */
    int store;
    size_t r = p->rows++;
    if (!data_take(p, r, &store))
        return 0;
    size_t e = token_end(s, i, len);
    double y;
    enum data_num kind = data_number(s + i, e - i, &y);
    if (kind != DATA_NUM_OK) {
        char why[80];
        return fail_at(p, line, i + 1, "label: %s",
                       data_num_why(kind, s + i, e - i, why, sizeof why));
    }
    double *slot;
    if (store && data_build_begin(p, r, &slot) < 0)
        return -1;
    if (store)
        p->b->y[p->b->rows] = y;
    size_t prev = 0;
    while ((i = skip_blanks(s, e, len)) < len) {
        e = token_end(s, i, len);
        size_t idx = 0;
        double v;
        if (svm_entry(p, s, i, e, line, prev, &idx, &v) < 0)
            return -1;
        prev = idx;
        if (idx > p->maxcol)
            p->maxcol = idx;
        if (store && data_build_entry(p, idx - 1, v) < 0)
            return -1;
    }
    if (store)
        data_build_end(p);
    return 0;
}

int data_svm_pass(struct data_pass *p)
{
    if (data_build_init(p, 0) < 0)
        return -1;
    return each_line(p, svm_line);
}
