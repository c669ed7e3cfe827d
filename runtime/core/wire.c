/* wire.c - what the coordinator checks in a worker's message before it
 * trusts it: pure functions of the bytes received, so that a fuzzer
 * (fuzz/wire_fuzz.c) and unit tests can drive them without MPI.  A
 * worker is untrusted whatever it sends: its message may be of any size,
 * kind or content.
 */
#include <config.h>

#include "wire.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codec.h"

const char *wire_check(const void *buf, size_t bytes, size_t max_bytes,
                       const struct wire_expect *e, char *why, size_t whylen)
{
    struct wire_hdr h;
    if (bytes > max_bytes) {
        snprintf(why, whylen,
                 "a message of %zu bytes, more than the %zu a message of "
                 "this job can have",
                 bytes, max_bytes);
        return why;
    }
    if (bytes < sizeof h)
        return "not an aiarun message";
    memcpy(&h, buf, sizeof h); /* the buffer need not be aligned */
    if (h.magic != WIRE_MAGIC)
        return "not an aiarun message";
    if (h.kind == WIRE_EVALANS)
        return e->eval_len && h.len == e->eval_len &&
                       bytes == WIRE_BYTES(e->eval_len)
                   ? NULL
                   : "an evaluation not asked for, or of the wrong length";
    if (h.kind != WIRE_ANSWER && h.kind != WIRE_ERROR && h.kind != WIRE_BYE)
        return "a message of unknown kind";
    if (h.kind != WIRE_ANSWER)
        return NULL;
    if (h.codec != e->codec)
        return "an answer in another codec";
    if (h.len != e->answer_len || bytes - sizeof h != h.bytes ||
        (h.codec == 0 && bytes != WIRE_BYTES(h.len)))
        return "an answer of the wrong length";
    if (!isfinite(h.compute_s) || h.compute_s < 0 || !isfinite(h.delay_s) ||
        h.delay_s < 0)
        return "an answer whose times are not finite and positive";
    return NULL;
}

size_t wire_nonfinite(const double *x, size_t n)
{
    /* x * 0 is NaN exactly when x is not finite; four sums keep the loop
     * fast, and only a sum that is NaN is looked at again. */
    double s[4] = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; j++)
            s[j] += x[i + j] * 0.0;
    for (; i < n; i++)
        s[0] += x[i] * 0.0;
    if (!isnan(s[0] + s[1] + s[2] + s[3]))
        return n;
    for (i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return i;
    return n;
}

const double *wire_answer_values(struct codec *c, const struct wire_hdr *h,
                                 double *out, size_t *bad, char *why,
                                 size_t whylen)
{
    const double *x = WIRE_PAYLOAD(h);
    *bad = h->len;
    if (c) {
        struct aia_error err;
        if (codec_decode(c, WIRE_PAYLOAD(h), h->bytes, out, &err) < 0) {
            snprintf(why, whylen, "an answer that does not decode (%s)",
                     err.text);
            return NULL;
        }
        /* a decoder that writes only finite values looked at each one */
        if (codec_decodes_finite(c))
            return out;
        x = out;
    }
    *bad = wire_nonfinite(x, h->len);
    return x;
}

const char *wire_error_text(char *buf, size_t bytes)
{
    /* the text ends within the message, and within WIRE_ERROR_TEXT */
    size_t len = bytes - sizeof(struct wire_hdr);
    if (len > WIRE_ERROR_TEXT - 1)
        len = WIRE_ERROR_TEXT - 1;
    char *text = buf + sizeof(struct wire_hdr);
    text[len] = '\0';
    return text;
}
