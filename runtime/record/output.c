/* output.c - CSV and JSON Lines rows, the iterate file and the final
 * iterate's values, written in whole records. */
#include <config.h>

#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

/* Rows reach the file at least this often, so that a run that crashes
 * (a plugin's fault, a kill) loses at most the last second of them; a
 * flush per row would cost a system call per answer on fast runs. */
#define OUTPUT_FLUSH_S 1.0
/* Bytes gathered before they are written, whatever the time. */
#define OUTPUT_BUFFER (64u << 10)

/* A file written in whole records (rows, iterates): bytes are gathered
 * in buf and reach the file only as whole records, with pwrite.  A
 * write that fails (a full disk) is named at once with its own errno,
 * and the file is cut back to its last whole record: on a full file
 * system a history row was torn, an iterate record cut at 16,384 bytes,
 * the failure seen only at close and once named with a stale errno. */
struct sink {
    int fd;
    char *path;
    char *buf;
    size_t len, cap;
    long long size; /* bytes in the file, whole records only */
    size_t rec;     /* bytes a record (iterates); 0: records end in '\n' */
    int failed;     /* errno of the write that failed; 0: none */
};

static int sink_error(struct sink *k, struct aia_error *err)
{
    char shown[200];
    return aia_seterr(err, "%s: write failed: %s",
                      util_shown(shown, sizeof shown, k->path, 160),
                      strerror(k->failed));
}

/* Room for n more bytes in the buffer.  0 or -1 (out of memory). */
static int sink_room(struct sink *k, size_t n)
{
    if (k->len + n <= k->cap)
        return 0;
    size_t cap = k->cap ? k->cap : 4096;
    while (cap < k->len + n)
        cap *= 2;
    char *b = realloc(k->buf, cap);
    if (!b)
        return -1;
    k->buf = b;
    k->cap = cap;
    return 0;
}

static void sink_put(struct sink *k, const void *p, size_t n)
{
    if (k->failed || sink_room(k, n) < 0) {
        k->failed = k->failed ? k->failed : ENOMEM;
        return;
    }
    memcpy(k->buf + k->len, p, n);
    k->len += n;
}

static void sink_printf(struct sink *k, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sink_printf(struct sink *k, const char *fmt, ...)
{
    char small[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sink_put(k, small, (size_t)n);
        return;
    }
    if (k->failed || sink_room(k, (size_t)n + 1) < 0) {
        k->failed = k->failed ? k->failed : ENOMEM;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(k->buf + k->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    k->len += (size_t)n;
}

/* The gathered records written.  A write that fails leaves the file cut
 * to the whole records it took, and every later call fails the same. */
static int sink_flush(struct sink *k, struct aia_error *err)
{
    size_t done = 0;
    while (!k->failed && done < k->len) {
        ssize_t n = pwrite(k->fd, k->buf + done, k->len - done,
                           (off_t)(k->size + (long long)done));
        if (n > 0)
            done += (size_t)n;
        else if (n == 0)
            k->failed = ENOSPC; /* a write that takes nothing: no room */
        else if (errno != EINTR)
            k->failed = errno;
    }
    if (k->failed) {
        /* the records wholly written are kept, the torn one cut off */
        size_t whole = done;
        if (k->rec)
            whole -= done % k->rec;
        else
            while (whole > 0 && k->buf[whole - 1] != '\n')
                whole--;
        k->size += (long long)whole;
        if (ftruncate(k->fd, (off_t)k->size) != 0) {
            /* nothing better to do: the write's error is the one named */
        }
        k->len = 0;
        return sink_error(k, err);
    }
    k->size += (long long)k->len;
    k->len = 0;
    return 0;
}

/* n bytes at off, all of them: 0, or the errno of the write that failed
 * (ENOSPC for one that took nothing). */
static int write_all(int fd, const char *p, size_t n, long long off)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            off += w;
        } else if (w == 0) {
            return ENOSPC;
        } else if (errno != EINTR) {
            return errno;
        }
    }
    return 0;
}

/* A record of a head and a body written at once, past the gathered
 * ones, without a copy in the buffer (a model of 1e8 values is 800 MB):
 * whole, or cut off again. */
static int sink_record(struct sink *k, const void *head, size_t hn,
                       const void *body, size_t bn, struct aia_error *err)
{
    if (sink_flush(k, err) < 0)
        return -1;
    int e = write_all(k->fd, head, hn, k->size);
    if (e == 0)
        e = write_all(k->fd, body, bn, k->size + (long long)hn);
    if (e == 0) {
        k->size += (long long)(hn + bn);
        return 0;
    }
    k->failed = e;
    if (ftruncate(k->fd, (off_t)k->size) != 0) {
        /* the write's error is the one named */
    }
    return sink_error(k, err);
}

static int sink_close(struct sink *k, struct aia_error *err)
{
    int rc = sink_flush(k, err);
    if (close(k->fd) != 0 && rc == 0) {
        k->failed = errno;
        rc = sink_error(k, err);
    }
    free(k->buf);
    free(k->path);
    return rc;
}

/* keep < 0: a new file; else the file cut to keep bytes, to append to
 * (a file that is gone is started again; one that is shorter, an empty
 * one included, is refused: it is not the file the checkpoint was
 * written with).  The file must be regular or new, and is locked (flock)
 * for as long as it is open, so that two runs never write one file. */
static int open_at(struct sink *k, const char *path, long long keep,
                   struct aia_error *err)
{
    char shown[200];
    util_shown(shown, sizeof shown, path, 160);
    *k = (struct sink){.fd = -1};
    if (!(k->path = strdup(path)))
        return aia_seterr(err, "%s: out of memory", shown);
    struct stat before;
    int existed = stat(path, &before) == 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        aia_seterr(err, "%s: cannot write: %s", shown, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        aia_seterr(err,
                   "%s: not a regular file: outputs are regular files "
                   "or new paths",
                   shown);
        goto fail;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        aia_seterr(err, "%s: %s", shown,
                   errno == EWOULDBLOCK ? "another run is writing it (the "
                                          "file is locked)"
                                        : strerror(errno));
        goto fail;
    }
    if (keep >= 0 && (existed || st.st_size > 0) && st.st_size < keep) {
        aia_seterr(err,
                   "%s: %lld bytes, fewer than the %lld the checkpoint "
                   "records: not the file it was written with",
                   shown, (long long)st.st_size, keep);
        goto fail;
    }
    k->size = keep >= 0 && st.st_size > 0 ? keep : 0;
    if (ftruncate(fd, (off_t)k->size) != 0) {
        aia_seterr(err, "%s: cannot cut it back: %s", shown, strerror(errno));
        goto fail;
    }
    k->fd = fd;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    free(k->path);
    k->path = NULL;
    return -1;
}

struct output {
    struct sink k;
    int format;
    const struct output_column *cols;
    int ncols;
    double flushed; /* util_now of the last flush */
};

struct output *output_open(const char *path, int format,
                           const struct output_column *cols, int ncols,
                           long long keep, struct aia_error *err)
{
    struct output *o = calloc(1, sizeof *o);
    if (!o) {
        aia_seterr(err, "%s: out of memory", path);
        return NULL;
    }
    if (open_at(&o->k, path, keep, err) < 0) {
        free(o);
        return NULL;
    }
    o->format = format;
    o->cols = cols;
    o->ncols = ncols;
    o->flushed = 0; /* the first row is flushed at once */
    if (format == OUTPUT_CSV && o->k.size == 0) {
        for (int i = 0; i < ncols; i++)
            sink_printf(&o->k, "%s%s", i ? "," : "", cols[i].name);
        sink_put(&o->k, "\n", 1);
        if (sink_flush(&o->k, err) < 0) {
            output_close(o, &(struct aia_error){""});
            return NULL;
        }
    }
    return o;
}

int output_flush(struct output *o, struct aia_error *err)
{
    return o ? sink_flush(&o->k, err) : 0;
}

long long output_size(struct output *o)
{
    return o->k.size + (long long)o->k.len;
}

static void value(struct sink *k, enum output_kind kind, double v, int json)
{
    if (isnan(v) || isinf(v)) {
        if (json)
            sink_put(k, "null", 4);
        return;
    }
    switch (kind) {
    case OUT_INT:
        sink_printf(k, "%lld", (long long)v);
        break;
    case OUT_TIME:
        sink_printf(k, "%.6f", v);
        break;
    case OUT_SHORT:
        sink_printf(k, "%.9f", v);
        break;
    case OUT_REAL:
        sink_printf(k, "%.17g", v);
        break;
    }
}

int output_row(struct output *o, const double *values, struct aia_error *err)
{
    struct sink *k = &o->k;
    int json = o->format == OUTPUT_JSONL;
    if (k->failed)
        return sink_error(k, err);
    if (json)
        sink_put(k, "{", 1);
    for (int i = 0; i < o->ncols; i++) {
        if (json)
            sink_printf(k, "%s\"%s\":", i ? "," : "", o->cols[i].name);
        else if (i)
            sink_put(k, ",", 1);
        value(k, o->cols[i].kind, values[i], json);
    }
    if (json)
        sink_put(k, "}", 1);
    sink_put(k, "\n", 1);
    double now = util_now();
    if (k->failed || k->len >= OUTPUT_BUFFER ||
        now - o->flushed >= OUTPUT_FLUSH_S) {
        o->flushed = now;
        return sink_flush(k, err);
    }
    return 0;
}

int output_close(struct output *o, struct aia_error *err)
{
    if (!o)
        return 0;
    int rc = sink_close(&o->k, err);
    free(o);
    return rc;
}

struct iterates {
    struct sink k;
    size_t dim;
};

struct iterates *iterates_open(const char *path, size_t dim, long long keep,
                               struct aia_error *err)
{
    struct iterates *it = calloc(1, sizeof *it);
    if (!it) {
        aia_seterr(err, "%s: out of memory", path);
        return NULL;
    }
    if (open_at(&it->k, path, keep, err) < 0) {
        free(it);
        return NULL;
    }
    it->dim = dim;
    if (it->k.size == 0) {
        uint32_t version[2] = {1, 0};
        uint64_t d = dim;
        sink_put(&it->k, "AIAITER1", 8);
        sink_put(&it->k, version, sizeof version);
        sink_put(&it->k, &d, sizeof d);
        if (sink_flush(&it->k, err) < 0) {
            iterates_close(it, &(struct aia_error){""});
            return NULL;
        }
    }
    /* from here on the file is the header and whole records */
    it->k.rec = 3 * sizeof(int64_t) + dim * sizeof(double);
    return it;
}

int iterates_flush(struct iterates *it, struct aia_error *err)
{
    return it ? sink_flush(&it->k, err) : 0;
}

long long iterates_size(struct iterates *it)
{
    return it->k.size + (long long)it->k.len;
}

int iterates_write(struct iterates *it, int64_t iteration, int64_t epoch,
                   double time, const double *x, struct aia_error *err)
{
    struct sink *k = &it->k;
    if (k->failed)
        return sink_error(k, err);
    int64_t head[3];
    memcpy(&head[0], &iteration, sizeof iteration);
    memcpy(&head[1], &epoch, sizeof epoch);
    memcpy(&head[2], &time, sizeof time);
    if (it->dim * sizeof *x > OUTPUT_BUFFER)
        return sink_record(k, head, sizeof head, x, it->dim * sizeof *x, err);
    sink_put(k, head, sizeof head);
    sink_put(k, x, it->dim * sizeof *x);
    if (k->failed || k->len >= OUTPUT_BUFFER)
        return sink_flush(k, err);
    return 0;
}

int iterates_close(struct iterates *it, struct aia_error *err)
{
    if (!it)
        return 0;
    int rc = sink_close(&it->k, err);
    free(it);
    return rc;
}

int output_values(const char *path, const double *x, size_t n,
                  struct aia_error *err)
{
    struct sink k;
    if (open_at(&k, path, -1, err) < 0)
        return -1;
    for (size_t j = 0; j < n; j++) {
        sink_printf(&k, "%.17g\n", x[j]);
        if (k.len >= OUTPUT_BUFFER && sink_flush(&k, err) < 0)
            break;
    }
    return sink_close(&k, err);
}

int output_text(const char *path, const char *text, size_t len,
                struct aia_error *err)
{
    struct sink k;
    if (open_at(&k, path, -1, err) < 0)
        return -1;
    /* in one piece: a failed write is cut back to a line's end within
     * what was gathered, so pieces would have to end at lines too */
    sink_put(&k, text, len);
    return sink_close(&k, err);
}

/* The columns as one line, "a,b,c", into buf. */
static void join(char *buf, size_t len, const struct output_column *cols,
                 int ncols)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < ncols && at < len; i++) {
        int n =
            snprintf(buf + at, len - at, "%s%s", i ? "," : "", cols[i].name);
        at += n > 0 ? (size_t)n : 0;
    }
}

/* The keys of a JSON Lines row (aiarun writes no strings but its keys),
 * "a,b,c", into buf. */
static void json_keys(char *buf, size_t len, const char *line)
{
    size_t at = 0;
    buf[0] = '\0';
    for (const char *q = strchr(line, '"'); q && at + 1 < len;) {
        const char *end = strchr(q + 1, '"');
        if (!end)
            break;
        int n = snprintf(buf + at, len - at, "%s%.*s", at ? "," : "",
                         (int)(end - q - 1), q + 1);
        at += n > 0 ? (size_t)n : 0;
        q = strchr(end + 1, '"');
    }
}

int output_check_layout(const char *key, const char *path, long long keep,
                        int format, const struct output_column *cols, int ncols,
                        struct aia_error *err)
{
    /* a file cut to nothing is written anew, a missing one started again */
    int fd = keep > 0 ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
    if (fd < 0)
        return 0;
    char line[4096], have[4096], want[4096], shown[200];
    size_t max = keep < (long long)sizeof line ? (size_t)keep : sizeof line - 1;
    struct stat st;
    /* a file shorter than the checkpoint says is named by open_at */
    ssize_t n =
        fstat(fd, &st) == 0 && st.st_size >= keep ? pread(fd, line, max, 0) : 0;
    close(fd);
    if (n <= 0)
        return 0;
    line[n] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    int json = line[0] == '{';
    join(want, sizeof want, cols, ncols);
    if (json)
        json_keys(have, sizeof have, line);
    else
        snprintf(have, sizeof have, "%s", line);
    if (json == (format == OUTPUT_JSONL) && strcmp(have, want) == 0)
        return 0;
    util_shown(shown, sizeof shown, path, 160);
    if (json != (format == OUTPUT_JSONL))
        return aia_seterr(err,
                          "%s: '%s' holds %s rows, and this run would "
                          "append %s (output.format): resume with the "
                          "outputs' keys it was written with",
                          key, shown, json ? "JSON Lines" : "CSV",
                          json ? "CSV" : "JSON Lines");
    return aia_seterr(err,
                      "%s: '%s' holds rows of the columns %.400s, and this "
                      "run would append rows of %.400s (output.format, "
                      "output.history_sample): resume with the outputs' "
                      "keys it was written with",
                      key, shown, have, want);
}

size_t output_sample_rows(const struct output_conf *o, int data, int gap,
                          size_t rows, size_t total)
{
    int64_t n = o->history_sample;
    if (!data || !o->history || n == OUTPUT_SAMPLE_ALL || total == 0)
        return 0;
    if (n == OUTPUT_SAMPLE_AUTO) {
        /* a run to a gap reads the suboptimality of every row */
        if (gap || total < (size_t)OUTPUT_SAMPLE_ROWS * OUTPUT_SAMPLE_FROM)
            return 0;
        n = OUTPUT_SAMPLE_ROWS;
    }
    if ((uint64_t)n >= total)
        return 0;
    /* this rank's share of the sample, as its share of the rows */
    double k = floor((double)n * (double)rows / (double)total + 0.5);
    if (k < 1)
        k = 1;
    return k >= (double)rows ? 0 : (size_t)k;
}
