/* checkpoint_fuzz.c - libFuzzer target: checkpoint files read as
 * `aiarun --resume` reads them.  Each input is read twice: as it is, and
 * with its identity and checksum made right, so that the fuzzer reaches
 * the fields behind them.  Any crash, leak or out-of-bounds read is a
 * finding; every refusal must name the file.
 *
 * The state of a checkpoint read is then loaded as the coordinator loads
 * it: as sag's balanced state (plugins/sag.c's load: x, the balancer's
 * state, the segments, the running sums) and as coordinator ranks'
 * states (pool.shards: checkpoint_shards, then rank 0's state into sag).
 * An input that begins with 'S' or 'H' is such a state itself (after a
 * byte of shape: workers, window, dimension, async), so that the fuzzer
 * reaches their fields without a checkpoint's framing.  A state sag
 * takes is then used (a plan, answers timed, a round's step), so that a
 * field its load let through out of bounds is found where it is used.
 *
 *     make fuzz FUZZ_SECONDS=600
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/checkpoint.h"

/* the plugin itself, for its load and its private state */
#include "../plugins/sag.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A refusal must say why. */
static void refused(const char *what, const struct aia_error *err)
{
    if (!err->text[0]) {
        fprintf(stderr, "checkpoint_fuzz: %s refused with no reason\n", what);
        abort();
    }
}

/* len bytes at p loaded as sag's balanced state, as a coordinator of
 * shape cfg loads it (bits 0-1: 1 to 4 workers; 2-3: a window of 2 to
 * 5; 4-5: dimension 1 to 4; 6: async), then used. */
static void sag_state(unsigned cfg, const void *p, size_t len)
{
    struct sag s;
    struct aia_context ctx;
    struct aia_error err = {""};
    memset(&s, 0, sizeof s);
    memset(&ctx, 0, sizeof ctx);
    size_t n = 1 + (cfg & 3), window = 2 + ((cfg >> 2) & 3);
    size_t dim = 1 + ((cfg >> 4) & 3);
    ctx.nworkers = (int)n;
    s.nworkers = (int)n;
    s.balance = 1;
    s.dsag = 1;
    s.parts = 1;
    s.async = (cfg >> 6) & 1;
    s.t.m.dim = dim;
    s.t.m.step = 0.1;
    s.t.m.x = calloc(dim, sizeof *s.t.m.x);
    double *buf = malloc(len ? len : 1), *q = malloc((dim + n) * sizeof *q);
    if (!s.t.m.x || !buf || !q ||
        aia_balance_open(&s.bal, &ctx, 1, 2, window, 0.95, 8) < 0 ||
        aia_segtable_init(&s.seg, (int)n, dim) < 0)
        goto out;
    memcpy(buf, p, len); /* aligned, as the runtime hands it */
    if (load(&s, buf, len, &err) < 0) {
        refused("sag's balanced state", &err);
        goto out;
    }
    /* the balancer's and the table's use of what was loaded */
    for (int r = 0; r < 3; r++) {
        for (size_t w = 0; w < n; w++) {
            double held = s.bal.wrows[w] > 0 ? s.bal.wrows[w] : 8;
            aia_balance_time(&s.bal, (int)w, held, 1, 1e-3 * (double)(w + 1));
        }
        aia_balance_plan(&s.bal);
        if (query(&s, q, &err) < 0)
            refused("a round's step", &err);
    }
    /* saved and loaded again (counts near 2^53 may be refused then) */
    size_t size = state_size(&s);
    double *again = malloc(size ? size : 1);
    if (again && save(&s, again, &err) == 0)
        load(&s, again, size, &err);
    free(again);
out:
    aia_balance_close(&s.bal);
    aia_segtable_free(&s.seg);
    free(s.t.m.x);
    free(buf);
    free(q);
}

/* c's state read as the states of 1 to 4 coordinator ranks (cfg's bits
 * 0-1 again: ranks and workers agree in nothing, as in a forged file),
 * then rank 0's loaded into sag. */
static void shard_states(unsigned cfg, const struct checkpoint *c)
{
    int ranks = 1 + (int)((cfg >> 7) & 1) + (int)(cfg & 2);
    size_t off[4], len[4];
    struct aia_error err = {""};
    if (checkpoint_shards(c, ranks, off, len, &err) < 0) {
        refused("coordinator ranks' states", &err);
        return;
    }
    volatile unsigned char touch = 0;
    for (int j = 0; j < ranks; j++)
        for (size_t i = 0; i < len[j]; i++) /* every byte is the state's */
            touch ^= ((const unsigned char *)c->state)[off[j] + i];
    (void)touch;
    sag_state(cfg, (const unsigned char *)c->state + off[0], len[0]);
}

static void read_one(const uint8_t *p, size_t len,
                     const struct checkpoint_id *id, size_t query_len)
{
    struct checkpoint c;
    struct aia_error err = {""};
    if (checkpoint_parse("ck.bin", p, len, id, query_len, &c, &err) == 0) {
        unsigned cfg = len > 9 ? p[len - 10] : 0;
        sag_state(cfg, c.state, c.state_len);
        shard_states(cfg, &c);
        checkpoint_free(&c);
        return;
    }
    if (strncmp(err.text, "ck.bin: ", 8) != 0) {
        fprintf(stderr, "checkpoint_fuzz: a refusal that names no file: %s\n",
                err.text);
        abort();
    }
    if (c.query || c.state)
        abort(); /* nothing may be kept from a refused file */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct checkpoint_id id;
    memset(&id, 0, sizeof id);
    checkpoint_id_add(&id, "algorithm", 1);
    checkpoint_id_add(&id, "seed", 2);
    if (size >= 2 && (data[0] == 'S' || data[0] == 'H')) {
        struct checkpoint c = {.state = (void *)(uintptr_t)(data + 2),
                               .state_len = size - 2};
        if (data[0] == 'S')
            sag_state(data[1], data + 2, size - 2);
        else
            shard_states(data[1], &c);
        return 0;
    }
    size_t query_len = size ? data[size - 1] % 16 : 0;
    read_one(data, size, &id, query_len);
    if (size < 24 || size > (1u << 20))
        return 0;
    uint8_t *fixed = malloc(size + 8);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    if (data[size - 2] & 1) /* half the time, the job's own identity */
        memcpy(fixed + 16, &id.all, 8);
    uint64_t sum = checkpoint_hash(CHECKPOINT_HASH0, fixed, size);
    memcpy(fixed + size, &sum, 8);
    read_one(fixed, size + 8, &id, query_len);
    free(fixed);
    return 0;
}
