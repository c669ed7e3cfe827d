/* codec.c - encoders and decoders of message payloads (codec.h). */
#include <config.h>

#include "codec.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

/* The registry: each codec's name, how wide a value is on the wire (0:
 * as its encoder says), its functions, and whether it is for answers only.
 * pool.codec's choices are made from it (codec_choices_init).  Adding a
 * codec is its id in codec.h and its entry here with its functions. */
struct codec_kind {
    const char *name;
    size_t width;
    int (*encode)(struct codec *c, const double *x, unsigned char *out,
                  size_t *bytes, struct aia_error *err);
    int (*decode)(struct codec *c, const unsigned char *in, size_t bytes,
                  double *x, struct aia_error *err);
    size_t (*bound)(const struct codec *c); /* NULL: width * n */
    int answers_only; /* it holds part of a vector back (not for queries) */
};

static const struct codec_kind *kind_of(int id);

const char *codec_name(int id)
{
    const struct codec_kind *k = kind_of(id);
    return k ? k->name : "?";
}

int codec_lookup(const char *name)
{
    for (int id = 0; id < CODEC_COUNT; id++)
        if (kind_of(id) && strcmp(kind_of(id)->name, name) == 0)
            return id;
    return -1;
}

char codec_query_choices[CODEC_CHOICES_LEN];
char codec_answer_choices[CODEC_CHOICES_LEN];

void codec_choices_init(void)
{
    size_t q = 0, a = 0;
    for (int id = 0; id < CODEC_COUNT; id++) {
        const struct codec_kind *k = kind_of(id);
        if (!k || !k->name)
            continue;
        a += (size_t)snprintf(codec_answer_choices + a,
                              a < CODEC_CHOICES_LEN ? CODEC_CHOICES_LEN - a : 0,
                              "%s%s", a ? "|" : "", k->name);
        if (!k->answers_only)
            q += (size_t)snprintf(codec_query_choices + q,
                                  q < CODEC_CHOICES_LEN ? CODEC_CHOICES_LEN - q
                                                        : 0,
                                  "%s%s", q ? "|" : "", k->name);
    }
}

int codec_available(int id)
{
    const struct codec_kind *k = kind_of(id);
    return k && k->encode && k->decode;
}

size_t codec_topk_count(double t, size_t n)
{
    if (n == 0)
        return 0;
    double k = t < 1 ? ceil(t * (double)n) : floor(t);
    if (k < 1)
        k = 1;
    return k >= (double)n ? n : (size_t)k;
}

int codec_init(struct codec *c, int id, size_t n, size_t k, int level,
               struct aia_error *err)
{
    *c = (struct codec){.id = id, .n = n, .k = k > n ? n : k, .level = level};
    if (!codec_available(id))
        return aia_seterr(err,
                          "codec %s: this aiarun was built without "
                          "it (configure found no libzstd)",
                          codec_name(id));
    if (id == CODEC_TOPK) {
        c->residual = calloc(n ? n : 1, sizeof *c->residual);
        c->idx = malloc((n ? n : 1) * sizeof *c->idx);
        if (!c->residual || !c->idx)
            return aia_seterr(err, "out of memory for the top-k residual");
    }
#ifdef HAVE_ZSTD
    if (id == CODEC_ZSTD) {
        c->zc = ZSTD_createCCtx();
        c->zd = ZSTD_createDCtx();
        /* a checksum, so that a damaged frame is refused */
        if (!c->zc || !c->zd ||
            ZSTD_isError(ZSTD_CCtx_setParameter(c->zc, ZSTD_c_compressionLevel,
                                                level)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(c->zc, ZSTD_c_checksumFlag, 1)))
            return aia_seterr(err, "zstd: cannot set up level %d", level);
    }
#endif
    return 0;
}

void codec_free(struct codec *c)
{
    free(c->residual);
    free(c->idx);
#ifdef HAVE_ZSTD
    ZSTD_freeCCtx(c->zc);
    ZSTD_freeDCtx(c->zd);
#endif
    c->residual = NULL;
    c->idx = NULL;
    c->zc = c->zd = NULL;
}

size_t codec_bound(const struct codec *c)
{
    const struct codec_kind *k = kind_of(c->id);
    if (!k)
        return 8 * c->n;
    return k->bound ? k->bound(c) : k->width * c->n;
}

/* x rounded to nearest (ties to even) with p significant bits, the
 * smallest normal being 2^emin (gradual underflow below it). */
static double round_to(double x, int p, int emin)
{
    if (x == 0)
        return x;
    int e;
    frexp(x, &e);
    int lead = e - 1 < emin ? emin : e - 1;
    double ulp = ldexp(1.0, lead - (p - 1));
    return nearbyint(x / ulp) * ulp;
}

static uint16_t half_bits(double r)
{
    uint16_t sign = signbit(r) ? 0x8000u : 0;
    double a = fabs(r);
    if (a < 0x1p-14)
        return sign | (uint16_t)(a * 0x1p24);
    int e;
    frexp(a, &e);
    int lead = e - 1;
    uint16_t mant = (uint16_t)((ldexp(a, -lead) - 1.0) * 1024.0);
    return sign | (uint16_t)((lead + 15) << 10) | mant;
}

static int half_value(uint16_t b, double *x)
{
    int exp = (b >> 10) & 0x1f, mant = b & 0x3ff;
    if (exp == 31)
        return -1;
    double a = exp == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, exp - 25);
    *x = b & 0x8000u ? -a : a;
    return 0;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int refuse(struct aia_error *err, const struct codec *c, double v,
                  size_t i, const char *why)
{
    return aia_seterr(err, "codec %s: cannot encode %g at index %zu: %s",
                      codec_name(c->id), v, i, why);
}

/* Order of top-k: larger magnitude first, then lower index. */
static int before(const double *v, size_t a, size_t b)
{
    double x = fabs(v[a]), y = fabs(v[b]);
    return x > y || (x == y && a < b);
}

/* Arrange idx[0..n) so that its first k are the k first in before's
 * order (quickselect; before is a strict total order, so the set is
 * exactly defined). */
static void select_top(size_t *idx, size_t n, size_t k, const double *v)
{
    size_t lo = 0, hi = n; /* the k-th lies in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2, t;
        t = idx[mid], idx[mid] = idx[hi - 1], idx[hi - 1] = t;
        size_t pivot = idx[hi - 1], store = lo;
        for (size_t i = lo; i < hi - 1; i++)
            if (before(v, idx[i], pivot)) {
                t = idx[i], idx[i] = idx[store], idx[store] = t;
                store++;
            }
        idx[hi - 1] = idx[store], idx[store] = pivot;
        if (store == k || store + 1 == k)
            return;
        if (store > k)
            hi = store;
        else
            lo = store + 1;
    }
}

static int by_index(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static int topk_encode(struct codec *c, const double *x, unsigned char *out,
                       size_t *bytes, struct aia_error *err)
{
    size_t n = c->n, k = c->k;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return refuse(err, c, x[i], i, "not a finite number");
    double *r = c->residual;
    for (size_t i = 0; i < n; i++) {
        r[i] += x[i]; /* what is owed, this answer included */
        c->idx[i] = i;
    }
    select_top(c->idx, n, k, r);
    qsort(c->idx, k, sizeof *c->idx, by_index);
    for (size_t j = 0; j < k; j++) {
        uint32_t i32 = (uint32_t)c->idx[j];
        memcpy(out + 4 * j, &i32, 4);
        memcpy(out + 4 * k + 8 * j, &r[c->idx[j]], 8);
        r[c->idx[j]] = 0;
    }
    *bytes = 12 * k;
    return 0;
}

static int topk_decode(struct codec *c, const unsigned char *in, size_t bytes,
                       double *x, struct aia_error *err)
{
    size_t k = c->k;
    if (bytes != 12 * k)
        return aia_seterr(err, "topk: %zu bytes, not the %zu of %zu entries",
                          bytes, 12 * k, k);
    memset(x, 0, c->n * sizeof *x);
    uint32_t prev = 0;
    for (size_t j = 0; j < k; j++) {
        uint32_t i;
        memcpy(&i, in + 4 * j, 4);
        if (i >= c->n || (j > 0 && i <= prev))
            return aia_seterr(err,
                              "topk: entry %zu has index %u (of %zu, "
                              "after %u)",
                              j, i, c->n, prev);
        memcpy(&x[i], in + 4 * k + 8 * j, 8);
        if (!isfinite(x[i]))
            return aia_seterr(err, "topk: entry %zu is not finite", j);
        prev = i;
    }
    return 0;
}

static int none_encode(struct codec *c, const double *x, unsigned char *out,
                       size_t *bytes, struct aia_error *err)
{
    (void)err;
    memcpy(out, x, 8 * c->n);
    *bytes = 8 * c->n;
    return 0;
}

static int none_decode(struct codec *c, const unsigned char *in, size_t bytes,
                       double *x, struct aia_error *err)
{
    (void)bytes, (void)err;
    memcpy(x, in, 8 * c->n);
    return 0;
}

static int f32_encode(struct codec *c, const double *x, unsigned char *out,
                      size_t *bytes, struct aia_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        float f = (float)x[i];
        if (!isfinite(f))
            return refuse(err, c, x[i], i, "beyond float's range (3.4e38)");
        memcpy(out + 4 * i, &f, 4);
    }
    *bytes = 4 * c->n;
    return 0;
}

static int f32_decode(struct codec *c, const unsigned char *in, size_t bytes,
                      double *x, struct aia_error *err)
{
    (void)bytes;
    for (size_t i = 0; i < c->n; i++) {
        float f;
        memcpy(&f, in + 4 * i, 4);
        if (!isfinite(f))
            return aia_seterr(err, "float32: value %zu is not finite", i);
        x[i] = f;
    }
    return 0;
}

static int f16_encode(struct codec *c, const double *x, unsigned char *out,
                      size_t *bytes, struct aia_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        double r = round_to(x[i], 11, -14);
        if (!(fabs(r) <= 65504))
            return refuse(err, c, x[i], i,
                          "beyond float16's range (65504): use bfloat16 or "
                          "float32");
        uint16_t b = half_bits(r);
        memcpy(out + 2 * i, &b, 2);
    }
    *bytes = 2 * c->n;
    return 0;
}

static int f16_decode(struct codec *c, const unsigned char *in, size_t bytes,
                      double *x, struct aia_error *err)
{
    (void)bytes;
    for (size_t i = 0; i < c->n; i++) {
        uint16_t b;
        memcpy(&b, in + 2 * i, 2);
        if (half_value(b, &x[i]) < 0)
            return aia_seterr(err, "float16: value %zu is not finite", i);
    }
    return 0;
}

static int bf16_encode(struct codec *c, const double *x, unsigned char *out,
                       size_t *bytes, struct aia_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        double r = round_to(x[i], 8, -126);
        if (!(fabs(r) <= 0x1.fep127))
            return refuse(err, c, x[i], i, "beyond bfloat16's range (3.39e38)");
        uint16_t b = (uint16_t)(float_bits((float)r) >> 16);
        memcpy(out + 2 * i, &b, 2);
    }
    *bytes = 2 * c->n;
    return 0;
}

static int bf16_decode(struct codec *c, const unsigned char *in, size_t bytes,
                       double *x, struct aia_error *err)
{
    (void)bytes;
    for (size_t i = 0; i < c->n; i++) {
        uint16_t b;
        memcpy(&b, in + 2 * i, 2);
        float f = bits_float((uint32_t)b << 16);
        if (!isfinite(f))
            return aia_seterr(err, "bfloat16: value %zu is not finite", i);
        x[i] = f;
    }
    return 0;
}

static size_t topk_bound(const struct codec *c)
{
    return 12 * c->k;
}

#ifdef HAVE_ZSTD
static size_t zstd_bound(const struct codec *c)
{
    return ZSTD_compressBound(8 * c->n);
}

static int zstd_encode(struct codec *c, const double *x, unsigned char *out,
                       size_t *bytes, struct aia_error *err)
{
    size_t z = ZSTD_compress2(c->zc, out, codec_bound(c), x, 8 * c->n);
    if (ZSTD_isError(z))
        return aia_seterr(err, "codec zstd: %s", ZSTD_getErrorName(z));
    *bytes = z;
    return 0;
}

static int zstd_decode(struct codec *c, const unsigned char *in, size_t bytes,
                       double *x, struct aia_error *err)
{
    size_t n = c->n;
    if (bytes > codec_bound(c))
        return aia_seterr(err,
                          "zstd: %zu bytes, more than the %zu any "
                          "encoding of %zu values takes",
                          bytes, codec_bound(c), n);
    unsigned long long size = ZSTD_getFrameContentSize(in, bytes);
    if (size != 8 * (unsigned long long)n)
        return aia_seterr(err, "zstd: not a frame of %zu values", n);
    if (ZSTD_findFrameCompressedSize(in, bytes) != bytes)
        return aia_seterr(err, "zstd: the frame is not %zu bytes long", bytes);
    size_t got = ZSTD_decompressDCtx(c->zd, x, 8 * n, in, bytes);
    if (ZSTD_isError(got) || got != 8 * n)
        return aia_seterr(err, "zstd: %s",
                          ZSTD_isError(got) ? ZSTD_getErrorName(got)
                                            : "short frame");
    return 0;
}
#else
#define zstd_encode NULL
#define zstd_decode NULL
#define zstd_bound NULL
#endif

static const struct codec_kind kinds[CODEC_COUNT] = {
    [CODEC_NONE] = {"none", 8, none_encode, none_decode, NULL},
    [CODEC_FLOAT32] = {"float32", 4, f32_encode, f32_decode, NULL},
    [CODEC_FLOAT16] = {"float16", 2, f16_encode, f16_decode, NULL},
    [CODEC_BFLOAT16] = {"bfloat16", 2, bf16_encode, bf16_decode, NULL},
    [CODEC_TOPK] = {"topk", 0, topk_encode, topk_decode, topk_bound, 1},
    [CODEC_ZSTD] = {"zstd", 0, zstd_encode, zstd_decode, zstd_bound},
};

static const struct codec_kind *kind_of(int id)
{
    return id >= 0 && id < CODEC_COUNT ? &kinds[id] : NULL;
}

int codec_encode(struct codec *c, const double *x, void *out, size_t *bytes,
                 struct aia_error *err)
{
    const struct codec_kind *k = kind_of(c->id);
    if (!k || !k->encode)
        return aia_seterr(err, "codec %d: unknown", c->id);
    return k->encode(c, x, out, bytes, err);
}

int codec_decode(struct codec *c, const void *in, size_t bytes, double *x,
                 struct aia_error *err)
{
    const struct codec_kind *k = kind_of(c->id);
    if (!k || !k->decode)
        return aia_seterr(err, "codec %d: unknown", c->id);
    if (k->width && bytes != k->width * c->n)
        return aia_seterr(err, "%s: %zu bytes, not the %zu of %zu values",
                          k->name, bytes, k->width * c->n, c->n);
    return k->decode(c, in, bytes, x, err);
}

int codec_decodes_finite(const struct codec *c)
{
    return c->id == CODEC_FLOAT32 || c->id == CODEC_FLOAT16 ||
           c->id == CODEC_BFLOAT16 || c->id == CODEC_TOPK;
}
