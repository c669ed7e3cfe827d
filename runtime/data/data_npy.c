/* data_npy.c - NumPy .npy files (versions 1.0 to 3.0): a 2-D array of
 * features (the target a column, or the targets in a second, 1-D file).
 *
 * The header is a Python dict literal, e.g.
 *     {'descr': '<f8', 'fortran_order': False, 'shape': (60000, 784), }
 * padded with blanks to a multiple of 64 bytes; the values follow in C
 * order.  Every refusal names the file and the byte where the problem is.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/util.h"
#include "data_pass.h"

/* Longest header read: numpy writes a few hundred bytes. */
#define HEADER_MAX (1u << 20)

struct npy {
    const char *path;
    FILE *f;
    char kind;
    int size, big;
    size_t ndim, shape[3];
    uintmax_t offset; /* the first value's byte */
    uintmax_t fsize;
};

static size_t npy_read(void *h, void *buf, size_t bytes)
{
    return fread(buf, 1, bytes, h);
}

/* The byte of s in the file: the header's text starts at base. */
#define AT(s) ((uintmax_t)((s)-text) + base)

/* s at the value of key in the dict text; NULL when absent. */
static const char *value_of(const char *text, const char *key)
{
    const char *s = strstr(text, key);
    if (!s)
        return NULL;
    s += strlen(key);
    while (*s == ' ')
        s++;
    if (*s != ':')
        return NULL;
    for (s++; *s == ' ';)
        s++;
    return s;
}

static int parse_header(struct data_pass *p, struct npy *a, const char *text,
                        uintmax_t base, int need_2d)
{
    const char *s = value_of(text, "'descr'");
    if (!s || (*s != '\'' && *s != '"'))
        return aia_seterr(p->err, "%s: byte %ju: no 'descr' in the header",
                          a->path, (uintmax_t)base);
    char q = *s++;
    const char *e = strchr(s, q);
    size_t len = e ? (size_t)(e - s) : 0;
    char order = len ? s[0] : 0, kind = len > 1 ? s[1] : 0;
    int size = len > 2 ? atoi(s + 2) : 0;
    int ok = len >= 3 && len <= 4 && strchr("<>|=", order) &&
             ((kind == 'f' && (size == 4 || size == 8)) ||
              ((kind == 'i' || kind == 'u') &&
               (size == 1 || size == 2 || size == 4 || size == 8)));
    if (!ok)
        return aia_seterr(p->err,
                          "%s: byte %ju: dtype '%.*s' is not taken (float64 "
                          "'<f8', float32 '<f4', or integers '<i4' '|u1' ...)",
                          a->path, AT(s), (int)(len > 16 ? 16 : len), s);
    a->kind = kind;
    a->size = size;
    a->big = order == '>' && size > 1;
    s = value_of(text, "'fortran_order'");
    if (!s || (strncmp(s, "False", 5) != 0 && strncmp(s, "True", 4) != 0))
        return aia_seterr(p->err,
                          "%s: byte %ju: no 'fortran_order' in the "
                          "header",
                          a->path, s ? AT(s) : base);
    if (*s == 'T')
        return aia_seterr(p->err,
                          "%s: byte %ju: fortran_order True: the rows must be "
                          "in C order (numpy.ascontiguousarray)",
                          a->path, AT(s));
    s = value_of(text, "'shape'");
    if (!s || *s != '(')
        return aia_seterr(p->err, "%s: byte %ju: no 'shape' in the header",
                          a->path, s ? AT(s) : base);
    a->ndim = 0;
    for (s++;;) {
        while (*s == ' ' || *s == ',')
            s++;
        if (*s == ')')
            break;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || errno || a->ndim == 3)
            return aia_seterr(p->err,
                              "%s: byte %ju: the shape is not 1 to 3 whole "
                              "numbers",
                              a->path, AT(s));
        a->shape[a->ndim++] = (size_t)v;
        s = end;
    }
    int good = need_2d ? a->ndim == 2
                       : a->ndim == 1 || (a->ndim == 2 && a->shape[1] == 1);
    if (!good)
        return aia_seterr(p->err, "%s: byte %ju: a %zu-dimensional array; %s",
                          a->path, AT(s), a->ndim,
                          need_2d ? "the rows need a 2-D one (rows x columns)"
                                  : "targets need a 1-D one");
    return 0;
}

/* Open path and read its header into a. */
static int npy_open(struct data_pass *p, struct npy *a, const char *path,
                    int need_2d)
{
    memset(a, 0, sizeof *a);
    a->path = path;
    if (!(a->f = fopen(path, "rb")))
        return aia_seterr(p->err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(a->f), &st) < 0)
        return aia_seterr(p->err, "%s: %s", path, strerror(errno));
    a->fsize = (uintmax_t)st.st_size;
    unsigned char m[12];
    size_t got = fread(m, 1, sizeof m, a->f);
    if (got < 10 || memcmp(m, "\x93NUMPY", 6) != 0)
        return aia_seterr(
            p->err, "%s: byte 0: not a .npy file (no \\x93NUMPY magic)", path);
    if (m[6] < 1 || m[6] > 3)
        return aia_seterr(p->err, "%s: byte 6: version %d.%d is not 1, 2 or 3",
                          path, m[6], m[7]);
    uintmax_t hlen = m[8] | (uintmax_t)m[9] << 8, base = 10;
    if (m[6] >= 2) {
        if (got < 12)
            return aia_seterr(p->err,
                              "%s: byte %zu: the file ends in its "
                              "header",
                              path, got);
        hlen |= (uintmax_t)m[10] << 16 | (uintmax_t)m[11] << 24;
        base = 12;
    }
    if (hlen > HEADER_MAX || base + hlen > a->fsize)
        return aia_seterr(p->err,
                          "%s: byte 8: a header of %ju bytes does not fit "
                          "in the file of %ju",
                          path, hlen, a->fsize);
    char *text = malloc((size_t)hlen + 1);
    if (!text)
        return data_oom(p);
    int rc = 0;
    if (fseek(a->f, (long)base, SEEK_SET) != 0 ||
        fread(text, 1, (size_t)hlen, a->f) != (size_t)hlen)
        rc = aia_seterr(p->err, "%s: read error", path);
    text[hlen] = '\0';
    if (rc == 0 && strlen(text) != hlen)
        rc = aia_seterr(p->err, "%s: byte %ju: a NUL byte in the header", path,
                        base + strlen(text));
    if (rc == 0)
        rc = parse_header(p, a, text, base, need_2d);
    free(text);
    if (rc < 0)
        return -1;
    a->offset = base + hlen;
    size_t per = a->ndim == 2 ? a->shape[1] : 1, values, bytes;
    /* a shape whose byte count wraps around 2^64 would pass for a small
     * file (2^61 + 1 values of 8 bytes "need" 8) */
    if (util_mul(a->shape[0], per, &values) < 0 ||
        util_mul(values, (size_t)a->size, &bytes) < 0 ||
        bytes > UINTMAX_MAX - a->offset)
        return aia_seterr(p->err,
                          "%s: byte %ju: the shape (%zu x %zu of %d bytes) "
                          "needs more bytes than a file can hold, the file "
                          "has %ju",
                          path, base, a->shape[0], per, a->size, a->fsize);
    uintmax_t want = a->offset + bytes;
    if (want != a->fsize)
        return aia_seterr(p->err,
                          "%s: byte %ju: the shape (%zu x %zu of %d bytes) "
                          "needs %ju bytes in all, the file has %ju",
                          path, a->offset, a->shape[0], per, a->size, want,
                          a->fsize);
    return 0;
}

int data_npy_pass(struct data_pass *p)
{
    const struct data_opts *o = p->o;
    struct npy x, t = {0};
    int rc = -1, has_target = !o->targets;
    if (npy_open(p, &x, o->path, 1) < 0)
        goto out;
    if (o->targets && npy_open(p, &t, o->targets, 0) < 0)
        goto out;
    size_t n = x.shape[0], width = x.shape[1];
    if (o->targets && t.shape[0] != n) {
        aia_seterr(p->err, "%s: %zu targets for the %zu rows of %s", t.path,
                   t.shape[0], n, x.path);
        goto out;
    }
    if (width < 1 + (size_t)has_target) {
        aia_seterr(p->err, "%s: %zu columns: a row needs %s", x.path, width,
                   has_target ? "a target and at least one feature (or give "
                                "targets)"
                              : "at least one feature");
        goto out;
    }
    if (n == 0) {
        rc = 0; /* "no data rows", said by the caller */
        goto out;
    }
    p->cols = width - (size_t)has_target;
    if ((has_target && data_target(p, width) < 0) ||
        data_build_init(p, p->cols) < 0)
        goto out;
    struct data_source xs = {x.path, npy_read, NULL, x.f,     x.kind,
                             x.size, x.big,    n,    x.offset};
    struct data_source ts = {t.path, npy_read, NULL, t.f,     t.kind,
                             t.size, t.big,    n,    t.offset};
    if (fseek(x.f, (long)x.offset, SEEK_SET) != 0 ||
        (t.f && fseek(t.f, (long)t.offset, SEEK_SET) != 0)) {
        aia_seterr(p->err, "%s: cannot seek: %s", x.path, strerror(errno));
        goto out;
    }
    rc = data_array_pass(p, &xs, width, has_target, t.f ? &ts : NULL);
out:
    if (x.f)
        fclose(x.f);
    if (t.f)
        fclose(t.f);
    return rc;
}

int data_npy_shape(struct data_pass *p, double *rows, double *cols)
{
    struct npy x;
    int rc = npy_open(p, &x, p->o->path, 1);
    if (x.f)
        fclose(x.f);
    if (rc < 0)
        return -1;
    *rows = (double)x.shape[0];
    *cols = (double)x.shape[1];
    return 0;
}
