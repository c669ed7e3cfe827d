/* checkpoint.c - checkpoints read back as written; refused when damaged,
 * out of bounds, or from another job (naming what differs). */
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

int main(void)
{
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
    return done_testing();
}
