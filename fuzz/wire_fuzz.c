/* wire_fuzz.c - libFuzzer target: a worker's message as the coordinator
 * checks it before trusting it (wire_check), then, when it passes as an
 * answer, its payload decoded with the job's codec and its first value
 * that is not finite found (wire_answer_values), as coord.c does.  Any crash, leak,
 * hang or read past the message is a finding.
 *
 * An input is 2 bytes of the job's shape (the answer codec, the answer's
 * doubles) and the message's bytes.
 *
 *     make fuzz-wire FUZZ_SECONDS=600
 */
#include <config.h>

#include "wire_fuzz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "core/wire.h"

int wire_fuzz_one(const uint8_t *data, size_t size)
{
    if (size < 2)
        return -1;
    int id = data[0] % CODEC_COUNT;
    size_t n = data[1];
    data += 2;
    size -= 2;
    struct codec c;
    struct aia_error err;
    if (codec_init(&c, id, n, codec_topk_count(0.25, n), 1, &err) < 0) {
        codec_free(&c);
        return -1;
    }
    size_t max = sizeof(struct wire_hdr) + codec_bound(&c);
    if (max < sizeof(struct wire_hdr) + WIRE_ERROR_TEXT)
        max = sizeof(struct wire_hdr) + WIRE_ERROR_TEXT;
    /* the receive buffer is max bytes, the message in it size of them */
    char *buf = malloc(max);
    double *x = malloc((n ? n : 1) * sizeof *x);
    struct wire_expect e = {.answer_len = n, .codec = (uint32_t)id};
    char why[160];
    int rc = -1;
    if (!buf || !x)
        goto out;
    const char *bad = wire_check(data, size, max, &e, why, sizeof why);
    if (bad) {
        rc = strlen(bad) > 0 ? 1 : -1;
        goto out;
    }
    memcpy(buf, data, size);
    const struct wire_hdr *h = (const void *)buf;
    rc = 0;
    if (h->kind == WIRE_ERROR)
        rc = strlen(wire_error_text(buf, size)) < WIRE_ERROR_TEXT ? 0 : -1;
    else if (h->kind == WIRE_ANSWER) {
        size_t at = 0;
        const double *v = wire_answer_values(id != CODEC_NONE ? &c : NULL,
                                             h, x, &at, why, sizeof why);
        if (!v)
            rc = strlen(why) > 0 ? 0 : -1;
        else if (at > h->len || (at < h->len && isfinite(v[at])))
            rc = -1; /* the index of a value not finite, or the length */
    }
out:
    free(buf);
    free(x);
    codec_free(&c);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (wire_fuzz_one(data, size) < -1)
        abort();
    return 0;
}
