/* checkpoint.c - checkpoints read back as written; refused when damaged,
 * out of bounds, or from another job (naming what differs).
 *
 * Also the shell tests' forger (t0160): `checkpoint.t forge FILE WORD d|u
 * VALUE` sets the 8-byte word WORD of FILE's algorithm state to VALUE (a
 * double, or an unsigned 64-bit integer) and makes its checksum right
 * again, so that only the state's own checks stand between the field and
 * the run; `checkpoint.t peek FILE WORD d|u` prints that word. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/checkpoint.h"
#include "tap.h"

static char path[64];

/* The byte at which FILE's (len bytes at p) algorithm state starts, and
 * its length in *slen; 0 when the file is not a checkpoint's shape. */
static size_t state_at(const unsigned char *p, size_t len, uint64_t *slen)
{
    uint32_t parts;
    uint64_t qlen;
    if (len < 32)
        return 0;
    memcpy(&parts, p + 24, 4);
    /* the run's 8 words, then its CHECKPOINT_TRAFFIC byte counters */
    size_t at = 32 + (size_t)parts * (CHECKPOINT_NAME + 8) +
                8 * (8 + CHECKPOINT_TRAFFIC);
    if (parts > CHECKPOINT_PARTS || at + 8 > len)
        return 0;
    memcpy(&qlen, p + at, 8);
    at += 8;
    if (qlen > (len - at) / 8)
        return 0;
    at += (size_t)qlen * 8;
    if (at + 8 > len)
        return 0;
    memcpy(slen, p + at, 8);
    at += 8;
    return *slen <= len - at && len - at - *slen == 8 ? at : 0;
}

/* checkpoint.t forge|peek FILE WORD d|u [VALUE]: exit 0, or 99 with a
 * line on stderr. */
static int forger(int argc, char **argv)
{
    int forge = strcmp(argv[1], "forge") == 0;
    if (argc != (forge ? 6 : 5) || (strcmp(argv[4], "d") && strcmp(argv[4], "u")))
        return fprintf(stderr, "usage: checkpoint.t forge|peek FILE WORD "
                               "d|u [VALUE]\n"),
               99;
    FILE *f = fopen(argv[2], "rb");
    static unsigned char p[1 << 24];
    size_t len = f ? fread(p, 1, sizeof p, f) : 0;
    if (f)
        fclose(f);
    uint64_t slen = 0;
    size_t at = state_at(p, len, &slen);
    size_t word = (size_t)strtoull(argv[3], NULL, 10);
    if (!at || word >= slen / 8)
        return fprintf(stderr, "checkpoint.t: %s: no word %zu in its state\n",
                       argv[2], word),
               99;
    unsigned char *w = p + at + 8 * word;
    if (!forge) {
        double d;
        uint64_t u;
        memcpy(&d, w, 8);
        memcpy(&u, w, 8);
        if (*argv[4] == 'd')
            printf("%.17g\n", d);
        else
            printf("%llu\n", (unsigned long long)u);
        return 0;
    }
    if (*argv[4] == 'd') {
        double d = strtod(argv[5], NULL);
        memcpy(w, &d, 8);
    } else {
        uint64_t u = strtoull(argv[5], NULL, 0);
        memcpy(w, &u, 8);
    }
    uint64_t sum = checkpoint_hash(CHECKPOINT_HASH0, p, len - 8);
    memcpy(p + len - 8, &sum, 8);
    f = fopen(argv[2], "wb");
    if (!f || fwrite(p, 1, len, f) != len || fclose(f) != 0)
        return fprintf(stderr, "checkpoint.t: cannot write %s\n", argv[2]), 99;
    return 0;
}

static void job_id(struct checkpoint_id *id, uint64_t seed)
{
    memset(id, 0, sizeof *id);
    checkpoint_id_add(id, "algorithm", 1);
    checkpoint_id_add(id, "seed", seed);
    checkpoint_id_add(id, "pool", 3);
}

/* Write k under id a, read it back under id b: the reader's status. */
static int round_trip(const struct checkpoint *k, const struct checkpoint_id *a,
                      const struct checkpoint_id *b, struct checkpoint *out,
                      struct aia_error *err)
{
    if (checkpoint_write(path, a, k, err) < 0)
        return -2;
    return checkpoint_read(path, b, k->query_len, out, err);
}

/* Bytes of the file at p, or -1. */
static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* PATH.tmp holding a link or a stale file: the checkpoint replaces the
 * name, never writes through it (`ln -s mine.csv ck.bin.tmp` made
 * mine.csv hold the checkpoint); a folder there is refused. */
static void temporaries(const struct checkpoint_id *id,
                        const struct checkpoint *k)
{
    char tmp[80], mine[80], hard[80];
    struct aia_error err = {""};
    struct checkpoint got;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(mine, sizeof mine, "%s.mine", path);
    snprintf(hard, sizeof hard, "%s.hard", path);
    FILE *f = fopen(mine, "w");
    fputs("1,2,3\n", f);
    fclose(f);
    if (symlink(mine, tmp) != 0)
        bail_out("symlink %s", tmp);
    is_int(checkpoint_write(path, id, k, &err), 0,
           "a checkpoint over a link named PATH.tmp is written");
    is_int(file_size(mine), 6, "and the file the link names is left whole");
    is_int(checkpoint_read(path, id, 3, &got, &err), 0, "the checkpoint reads");
    checkpoint_free(&got);
    if (link(mine, tmp) != 0)
        bail_out("link %s", tmp);
    is_int(checkpoint_write(path, id, k, &err), 0,
           "over a hard link named PATH.tmp too");
    is_int(file_size(mine), 6, "its other name left whole");
    f = fopen(tmp, "w");
    fputs("stale", f);
    fclose(f);
    is_int(checkpoint_write(path, id, k, &err), 0,
           "a stale PATH.tmp (a run that died) is replaced");
    ok(access(tmp, F_OK) != 0, "and no PATH.tmp is left");
    mkdir(tmp, 0755);
    is_int(checkpoint_write(path, id, k, &err), -1,
           "a folder named PATH.tmp is refused");
    like(err.text, ".tmp: cannot write the checkpoint: Is a directory",
         "saying so (%s)", err.text);
    rmdir(tmp);
    unlink(mine);
    unlink(hard);
    unlink(path);
}

/* The states of coordinator ranks (pool.shards): each rank's length is
 * checked against what is left, never summed to wrap around 2^64. */
static void shards(void)
{
    uint64_t block[3 + 23] = {2, 144, 40};
    struct checkpoint c = {.state = block, .state_len = 3 * 8 + 184};
    size_t off[2], len[2];
    struct aia_error err = {""};
    ok(checkpoint_shards(&c, 2, off, len, &err) == 0 && off[0] == 24 &&
           len[0] == 144 && off[1] == 168 && len[1] == 40,
       "two ranks' states: their offsets and lengths (%s)", err.text);
    block[1] = 192;
    block[2] = UINT64_MAX - 7; /* the sum is right, around 2^64 */
    is_int(checkpoint_shards(&c, 2, off, len, &err), -1,
           "lengths 192 and 2^64 - 8 of 184 bytes are refused");
    like(err.text, "damaged: the state of coordinator rank 0 is 192 bytes, "
                   "past the 184 left",
         "naming the rank and its length (%s)", err.text);
    block[1] = 144;
    block[2] = 32;
    is_int(checkpoint_shards(&c, 2, off, len, &err), -1,
           "lengths that leave bytes over are refused");
    like(err.text, "states are 208 bytes, their lengths say 200", "saying so");
    is_int(checkpoint_shards(&c, 3, off, len, &err), -1,
           "another count of ranks is refused");
    like(err.text, "holds the states of 2 coordinator ranks, this run has 3",
         "naming both (%s)", err.text);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "forge") || !strcmp(argv[1], "peek")))
        return forger(argc, argv);
    plan(0);
    snprintf(path, sizeof path, "/tmp/aiarun-ckpt-%ld.bin", (long)getpid());
    struct checkpoint_id id, other;
    job_id(&id, 7);
    double q[3] = {1, -2, 0.5};
    unsigned char state[5] = {1, 2, 3, 4, 5};
    struct checkpoint k = {.iteration = 40,
                           .epoch = 3,
                           .round = 40,
                           .elapsed = 1.5,
                           .history_bytes = 900,
                           .answers = 163,
                           .query_len = 3,
                           .query = q,
                           .state_len = 5,
                           .state = state};
    struct checkpoint got;
    struct aia_error err = {""};
    is_int(round_trip(&k, &id, &id, &got, &err), 0, "a checkpoint reads back");
    is_int(got.iteration, 40, "its iteration");
    is_int((long long)got.history_bytes, 900, "its history size");
    is_int((long long)got.answers, 163, "its answers from the start");
    is_double(got.query[1], -2, 0, "its query");
    ok(got.state_len == 5 && memcmp(got.state, state, 5) == 0, "its state");
    checkpoint_free(&got);

    job_id(&other, 8);
    is_int(round_trip(&k, &id, &other, &got, &err), -1,
           "a checkpoint of another seed is refused");
    like(err.text, "from another job: seed differs", "naming the seed (%s)",
         err.text);
    other.part[0] = 99;
    other.all = 0;
    for (int i = 0; i < other.n; i++)
        other.all = checkpoint_hash(other.all ? other.all : CHECKPOINT_HASH0,
                                    &other.part[i], 8);
    round_trip(&k, &id, &other, &got, &err);
    like(err.text, "from another job: algorithm, seed differ",
         "naming each part that differs (%s)", err.text);

    struct {
        const char *what, *want;
        struct checkpoint k;
    } bad[] = {
        {"a negative iteration", "its iteration is out of bounds", k},
        {"a negative epoch", "its epoch is out of bounds", k},
        {"a NaN time", "its time is out of bounds", k},
        {"a negative time", "its time is out of bounds", k},
        {"a history of 2^51 bytes", "its history size is out of bounds", k},
        {"an iteration of 2^62", "its iteration is out of bounds", k},
        {"answers past 2^53", "its answers is out of bounds", k},
        {"a query holding an infinity", "value 2 of its query is not finite",
         k},
    };
    double inf_q[3] = {1, 2, INFINITY};
    bad[0].k.iteration = -1;
    bad[1].k.epoch = -5;
    bad[2].k.elapsed = NAN;
    bad[3].k.elapsed = -1;
    bad[4].k.history_bytes = 1ull << 51;
    bad[5].k.iteration = 1ll << 62;
    bad[6].k.answers = 1ull << 60;
    bad[7].k.query = inf_q;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        is_int(round_trip(&bad[i].k, &id, &id, &got, &err), -1, "%s is refused",
               bad[i].what);
        like(err.text, bad[i].want, "saying so (%s)", err.text);
        ok(got.query == NULL && got.state == NULL, "and nothing is kept");
    }

    /* a damaged byte, and a file cut short */
    checkpoint_write(path, &id, &k, &err);
    FILE *f = fopen(path, "r+b");
    fseek(f, 30, SEEK_SET);
    fputc(0x55, f);
    fclose(f);
    is_int(checkpoint_read(path, &id, 3, &got, &err), -1,
           "a damaged checkpoint is refused");
    like(err.text, "checksum", "by its checksum");
    static const char junk[] = "AIACKPT1\2\0\0\0";
    is_int(checkpoint_parse("junk", junk, sizeof junk - 1, &id, 3, &got, &err),
           -1, "a cut one is refused");
    unlink(path);
    temporaries(&id, &k);
    shards();
    return done_testing();
}
