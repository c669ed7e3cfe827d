/* codec.c - each codec's round trip within its stated error, top-k's
 * choice and error feedback, and malformed encodings refused. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "tap.h"

/* The error codec.h states for x. */
static double bound(int id, double x)
{
    double a = fabs(x);
    switch (id) {
    case CODEC_FLOAT32:
        return fmax(0x1p-24 * a, 0x1p-150);
    case CODEC_FLOAT16:
        return fmax(0x1p-11 * a, 0x1p-25);
    case CODEC_BFLOAT16:
        return fmax((0x1p-8 + 0x1p-24) * a, 0x1p-134);
    default:
        return 0;
    }
}

/* Random values with magnitudes spread evenly on a log scale from lo to
 * hi, of either sign, and some zeros. */
static void fill(double *x, size_t n, struct aia_rng *g, double lo,
                 double hi)
{
    for (size_t i = 0; i < n; i++) {
        double u = aia_rng_uniform(g);
        double v = exp(log(lo) + u * (log(hi) - log(lo)));
        x[i] = i % 3 == 1 ? -v : v;
        if (i % 17 == 5)
            x[i] = 0;
    }
}

static void round_trips(int id, double lo, double hi, struct aia_rng *g)
{
    static const size_t sizes[] = {0, 1, 2, 7, 1000, 65537};
    struct aia_error err;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        struct codec c;
        if (codec_init(&c, id, n, 0, 3, &err) < 0)
            bail_out("%s", err.text);
        double *x = malloc((n + 1) * sizeof *x);
        double *y = malloc((n + 1) * sizeof *y);
        unsigned char *buf = malloc(codec_bound(&c) + 1);
        fill(x, n, g, lo, hi);
        size_t bytes = 0, bad = 0;
        int rc = codec_encode(&c, x, buf, &bytes, &err);
        ok(rc == 0, "%s: %zu values encoded%s%s", codec_name(id), n,
           rc ? ": " : "", rc ? err.text : "");
        ok(bytes <= codec_bound(&c), "%s: %zu values in %zu bytes (bound %zu)",
           codec_name(id), n, bytes, codec_bound(&c));
        rc = codec_decode(&c, buf, bytes, y, &err);
        ok(rc == 0, "%s: %zu values decoded%s%s", codec_name(id), n,
           rc ? ": " : "", rc ? err.text : "");
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            double e = fabs(y[i] - x[i]);
            if (e > bound(id, x[i]))
                bad++;
            if (x[i] != 0 && e / fabs(x[i]) > worst)
                worst = e / fabs(x[i]);
        }
        ok(bad == 0, "%s: %zu values within the stated error (worst "
                     "relative %.3g), %zu outside",
           codec_name(id), n, worst, bad);
        if (n > 0 && id != CODEC_ZSTD) {
            ok(codec_decode(&c, buf, bytes - 1, y, &err) < 0,
               "%s: %zu values: one byte short is refused (%s)",
               codec_name(id), n, err.text);
            ok(codec_decode(&c, buf, bytes + 1, y, &err) < 0,
               "%s: %zu values: one byte more is refused", codec_name(id),
               n);
        }
        codec_free(&c);
        free(x);
        free(y);
        free(buf);
    }
}

static void limits(void)
{
    struct aia_error err;
    struct codec c;
    unsigned char buf[64];
    size_t bytes;
    double x[2] = {1, 65504}, y[2];
    codec_init(&c, CODEC_FLOAT16, 2, 0, 0, &err);
    ok(codec_encode(&c, x, buf, &bytes, &err) == 0 &&
           codec_decode(&c, buf, bytes, y, &err) == 0 && y[1] == 65504,
       "float16: 65504, its largest, is exact");
    x[1] = 65520; /* rounds to 65536: beyond */
    ok(codec_encode(&c, x, buf, &bytes, &err) < 0,
       "float16: 65520 is refused, not saturated");
    like(err.text, "65504", "float16: the refusal says the range: %s",
         err.text);
    x[1] = 1e-9; /* flushes to 0: within 2^-25 */
    codec_encode(&c, x, buf, &bytes, &err);
    codec_decode(&c, buf, bytes, y, &err);
    ok(y[1] == 0, "float16: 1e-9 underflows to 0 (within 2^-25)");
    x[1] = 0x1p-24; /* the smallest subnormal */
    codec_encode(&c, x, buf, &bytes, &err);
    codec_decode(&c, buf, bytes, y, &err);
    ok(y[1] == 0x1p-24, "float16: 2^-24 is exact");
    buf[1] = 0x7c; /* exponent 31: an infinity */
    buf[0] = 0;
    ok(codec_decode(&c, buf, bytes, y, &err) < 0,
       "float16: an infinity's bits are refused (%s)", err.text);
    codec_free(&c);
    codec_init(&c, CODEC_FLOAT32, 2, 0, 0, &err);
    x[1] = 1e39;
    ok(codec_encode(&c, x, buf, &bytes, &err) < 0,
       "float32: 1e39 is refused");
    x[1] = NAN;
    ok(codec_encode(&c, x, buf, &bytes, &err) < 0, "float32: NaN is refused");
    codec_free(&c);
    codec_init(&c, CODEC_BFLOAT16, 2, 0, 0, &err);
    x[1] = 1e300;
    ok(codec_encode(&c, x, buf, &bytes, &err) < 0,
       "bfloat16: 1e300 is refused");
    x[1] = 3e38;
    ok(codec_encode(&c, x, buf, &bytes, &err) == 0 &&
           codec_decode(&c, buf, bytes, y, &err) == 0 &&
           fabs(y[1] - 3e38) <= 0x1p-8 * 3e38,
       "bfloat16: 3e38 is within range");
    codec_free(&c);
}

static void topk(struct aia_rng *g)
{
    struct aia_error err;
    enum { N = 1000, K = 10 };
    struct codec c;
    is_int((long long)codec_topk_count(0.01, N), 10, "topk: 0.01 of 1000");
    is_int((long long)codec_topk_count(0.0001, N), 1, "topk: at least 1");
    is_int((long long)codec_topk_count(25, N), 25, "topk: a count");
    is_int((long long)codec_topk_count(5000, N), N, "topk: at most n");
    is_int((long long)codec_topk_count(0.5, 0), 0, "topk: of nothing");
    codec_init(&c, CODEC_TOPK, N, K, 0, &err);
    static double x[N], y[N], sent[N], total[N];
    static unsigned char buf[12 * K];
    fill(x, N, g, 1e-3, 1e3);
    x[3] = 5e3;
    x[4] = -5e3; /* a tie: both kept */
    size_t bytes;
    codec_encode(&c, x, buf, &bytes, &err);
    is_int((long long)bytes, 12 * K, "topk: 12 bytes an entry");
    codec_decode(&c, buf, bytes, y, &err);
    /* the kept entries are exact, and no dropped one is larger */
    double smallest_kept = INFINITY, largest_dropped = 0;
    int kept = 0, exact = 1;
    for (int i = 0; i < N; i++) {
        if (y[i] != 0) {
            kept++;
            exact &= y[i] == x[i];
            smallest_kept = fmin(smallest_kept, fabs(x[i]));
        } else {
            largest_dropped = fmax(largest_dropped, fabs(x[i]));
        }
    }
    is_int(kept, K, "topk: k entries sent");
    ok(exact, "topk: the kept entries are exact");
    ok(smallest_kept >= largest_dropped,
       "topk: the k largest magnitudes (%g >= %g)", smallest_kept,
       largest_dropped);
    ok(y[3] == 5e3 && y[4] == -5e3, "topk: both of a tie at the top");
    int resid = 1;
    for (int i = 0; i < N; i++)
        resid &= c.residual[i] == (y[i] != 0 ? 0 : x[i]);
    ok(resid, "topk: the residual holds exactly what was not sent");
    codec_free(&c);

    /* Error feedback: the same answer, again and again; after enough
     * rounds, what was sent adds up to what was given, to a bound of one
     * answer's largest entry per coordinate. */
    enum { M = 200 };
    codec_init(&c, CODEC_TOPK, M, K, 0, &err);
    fill(x, M, g, 0.1, 10);
    memset(sent, 0, sizeof sent);
    memset(total, 0, sizeof total);
    int rounds = 3000;
    double sum = 0, max = 0;
    for (int i = 0; i < M; i++) {
        sum += fabs(x[i]);
        max = fmax(max, fabs(x[i]));
    }
    for (int r = 0; r < rounds; r++) {
        codec_encode(&c, x, buf, &bytes, &err);
        codec_decode(&c, buf, bytes, y, &err);
        for (int i = 0; i < M; i++) {
            sent[i] += y[i];
            total[i] += x[i];
        }
    }
    int every = 1, conserved = 1;
    double worst = 0;
    for (int i = 0; i < M; i++) {
        every &= x[i] == 0 || sent[i] != 0;
        conserved &= fabs(sent[i] + c.residual[i] - total[i]) <=
                     1e-9 * fabs(total[i]) + 1e-9;
        worst = tap_worst(worst, fabs(total[i] - sent[i]));
    }
    ok(every, "topk: after %d rounds every coordinate's mass was sent",
       rounds);
    ok(conserved, "topk: sent + residual = everything given");
    /* a coordinate is sent once its residual is among the k largest, so
     * none owes much more than the sum of an answer over k */
    ok(worst <= 2 * (sum / K + max),
       "topk: what is still owed stays bounded (%.3g <= 2 (%.3g / %d + "
       "%.3g)) while %d rounds gave %.3g",
       worst, sum, K, max, rounds, rounds * sum);

    /* malformed: indices out of order, out of range */
    codec_encode(&c, x, buf, &bytes, &err);
    unsigned char bad[sizeof buf];
    memcpy(bad, buf, sizeof bad);
    memcpy(bad + 4, bad, 4); /* entry 1 repeats entry 0's index */
    ok(codec_decode(&c, bad, bytes, y, &err) < 0,
       "topk: a repeated index is refused (%s)", err.text);
    memcpy(bad, buf, sizeof bad);
    uint32_t big = N;
    memcpy(bad + 4 * (K - 1), &big, 4);
    ok(codec_decode(&c, bad, bytes, y, &err) < 0,
       "topk: an index out of range is refused (%s)", err.text);
    codec_free(&c);
}

static void zstd(struct aia_rng *g)
{
    struct aia_error err;
    struct codec c;
    if (!codec_available(CODEC_ZSTD)) {
        ok(codec_init(&c, CODEC_ZSTD, 4, 0, 1, &err) < 0,
           "zstd: refused in a build without libzstd (%s)", err.text);
        codec_free(&c);
        return;
    }
    round_trips(CODEC_ZSTD, 1e-300, 1e300, g);
    enum { N = 4096 };
    static double x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = (double)(i % 7); /* compresses well */
    codec_init(&c, CODEC_ZSTD, N, 0, 3, &err);
    unsigned char *buf = malloc(codec_bound(&c));
    size_t bytes;
    codec_encode(&c, x, buf, &bytes, &err);
    ok(bytes < 8 * N / 10, "zstd: repetitive values compress (%zu bytes)",
       bytes);
    ok(codec_decode(&c, buf, bytes - 1, y, &err) < 0,
       "zstd: a truncated frame is refused (%s)", err.text);
    ok(codec_decode(&c, buf, bytes / 2, y, &err) < 0,
       "zstd: half a frame is refused");
    buf[0] ^= 0xff;
    ok(codec_decode(&c, buf, bytes, y, &err) < 0,
       "zstd: a foreign frame is refused (%s)", err.text);
    buf[0] ^= 0xff;
    struct codec other;
    codec_init(&other, CODEC_ZSTD, N / 2, 0, 3, &err);
    ok(codec_decode(&other, buf, bytes, y, &err) < 0,
       "zstd: a frame of another length is refused (%s)", err.text);
    codec_free(&other);
    buf[bytes / 2] ^= 0x55;
    int rc = codec_decode(&c, buf, bytes, y, &err);
    ok(rc < 0, "zstd: a damaged frame is refused (%s)", err.text);
    free(buf);
    codec_free(&c);
}

int main(void)
{
    plan(0);
    struct aia_rng g;
    aia_rng_seed(&g, 7, 1);
    round_trips(CODEC_NONE, 1e-300, 1e300, &g);
    round_trips(CODEC_FLOAT32, 1e-30, 1e38, &g);
    round_trips(CODEC_FLOAT32, 1e-45, 1e-36, &g); /* subnormal floats */
    round_trips(CODEC_FLOAT16, 1e-4, 6e4, &g);
    round_trips(CODEC_FLOAT16, 1e-9, 1e-4, &g); /* subnormal halves */
    round_trips(CODEC_BFLOAT16, 1e-30, 3e38, &g);
    round_trips(CODEC_BFLOAT16, 1e-44, 1e-37, &g); /* subnormal */
    limits();
    topk(&g);
    zstd(&g);
    return done_testing();
}
