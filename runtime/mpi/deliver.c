/* deliver.c - read or scatter the rows of a data file. */
#include <config.h>

#include "deliver.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bell.h"
#include "core/host.h"
#include "core/util.h"
#include "session/session.h"

#define TAG_DATA 201
#define CHUNK (1u << 30) /* bytes per message: MPI counts are ints */

/* At least one element, so that malloc of an empty part is not NULL. */
static size_t atleast1(size_t n)
{
    return n ? n : 1;
}

static void send_bytes(const void *buf, size_t bytes, int dest)
{
    const char *p = buf;
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
        bell_send(p + off, (int)n, dest, TAG_DATA);
    }
}

static void recv_bytes(void *buf, size_t bytes)
{
    char *p = buf;
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
        MPI_Recv(p + off, (int)n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
}

/* What rank 0 tells a worker before its rows. */
struct part_head {
    uint64_t rows, cols, total, nnz, sparse;
};

/* Rank 0: send worker w (rank dest) its rows of all. */
static void send_part(const struct data_table *all, const struct session_rows *k,
                      int dest)
{
    const struct aia_dataset *d = &all->d;
    size_t rows = 0, nnz = 0;
    for (size_t i = 0; i < d->rows; i++)
        if (session_rows_own(d->row_ids[i], (void *)k)) {
            rows++;
            if (d->row_start)
                nnz += d->row_start[i + 1] - d->row_start[i];
        }
    struct part_head h = {rows, d->cols, d->total_rows, nnz,
                          d->row_start != NULL};
    send_bytes(&h, sizeof h, dest);
    size_t *ids = malloc(atleast1(rows) * sizeof *ids);
    double *y = malloc(atleast1(rows) * sizeof *y);
    double *x = d->row_start ? NULL
                             : malloc(atleast1(rows * d->cols) * sizeof *x);
    size_t *start = d->row_start ? malloc((rows + 1) * sizeof *start) : NULL;
    uint32_t *col = d->row_start ? malloc(atleast1(nnz) * sizeof *col) : NULL;
    double *val = d->row_start ? malloc(atleast1(nnz) * sizeof *val) : NULL;
    if (!ids || !y || (!d->row_start && !x) ||
        (d->row_start && (!start || !col || !val))) {
        host_error("out of memory sending rank %d its rows; aborting", dest);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    size_t r = 0, e = 0;
    for (size_t i = 0; i < d->rows; i++) {
        if (!session_rows_own(d->row_ids[i], (void *)k))
            continue;
        ids[r] = d->row_ids[i];
        y[r] = d->y[i];
        if (d->row_start) {
            start[r] = e;
            for (size_t q = d->row_start[i]; q < d->row_start[i + 1]; q++) {
                col[e] = d->col[q];
                val[e++] = d->val[q];
            }
        } else {
            memcpy(x + r * d->cols, d->x + i * d->cols,
                   d->cols * sizeof *x);
        }
        r++;
    }
    send_bytes(ids, rows * sizeof *ids, dest);
    send_bytes(y, rows * sizeof *y, dest);
    if (d->row_start) {
        start[rows] = e;
        send_bytes(start, (rows + 1) * sizeof *start, dest);
        send_bytes(col, nnz * sizeof *col, dest);
        send_bytes(val, nnz * sizeof *val, dest);
    } else {
        send_bytes(x, rows * d->cols * sizeof *x, dest);
    }
    free(ids);
    free(y);
    free(x);
    free(start);
    free(col);
    free(val);
}

/* A worker: receive its rows from rank 0 into t. */
static void recv_part(const char *source, struct data_table *t)
{
    struct part_head h;
    recv_bytes(&h, sizeof h);
    memset(t, 0, sizeof *t);
    size_t rows = (size_t)h.rows, nnz = (size_t)h.nnz;
    t->source = strdup(source);
    t->row_ids = malloc(atleast1(rows) * sizeof *t->row_ids);
    t->y = malloc(atleast1(rows) * sizeof *t->y);
    if (h.sparse) {
        t->row_start = malloc((rows + 1) * sizeof *t->row_start);
        t->col = malloc(atleast1(nnz) * sizeof *t->col);
        t->val = malloc(atleast1(nnz) * sizeof *t->val);
    } else {
        t->x = malloc(atleast1(rows * (size_t)h.cols) * sizeof *t->x);
    }
    if (!t->source || !t->row_ids || !t->y ||
        (h.sparse && (!t->row_start || !t->col || !t->val)) ||
        (!h.sparse && !t->x)) {
        host_error("out of memory for %zu rows; aborting", rows);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    recv_bytes(t->row_ids, rows * sizeof *t->row_ids);
    recv_bytes(t->y, rows * sizeof *t->y);
    if (h.sparse) {
        recv_bytes(t->row_start, (rows + 1) * sizeof *t->row_start);
        recv_bytes(t->col, nnz * sizeof *t->col);
        recv_bytes(t->val, nnz * sizeof *t->val);
    } else {
        recv_bytes(t->x, rows * h.cols * sizeof *t->x);
    }
    t->nnz = nnz;
    t->d = (struct aia_dataset){
        .rows = rows,
        .cols = (size_t)h.cols,
        .total_rows = (size_t)h.total,
        .row_ids = t->row_ids,
        .y = t->y,
        .x = t->x,
        .row_start = t->row_start,
        .col = t->col,
        .val = t->val,
        .source = t->source,
    };
}

static int compare_parts(const struct setup *s, const struct data_table *t,
                         const struct session_rows *k0, int ok, struct aia_error *err);

static void file_stamp(const char *path, unsigned long long *stamp);
static int compare_stamps(const struct setup *s, const char *path,
                          const unsigned long long *stamp, int ok,
                          struct aia_error *err);

/* The coordinator's view of a file whose rows only the workers hold: its
 * shape, and no rows in the storage the workers' rows have (empty arrays,
 * not NULL, so that a problem sees a 0 x cols matrix). */
static int shape_only(const char *path, int sparse, size_t total,
                      size_t cols, struct data_table *t,
                      struct aia_error *err)
{
    t->source = strdup(path);
    t->row_ids = calloc(1, sizeof *t->row_ids);
    t->y = calloc(1, sizeof *t->y);
    if (sparse) {
        t->row_start = calloc(1, sizeof *t->row_start);
        t->col = calloc(1, sizeof *t->col);
        t->val = calloc(1, sizeof *t->val);
    } else {
        t->x = calloc(1, sizeof *t->x);
    }
    if (!t->source || !t->row_ids || !t->y ||
        (sparse ? !t->row_start || !t->col || !t->val : !t->x)) {
        data_free(t);
        return aia_seterr(err, "out of memory");
    }
    t->d = (struct aia_dataset){
        .cols = cols, .total_rows = total, .row_ids = t->row_ids, .y = t->y,
        .x = t->x, .row_start = t->row_start, .col = t->col, .val = t->val,
        .source = t->source};
    return 0;
}

int deliver_data(const struct setup *s, const struct job_data *d,
                 int all_on_root, struct data_table *t,
                 struct aia_error *err)
{
    memset(t, 0, sizeof *t);
    if (!d->path)
        return 0;
    /* rank 0 checks the whole file and says how big it is */
    /* ok, rows, features, and the file's size and time when checked */
    unsigned long long shape[5] = {0, 0, 0, 0, 0};
    struct data_opts o;
    if (s->rank == 0) {
        size_t rows, cols;
        session_data_opts(d, 0, &o);
        /* a FIFO or a device is refused before it is opened */
        if (util_regular_input(d->path, err) == 0 &&
            data_scan(&o, &rows, &cols, err) == 0)
            shape[0] = 1, shape[1] = rows, shape[2] = cols;
        file_stamp(d->path, shape + 3);
    }
    MPI_Bcast(shape, 5, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (!shape[0])
        return s->rank == 0 ? -1
                            : aia_seterr(err, "%s: rank 0 could not read it",
                                         d->path);
    size_t total = (size_t)shape[1];
    if (total < (size_t)s->nworkers)
        return aia_seterr(err, "%s: %zu rows for %d workers: every worker "
                               "needs at least one",
                          d->path, total, s->nworkers);
    /* libsvm: every part gets the whole file's feature count */
    session_data_opts(d, d->format == DATA_LIBSVM ? (size_t)shape[2] : 0, &o);
    struct session_rows k = {.part = {.index = s->windex,
                                      .count = s->nworkers,
                                      .scheme = s->job->part.scheme,
                                      .weights = s->job->part.weights},
                             .total = total};
    int ok = 1;
    if ((s->rank == 0 && all_on_root) ||
        (s->windex >= 0 && d->delivery == JOB_READ))
        ok = data_read(&o, s->rank == 0 ? NULL : session_rows_own, &k, t, err) == 0;
    else if (s->rank == 0)
        ok = shape_only(d->path, d->sparse, total, (size_t)shape[2], t,
                        err) == 0;
    if (d->delivery == JOB_READ) {
        if (all_on_root ? compare_parts(s, t, &k, ok, err) < 0
                        : compare_stamps(s, d->path, shape + 3, ok, err) < 0)
            return -1;
        return ok ? 0 : -1;
    }
    /* scatter: rank 0 says whether it read the file, then sends */
    int root_ok = ok;
    MPI_Bcast(&root_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!root_ok)
        return s->rank == 0 ? -1
                            : aia_seterr(err, "%s: rank 0 could not read it",
                                         d->path);
    if (s->rank == 0) {
        for (int w = 0; w < s->nworkers; w++) {
            k.part.index = w;
            if (all_on_root) {
                send_part(t, &k, s->ranks[w]);
                continue;
            }
            /* one worker's rows at a time: rank 0 never holds the file */
            struct data_table part;
            if (data_read(&o, session_rows_own, &k, &part, err) < 0) {
                host_error("%s; aborting", err->text);
                MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
            }
            send_part(&part, &k, s->ranks[w]);
            data_free(&part);
        }
    } else if (s->windex >= 0) {
        recv_part(d->path, t);
    }
    return 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Fold row i of d into h. */
static uint64_t fold_row(uint64_t h, const struct aia_dataset *d, size_t i)
{
    uint64_t id = d->row_ids[i];
    h = fnv(h, &id, sizeof id);
    h = fnv(h, &d->y[i], sizeof d->y[i]);
    if (d->x)
        return fnv(h, d->x + i * d->cols, d->cols * sizeof *d->x);
    for (size_t q = d->row_start[i]; q < d->row_start[i + 1]; q++) {
        uint32_t c = d->col[q];
        h = fnv(h, &c, sizeof c);
        h = fnv(h, &d->val[q], sizeof d->val[q]);
    }
    return h;
}

#define FNV_BASIS 0xcbf29ce484222325ull

uint64_t deliver_checksum(const struct data_table *t)
{
    uint64_t h = FNV_BASIS;
    for (size_t i = 0; i < t->d.rows; i++)
        h = fold_row(h, &t->d, i);
    return h;
}

/* delivery: read.  Every worker read its own rows; rank 0, which read
 * them all, works out each worker's checksum and compares it with what
 * the worker got: a file that changed between the reads (or differs
 * between nodes) would otherwise give wrong results silently.  Collective;
 * 0, or -1 on every rank with err naming the first rank that differs. */
/* The file's size and modification time (ns), zero when it cannot be
 * had. */
static void file_stamp(const char *path, unsigned long long *stamp)
{
    struct stat st;
    stamp[0] = stamp[1] = 0;
    if (stat(path, &st) == 0) {
        stamp[0] = (unsigned long long)st.st_size;
        stamp[1] = (unsigned long long)st.st_mtim.tv_sec * 1000000000ull +
                   (unsigned long long)st.st_mtim.tv_nsec;
    }
}

/* When rank 0 holds none of the rows it cannot checksum a worker's: the
 * file each worker read must have the size and modification time that
 * rank 0's check saw (stamp), or it changed in between, or differs
 * between nodes. */
static int compare_stamps(const struct setup *s, const char *path,
                          const unsigned long long *stamp, int ok,
                          struct aia_error *err)
{
    unsigned long long now[2];
    int bad = INT_MAX, first;
    if (s->windex >= 0 && ok) {
        file_stamp(path, now);
        if (now[0] != stamp[0] || now[1] != stamp[1])
            bad = s->rank;
    }
    MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == INT_MAX)
        return 0;
    return aia_seterr(err,
                      "%s: the file rank %d read is not the one rank 0 "
                      "checked (its size or modification time differ): the "
                      "file changed while it was read, or differs between "
                      "nodes",
                      path, first);
}

static int compare_parts(const struct setup *s, const struct data_table *t,
                         const struct session_rows *k0, int ok, struct aia_error *err)
{
    uint64_t mine[2] = {ok && s->windex >= 0, ok ? deliver_checksum(t) : 0};
    uint64_t *all = NULL, *want = NULL;
    int bad = -1;
    if (s->rank == 0) {
        all = malloc((size_t)s->size * sizeof mine);
        want = malloc(atleast1((size_t)s->nworkers) * sizeof *want);
        if (!all || !want) {
            host_error("out of memory comparing the workers' rows; aborting");
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
    }
    MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (s->rank == 0 && ok) {
        struct session_rows k = *k0;
        for (int w = 0; w < s->nworkers; w++)
            want[w] = FNV_BASIS;
        for (size_t i = 0; i < t->d.rows; i++) {
            int w = aia_partition_owner(host_get(), &k.part, k.total,
                                        t->d.row_ids[i]);
            if (w >= 0 && w < s->nworkers)
                want[w] = fold_row(want[w], &t->d, i);
        }
        for (int w = 0; w < s->nworkers && bad < 0; w++) {
            int r = s->ranks[w];
            if (all[2 * r] && all[2 * r + 1] != want[w])
                bad = r;
        }
    }
    free(all);
    free(want);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad < 0)
        return 0;
    return aia_seterr(err,
                      "%s: the rows rank %d read differ from those rank 0 "
                      "read for it (checksums differ): the file changed "
                      "while it was read, or differs between nodes",
                      s->job->data.path, bad);
}
