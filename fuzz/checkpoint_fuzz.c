/* checkpoint_fuzz.c - libFuzzer target: checkpoint files read as
 * `aiarun --resume` reads them.  Each input is read twice: as it is, and
 * with its identity and checksum made right, so that the fuzzer reaches
 * the fields behind them.  Any crash, leak or out-of-bounds read is a
 * finding; every refusal must name the file.
 *
 *     make fuzz FUZZ_SECONDS=600
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_one(const uint8_t *p, size_t len,
                     const struct checkpoint_id *id, size_t query_len)
{
    struct checkpoint c;
    struct aia_error err = {""};
    if (checkpoint_parse("ck.bin", p, len, id, query_len, &c, &err) == 0) {
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
