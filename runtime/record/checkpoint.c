/* checkpoint.c - write and read checkpoints, atomically and checked. */
#include <config.h>

#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

#define MAGIC "AIACKPT1"
#define LAYOUT 4
#define MAX_CHECKPOINT (1ull << 40)

uint64_t checkpoint_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

void checkpoint_id_add(struct checkpoint_id *id, const char *name, uint64_t h)
{
    if (id->n < CHECKPOINT_PARTS) {
        snprintf(id->name[id->n], CHECKPOINT_NAME, "%s", name);
        id->part[id->n++] = h;
    }
    id->all =
        checkpoint_hash(id->all ? id->all : CHECKPOINT_HASH0, &h, sizeof h);
}

/* A growing byte buffer. */
struct buf {
    unsigned char *p;
    size_t len, cap;
    int failed;
};

static void put(struct buf *b, const void *p, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void put64(struct buf *b, uint64_t v)
{
    put(b, &v, sizeof v);
}

/* The folder of path, synced so that the rename is durable. */
static void sync_dir(const char *path)
{
    char *dir = util_dirname(path);
    if (!dir)
        return;
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

/* A new PATH.tmp, opened for writing.  It is created exclusively and
 * never through a link: a link there (`ln -s mine.csv ck.bin.tmp`, or a
 * hard link) once had the checkpoint written into the file it names.
 * What a run that died left there (a file or a link) is removed first;
 * the checkpoint's lock keeps any other aiarun from writing it.  A
 * folder is not removed: open fails with EEXIST, then unlink with
 * EISDIR, and the caller names it.  The descriptor, or -1 with errno. */
static int create_temporary(const char *tmp)
{
    for (int tries = 0; tries < 2; tries++) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0644);
        if (fd >= 0 || errno != EEXIST)
            return fd;
        struct stat st;
        if (lstat(tmp, &st) == 0 && S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        if (unlink(tmp) != 0 && errno != ENOENT)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

int checkpoint_write(const char *path, const struct checkpoint_id *identity,
                     const struct checkpoint *c, struct aia_error *err)
{
    struct buf b = {0};
    uint32_t head[2] = {LAYOUT, AIA_ABI_VERSION};
    put(&b, MAGIC, 8);
    put(&b, head, sizeof head);
    put64(&b, identity->all);
    uint32_t nparts[2] = {(uint32_t)identity->n, 0};
    put(&b, nparts, sizeof nparts);
    for (int i = 0; i < identity->n; i++) {
        put(&b, identity->name[i], CHECKPOINT_NAME);
        put64(&b, identity->part[i]);
    }
    put64(&b, (uint64_t)c->iteration);
    put64(&b, (uint64_t)c->epoch);
    put64(&b, c->round);
    put(&b, &c->elapsed, sizeof c->elapsed);
    put64(&b, c->history_bytes);
    put64(&b, c->answers_bytes);
    put64(&b, c->iterates_bytes);
    put64(&b, c->answers);
    for (int i = 0; i < CHECKPOINT_TRAFFIC; i++)
        put64(&b, c->traffic[i]);
    put64(&b, c->query_len);
    put(&b, c->query, c->query_len * sizeof *c->query);
    put64(&b, c->state_len);
    put(&b, c->state, c->state_len);
    put64(&b, checkpoint_hash(CHECKPOINT_HASH0, b.p, b.len));
    if (b.failed) {
        free(b.p);
        return aia_seterr(err, "%s: out of memory for the checkpoint", path);
    }
    char *tmp = malloc(strlen(path) + 5);
    if (!tmp) {
        free(b.p);
        return aia_seterr(err, "%s: out of memory", path);
    }
    sprintf(tmp, "%s.tmp", path);
    int rc = -1;
    int fd = create_temporary(tmp);
    if (fd < 0) {
        aia_seterr(err, "%s: cannot write the checkpoint: %s", tmp,
                   strerror(errno));
        goto out;
    }
    size_t done = 0;
    while (done < b.len) {
        ssize_t w = write(fd, b.p + done, b.len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            aia_seterr(err, "%s: write failed: %s", tmp, strerror(errno));
            close(fd);
            unlink(tmp);
            goto out;
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        aia_seterr(err, "%s: sync failed: %s", tmp, strerror(errno));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) != 0) {
        aia_seterr(err, "%s: cannot replace the checkpoint: %s", path,
                   strerror(errno));
        unlink(tmp);
        goto out;
    }
    sync_dir(path);
    rc = 0;
out:
    free(tmp);
    free(b.p);
    return rc;
}

/* A reader over the file's bytes that refuses to read past the end. */
struct cursor {
    const unsigned char *p;
    size_t len, at;
};

static int take(struct cursor *r, void *out, size_t n)
{
    if (r->len - r->at < n)
        return -1;
    memcpy(out, r->p + r->at, n);
    r->at += n;
    return 0;
}

/* The parts of the identity that differ from the file's, named in err. */
static int differs(const char *path, struct cursor *r,
                   const struct checkpoint_id *id, struct aia_error *err)
{
    uint32_t n[2];
    char names[CHECKPOINT_PARTS * (CHECKPOINT_NAME + 2)] = "";
    size_t used = 0;
    if (take(r, n, sizeof n) < 0 || n[0] > CHECKPOINT_PARTS)
        return aia_seterr(err, "%s: damaged (its identity)", path);
    char fname[CHECKPOINT_PARTS][CHECKPOINT_NAME];
    uint64_t fpart[CHECKPOINT_PARTS];
    for (uint32_t i = 0; i < n[0]; i++)
        if (take(r, fname[i], CHECKPOINT_NAME) < 0 || take(r, &fpart[i], 8) < 0)
            return aia_seterr(err, "%s: damaged (its identity)", path);
    for (int i = 0; i < id->n; i++) {
        uint32_t j = 0;
        while (j < n[0] && strncmp(fname[j], id->name[i], CHECKPOINT_NAME))
            j++;
        if (j < n[0] && fpart[j] == id->part[i])
            continue;
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                 used ? ", " : "", id->name[i]);
    }
    return aia_seterr(err, "%s: from another job: %s differ%s", path,
                      used ? names : "its identity",
                      used && strchr(names, ',') ? "" : "s");
}

int checkpoint_read(const char *path, const struct checkpoint_id *identity,
                    size_t query_len, struct checkpoint *c,
                    struct aia_error *err)
{
    memset(c, 0, sizeof *c);
    size_t len;
    char *text = util_read_file(path, MAX_CHECKPOINT, &len, err);
    if (!text)
        return -1;
    int rc = checkpoint_parse(path, text, len, identity, query_len, c, err);
    free(text);
    return rc;
}

int checkpoint_parse(const char *path, const void *p, size_t len,
                     const struct checkpoint_id *identity, size_t query_len,
                     struct checkpoint *c, struct aia_error *err)
{
    memset(c, 0, sizeof *c);
    const unsigned char *text = p;
    struct cursor r = {text, len, 0};
    char magic[8];
    uint32_t head[2] = {0, 0};
    uint64_t id, v[9 + CHECKPOINT_TRAFFIC], sum = 0;
    if (take(&r, magic, 8) < 0 || memcmp(magic, MAGIC, 8) != 0)
        return aia_seterr(err, "%s: not an aiarun checkpoint", path);
    if (take(&r, head, sizeof head) < 0 || head[0] != LAYOUT ||
        head[1] != AIA_ABI_VERSION)
        return aia_seterr(err,
                          "%s: written by another aiarun (checkpoint "
                          "layout %u, plugin ABI %u; this one writes "
                          "%d and %d)",
                          path, head[0], head[1], LAYOUT, AIA_ABI_VERSION);
    if (len >= 8)
        memcpy(&sum, text + len - 8, 8);
    if (len < 8 || checkpoint_hash(CHECKPOINT_HASH0, text, len - 8) != sum)
        return aia_seterr(err, "%s: damaged (its checksum does not match)",
                          path);
    if (take(&r, &id, 8) < 0)
        goto short_file;
    if (id != identity->all)
        return differs(path, &r, identity, err);
    uint32_t n[2];
    if (take(&r, n, sizeof n) < 0 || n[0] > CHECKPOINT_PARTS ||
        (len - r.at) / (CHECKPOINT_NAME + 8) < n[0])
        goto short_file;
    r.at += (size_t)n[0] * (CHECKPOINT_NAME + 8);
    for (int i = 0; i < 9 + CHECKPOINT_TRAFFIC; i++)
        if (take(&r, &v[i], 8) < 0)
            goto short_file;
    c->iteration = (int64_t)v[0];
    c->epoch = (int64_t)v[1];
    c->round = v[2];
    memcpy(&c->elapsed, &v[3], sizeof c->elapsed);
    c->history_bytes = v[4];
    c->answers_bytes = v[5];
    c->iterates_bytes = v[6];
    c->answers = v[7];
    int big = 0; /* a byte count past 2^53 */
    for (int i = 0; i < CHECKPOINT_TRAFFIC; i++)
        big |= (c->traffic[i] = v[8 + i]) > (uint64_t)CHECKPOINT_MAX_COUNT;
    uint64_t qlen = v[8 + CHECKPOINT_TRAFFIC];
    c->query_len = (size_t)qlen;
    const char *bad =
        c->iteration < 0 || c->iteration > CHECKPOINT_MAX_COUNT ? "iteration"
        : c->epoch < 0 || c->epoch > CHECKPOINT_MAX_COUNT       ? "epoch"
        : c->round > (uint64_t)CHECKPOINT_MAX_COUNT             ? "round"
        : c->answers > (uint64_t)CHECKPOINT_MAX_COUNT           ? "answers"
        : big                                                   ? "byte count"
        : !(c->elapsed >= 0 && c->elapsed < 1e12)               ? "time"
        : c->history_bytes > CHECKPOINT_MAX_BYTES               ? "history size"
        : c->answers_bytes > CHECKPOINT_MAX_BYTES  ? "answer log size"
        : c->iterates_bytes > CHECKPOINT_MAX_BYTES ? "iterate file size"
                                                   : NULL;
    if (bad) {
        aia_seterr(err, "%s: damaged: its %s is out of bounds", path, bad);
        goto fail;
    }
    if (c->query_len != query_len) {
        aia_seterr(err, "%s: its query has %zu values, this job's %zu", path,
                   c->query_len, query_len);
        goto fail;
    }
    if (qlen > (len - r.at) / sizeof(double))
        goto short_file;
    c->query = malloc((query_len ? query_len : 1) * sizeof *c->query);
    if (!c->query || take(&r, c->query, query_len * sizeof *c->query) < 0)
        goto short_file;
    for (size_t i = 0; i < query_len; i++)
        if (!isfinite(c->query[i])) {
            aia_seterr(err,
                       "%s: damaged: value %zu of its query is not "
                       "finite",
                       path, i);
            goto fail;
        }
    uint64_t slen;
    if (take(&r, &slen, 8) < 0 || slen > len - r.at)
        goto short_file;
    c->state_len = (size_t)slen;
    c->state = malloc(slen ? slen : 1);
    if (!c->state || take(&r, c->state, slen) < 0 || r.at != len - 8)
        goto short_file;
    return 0;
short_file:
    aia_seterr(err, "%s: damaged (truncated or inconsistent lengths)", path);
fail:
    checkpoint_free(c);
    return -1;
}

void checkpoint_free(struct checkpoint *c)
{
    free(c->query);
    free(c->state);
    c->query = NULL;
    c->state = NULL;
}

size_t checkpoint_shards_head(int ranks)
{
    return ((size_t)ranks + 1) * sizeof(uint64_t);
}

int checkpoint_shards(const struct checkpoint *c, int ranks, size_t *off,
                      size_t *len, struct aia_error *err)
{
    const unsigned char *b = c->state;
    uint64_t head = 0;
    if (c->state_len >= sizeof head)
        memcpy(&head, b, sizeof head);
    if (ranks < 1 || head != (uint64_t)ranks ||
        c->state_len < checkpoint_shards_head(ranks))
        return aia_seterr(err,
                          "the checkpoint holds the states of %llu "
                          "coordinator ranks, this run has %d (pool.shards)",
                          (unsigned long long)head, ranks);
    /* each length within what is left: lengths summed as they came
     * (192 and 2^64 - 8, summed right around 2^64) once had rank 0 read
     * past the states */
    size_t at = checkpoint_shards_head(ranks);
    for (int j = 0; j < ranks; j++) {
        uint64_t n;
        memcpy(&n, b + (size_t)(j + 1) * sizeof n, sizeof n);
        if (n > c->state_len - at || n > CHECKPOINT_SHARD_MAX)
            return aia_seterr(err,
                              "damaged: the state of coordinator rank %d is "
                              "%llu bytes, past the %zu left of the "
                              "checkpoint's states",
                              j, (unsigned long long)n, c->state_len - at);
        off[j] = at;
        len[j] = (size_t)n;
        at += (size_t)n;
    }
    if (at != c->state_len)
        return aia_seterr(err,
                          "damaged: the checkpoint's states are %zu bytes, "
                          "their lengths say %zu",
                          c->state_len, at);
    return 0;
}

/* PATH.lock, or NULL. */
static char *lock_path(const char *path)
{
    char *p = malloc(strlen(path) + 6);
    if (p)
        sprintf(p, "%s.lock", path);
    return p;
}

int checkpoint_lock(const char *path, struct aia_error *err)
{
    char shown[200];
    util_shown(shown, sizeof shown, path, 160);
    char *lp = lock_path(path);
    if (!lp)
        return aia_seterr(err, "%s: out of memory", shown);
    int fd = -1;
    /* a lock file its holder removed (unlinked, then released) may be
     * locked by us after it is gone: then lock the new one */
    for (int tries = 0; tries < 8; tries++) {
        struct stat held, now;
        fd = open(lp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
        if (fd < 0 || fstat(fd, &held) != 0) {
            aia_seterr(err, "%s.lock: cannot make the checkpoint's lock: %s",
                       shown, strerror(errno));
            goto fail;
        }
        if (!S_ISREG(held.st_mode)) {
            aia_seterr(err,
                       "%s.lock: not a regular file: the checkpoint's "
                       "lock is one",
                       shown);
            goto fail;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            aia_seterr(err, "%s: %s", shown,
                       errno == EWOULDBLOCK
                           ? "another run is writing it (its .lock file "
                             "is locked)"
                           : strerror(errno));
            goto fail;
        }
        if (stat(lp, &now) == 0 && now.st_ino == held.st_ino &&
            now.st_dev == held.st_dev) {
            free(lp);
            return fd;
        }
        close(fd);
        fd = -1;
    }
    aia_seterr(err, "%s.lock: replaced while it was being locked", shown);
fail:
    if (fd >= 0)
        close(fd);
    free(lp);
    return -1;
}

void checkpoint_unlock(const char *path, int fd)
{
    char *lp = lock_path(path);
    if (lp)
        unlink(lp); /* while held: nobody locks the old file after this */
    free(lp);
    close(fd);
}
