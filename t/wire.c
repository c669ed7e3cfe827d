/* wire.c - what the coordinator checks in a worker's message before it
 * trusts it (runtime/wire.c): sizes, magic, kinds, codecs, lengths,
 * times, each refused with its reason, and answers that do not decode;
 * the index of an answer's first non-finite value (decoded or not);
 * error texts ended within their message; and the fuzz target (fuzz/wire_fuzz.c) on crafted and random inputs. */
#include <config.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "tap.h"
#include "core/wire.h"
#include "wire_fuzz.h"

#define N 8

static char msg[WIRE_BYTES(N) + 64];
static char why[160];

static struct wire_hdr *answer(void)
{
    memset(msg, 0, sizeof msg);
    struct wire_hdr *h = (void *)msg;
    *h = (struct wire_hdr){.magic = WIRE_MAGIC,
                           .kind = WIRE_ANSWER,
                           .len = N,
                           .bytes = N * sizeof(double)};
    for (int i = 0; i < N; i++)
        WIRE_PAYLOAD(h)[i] = i;
    return h;
}

static const char *check(size_t bytes)
{
    struct wire_expect e = {.answer_len = N, .codec = CODEC_NONE};
    return wire_check(msg, bytes, WIRE_BYTES(N), &e, why, sizeof why);
}

static void checks(void)
{
    struct wire_hdr *h = answer();
    ok(check(WIRE_BYTES(N)) == NULL, "a well-formed answer is trusted");
    is_string(check(WIRE_BYTES(N) + 8),
              "a message of 136 bytes, more than the 128 a message of this "
              "job can have",
              "a message over the bound is refused with its size");
    is_string(check(1048576),
              "a message of 1048576 bytes, more than the 128 a message of "
              "this job can have",
              "so is one of 1 MiB");
    is_string(check(10), "not an aiarun message", "a short one");
    h->magic = 0;
    is_string(check(WIRE_BYTES(N)), "not an aiarun message", "a bad magic");
    h = answer();
    h->kind = 99;
    is_string(check(WIRE_BYTES(N)), "a message of unknown kind",
              "an unknown kind");
    h = answer();
    h->codec = CODEC_FLOAT32;
    is_string(check(WIRE_BYTES(N)), "an answer in another codec",
              "another codec");
    h = answer();
    h->len = N - 1;
    is_string(check(WIRE_BYTES(N)), "an answer of the wrong length",
              "a length that is not the job's");
    h = answer();
    is_string(check(WIRE_BYTES(N) - 8), "an answer of the wrong length",
              "fewer bytes than its length");
    h->bytes = 12;
    is_string(check(WIRE_BYTES(N)), "an answer of the wrong length",
              "bytes that disagree with the message");
    h = answer();
    h->compute_s = NAN;
    is_string(check(WIRE_BYTES(N)),
              "an answer whose times are not finite and positive",
              "a compute time of NaN");
    h = answer();
    h->delay_s = -1;
    is_string(check(WIRE_BYTES(N)),
              "an answer whose times are not finite and positive",
              "a negative delay");
    h = answer();
    h->kind = WIRE_BYE;
    ok(check(sizeof *h) == NULL, "a goodbye is a header alone");

    double x[11] = {0};
    is_int((int)wire_nonfinite(x, 11), 11, "finite values: n");
    x[9] = NAN;
    is_int((int)wire_nonfinite(x, 11), 9, "the index of a NaN");
    x[2] = -INFINITY;
    is_int((int)wire_nonfinite(x, 11), 2, "the first non-finite value");
    x[2] = 1e308;
    x[9] = 1e308;
    is_int((int)wire_nonfinite(x, 11), 11, "large finite values are finite");

    /* Every length up to 100 (whole blocks of 8, groups of 4 blocks, and
     * the tail), every index, every kind of non-finite value, against
     * isfinite one value at a time; finite values at the edges of the
     * exponent range, and a second bad value after the first. */
    {
        enum { LEN = 100 };
        double v[LEN + 1];
        const double bad[] = {NAN, -NAN, INFINITY, -INFINITY};
        const double edge[] = {DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN,
                               DBL_TRUE_MIN, 0.0, -0.0, 1.0};
        int wrong = 0, cases = 0;
        for (size_t n = 0; n <= LEN; n++) {
            for (size_t j = 0; j < n; j++)
                v[j] = edge[j % (sizeof edge / sizeof *edge)];
            v[n] = NAN; /* past the end: never read */
            wrong += wire_nonfinite(v, n) != n;
            cases++;
            for (size_t at = 0; at < n; at++)
                for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
                    double keep = v[at];
                    v[at] = bad[b];
                    if (at + 3 < n)
                        v[at + 3] = bad[(b + 1) % 4];
                    wrong += wire_nonfinite(v, n) != at;
                    cases++;
                    v[at] = keep;
                    if (at + 3 < n)
                        v[at + 3] = edge[(at + 3) % (sizeof edge / sizeof *edge)];
                }
        }
        ok(wrong == 0,
           "the first non-finite value's index, or n, in %d cases of every "
           "length to %d, index and kind (%d wrong)",
           cases, LEN, wrong);
    }
    /* finite values whose sums overflow are finite; a NaN after them is
     * still found */
    {
        double big[300];
        for (int j = 0; j < 300; j++)
            big[j] = DBL_MAX;
        is_int((int)wire_nonfinite(big, 300), 300,
               "300 values of DBL_MAX, whose sums overflow: finite");
        big[250] = NAN;
        is_int((int)wire_nonfinite(big, 300), 250,
               "and a NaN at 250 after them is found");
    }
}

static void values_and_texts(void)
{
    struct wire_hdr *h = answer();
    size_t bad = 0;
    ok(wire_answer_values(NULL, h, NULL, &bad, why, sizeof why) ==
           WIRE_PAYLOAD(h),
       "a finite answer's values are its payload");
    is_int((int)bad, N, "none of them is not finite");
    WIRE_PAYLOAD(h)[3] = NAN;
    ok(wire_answer_values(NULL, h, NULL, &bad, why, sizeof why) ==
           WIRE_PAYLOAD(h),
       "an answer holding NaN is well-formed: its values");
    is_int((int)bad, 3, "and the index of the NaN");
    WIRE_PAYLOAD(h)[3] = 3;
    WIRE_PAYLOAD(h)[6] = -INFINITY;
    wire_answer_values(NULL, h, NULL, &bad, why, sizeof why);
    is_int((int)bad, 6, "an infinity's index");

    /* through a codec: the decoder refuses the NaN itself */
    struct codec c;
    struct aia_error err;
    double x[N];
    float f[N] = {0, 1, 2, NAN, 4, 5, 6, 7};
    if (codec_init(&c, CODEC_FLOAT32, N, 0, 0, &err) < 0)
        bail_out("codec_init: %s", err.text);
    ok(codec_decodes_finite(&c), "float32's decoder looks at every value");
    h = answer();
    h->codec = CODEC_FLOAT32;
    h->bytes = sizeof f;
    memcpy(WIRE_PAYLOAD(h), f, sizeof f);
    ok(wire_answer_values(&c, h, x, &bad, why, sizeof why) == NULL,
       "float32: a NaN is refused");
    is_string(why,
              "an answer that does not decode (float32: value 3 is not "
              "finite)",
              "naming the index");
    f[3] = 3;
    memcpy(WIRE_PAYLOAD(h), f, sizeof f);
    ok(wire_answer_values(&c, h, x, &bad, why, sizeof why) == x && x[3] == 3,
       "float32: finite values are decoded");
    is_int((int)bad, N, "float32: and all are finite");
    codec_free(&c);

    /* a decoder that writes what it was given: the one pass after it */
    if (codec_available(CODEC_ZSTD)) {
        double v[N] = {0, 1, 2, 3, 4, NAN, 6, 7};
        size_t bytes = 0;
        if (codec_init(&c, CODEC_ZSTD, N, 0, 1, &err) < 0)
            bail_out("codec_init: %s", err.text);
        ok(!codec_decodes_finite(&c), "zstd's decoder does not look");
        static char zmsg[sizeof(struct wire_hdr) + 1024];
        h = (void *)zmsg;
        if (codec_bound(&c) > sizeof zmsg - sizeof *h ||
            codec_encode(&c, v, WIRE_PAYLOAD(h), &bytes, &err) < 0)
            bail_out("codec_encode: %s", err.text);
        *h = (struct wire_hdr){.magic = WIRE_MAGIC,
                               .kind = WIRE_ANSWER,
                               .len = N,
                               .codec = CODEC_ZSTD,
                               .bytes = (uint32_t)bytes};
        ok(wire_answer_values(&c, h, x, &bad, why, sizeof why) == x &&
               x[4] == 4,
           "zstd: the values are decoded");
        is_int((int)bad, 5, "zstd: and the NaN found after the decoder");
        codec_free(&c);
    } else {
        diag("zstd not built in: its decoder not tried");
    }

    /* an error text that does not end within its message */
    static char ebuf[sizeof(struct wire_hdr) + WIRE_ERROR_TEXT];
    memset(ebuf, 'y', sizeof ebuf);
    memcpy(ebuf + sizeof(struct wire_hdr), "xxxxx", 5);
    is_string(wire_error_text(ebuf, sizeof(struct wire_hdr) + 5), "xxxxx",
              "an error text ends with its message");
    memset(ebuf, 'y', sizeof ebuf);
    is_int((long long)strlen(wire_error_text(ebuf, sizeof ebuf)),
           WIRE_ERROR_TEXT - 1, "and within WIRE_ERROR_TEXT");
}

static void fuzz_target(void)
{
    uint8_t in[2 + sizeof msg];
    struct wire_hdr *h = answer();
    in[0] = CODEC_NONE;
    in[1] = N;
    memcpy(in + 2, msg, WIRE_BYTES(N));
    is_int(wire_fuzz_one(in, 2 + WIRE_BYTES(N)), 0,
           "the fuzz target trusts a well-formed answer");
    WIRE_PAYLOAD(h)[3] = NAN;
    memcpy(in + 2, msg, WIRE_BYTES(N));
    is_int(wire_fuzz_one(in, 2 + WIRE_BYTES(N)), 0, "and scans one with NaN");
    in[1] = N - 1;
    is_int(wire_fuzz_one(in, 2 + WIRE_BYTES(N)), 1,
           "it refuses an answer of another length");
    h = answer();
    h->kind = WIRE_ERROR;
    memset(msg + sizeof *h, 'x', N * sizeof(double));
    in[1] = N;
    memcpy(in + 2, msg, WIRE_BYTES(N));
    is_int(wire_fuzz_one(in, 2 + WIRE_BYTES(N)), 0,
           "an unterminated error text is ended within the message");
    /* random messages, some with a valid header for each codec */
    srand(7);
    int refused = 0, bad = 0;
    for (int i = 0; i < 20000; i++) {
        size_t size = 2 + (size_t)(rand() % (int)sizeof msg);
        for (size_t j = 0; j < size; j++)
            in[j] = (uint8_t)rand();
        if (i % 2 && size >= 2 + sizeof(struct wire_hdr)) {
            struct wire_hdr g = {.magic = WIRE_MAGIC,
                                 .kind = WIRE_ANSWER,
                                 .codec = in[0] % CODEC_COUNT,
                                 .len = in[1],
                                 .bytes = (uint32_t)(size - 2 - sizeof g)};
            memcpy(in + 2, &g, sizeof g);
        }
        int rc = wire_fuzz_one(in, size);
        refused += rc == 1;
        bad += rc < -1 || rc > 1;
    }
    is_int(bad, 0, "20000 random messages: each trusted or refused");
    ok(refused > 0, "and most refused (%d)", refused);
}

int main(void)
{
    plan(0);
    checks();
    values_and_texts();
    fuzz_target();
    return done_testing();
}
