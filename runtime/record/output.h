/* output.h - files of rows with named columns (CSV or JSON Lines), and
 * the binary file of saved iterates.
 *
 * Iterate file layout (little-endian, as written on x86 and Arm):
 *
 *     offset 0   8 bytes  magic "AIAITER1"
 *            8   uint32   layout version, 1
 *           12   uint32   0
 *           16   uint64   dim: values per iterate
 *           24   records, each 24 + 8 * dim bytes:
 *                int64 iteration, int64 epoch, float64 time (seconds
 *                since the run began), float64 x[dim]
 */
#ifndef AIARUN_OUTPUT_H
#define AIARUN_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

enum output_format { OUTPUT_CSV = 0, OUTPUT_JSONL = 1 };

struct mnode;

/* The output section of a job file: what the recorder writes and when
 * (the configuration binds its keys here, conf/job_keys.c).  A file is
 * NULL when none is asked for. */
struct output_conf {
    const char *history; /* the loss history */
    int64_t every;       /* a history row every this many iterations */
    const char *answers; /* one row per answer */
    const char *workers; /* the per-worker table */
    int format;          /* enum output_format, history and answers */
    int64_t every_epochs;      /* 0: history rows by iterations only */
    const char *iterates;      /* binary file of saved iterates */
    const char *final;         /* text file of the final iterate */
    const char *checkpoint;    /* the coordinator's state, for --resume */
    int64_t checkpoint_every;  /* iterations; 0: not by iterations */
    double checkpoint_seconds; /* 0: not by time */
    const struct mnode *checkpoint_node; /* where the file is named */
    /* the training rows a history row's loss and metric read: a count
     * over the pool, OUTPUT_SAMPLE_ALL or OUTPUT_SAMPLE_AUTO (set by the
     * output section's check from history_sample) */
    int64_t history_sample;
};

#define OUTPUT_SAMPLE_ALL 0
#define OUTPUT_SAMPLE_AUTO (-1)
/* auto: a sample of this many rows where the training set holds at least
 * OUTPUT_SAMPLE_FROM times as many, else every row */
#define OUTPUT_SAMPLE_ROWS 10000
#define OUTPUT_SAMPLE_FROM 5

/* Rows of a sample of a rank's rows (rows of the file's total) that a
 * history row's training loss and metric read under o's history_sample
 * (data: the job reads problem.data; gap: it stops at a gap, whose
 * suboptimality column auto keeps on every row); 0: every row. */
size_t output_sample_rows(const struct output_conf *o, int data, int gap,
                          size_t rows, size_t total);

/* How a column's values are written. */
enum output_kind {
    OUT_INT,   /* an integer */
    OUT_TIME,  /* seconds, to the microsecond */
    OUT_REAL,  /* a double, to every digit */
    OUT_SHORT, /* a double, to the nanosecond (durations) */
};

struct output_column {
    const char *name;
    enum output_kind kind;
};

struct output;

/* Open path for writing rows of the ncols columns (the array must outlive
 * the file) in format; a CSV file starts with the header line.  keep < 0:
 * a new file; keep >= 0 (a resumed run): the file cut to its first keep
 * bytes and appended to.  NULL with err naming the file. */
struct output *output_open(const char *path, int format,
                           const struct output_column *cols, int ncols,
                           long long keep, struct aia_error *err);

/* The rows gathered so far written to the file (each written whole, or
 * the file cut back to its last whole row: a full disk tears none).  0,
 * or -1 with err naming the file and the write's error; NULL is a
 * no-op. */
int output_flush(struct output *o, struct aia_error *err);

/* Bytes of the rows so far, those not yet flushed included. */
long long output_size(struct output *o);

/* One row of ncols values; NaN is written as an empty CSV field or a JSON
 * null.  Rows are written at least every second; a write that fails is
 * named at once.  0 or -1 with err (then every later call fails). */
int output_row(struct output *o, const double *values, struct aia_error *err);

/* Flush and close; 0, or -1 when a write failed.  NULL is a no-op. */
int output_close(struct output *o, struct aia_error *err);

struct iterates;

struct iterates *iterates_open(const char *path, size_t dim,
                               long long keep, struct aia_error *err);
/* As output_flush and output_size, in whole records. */
int iterates_flush(struct iterates *f, struct aia_error *err);
long long iterates_size(struct iterates *f);
int iterates_write(struct iterates *f, int64_t iteration, int64_t epoch,
                   double time, const double *x, struct aia_error *err);
int iterates_close(struct iterates *f, struct aia_error *err);

/* The n values of x written to path, one a line (output.final): whole
 * lines only, a failure named with its error.  0 or -1 with err. */
int output_values(const char *path, const double *x, size_t n,
                  struct aia_error *err);

/* The len bytes of text, lines ending in '\n', written to path as
 * output_values writes: whole lines only, a failure named with its error.
 * 0 or -1 with err. */
int output_text(const char *path, const char *text, size_t len,
                struct aia_error *err);

/* Whether the file at path, keep bytes of which a resumed run keeps and
 * appends to, holds rows of this layout: format, and the ncols columns
 * (a CSV header, the keys of a JSON Lines row).  0, or -1 with err
 * naming key, the file and both layouts. */
int output_check_layout(const char *key, const char *path, long long keep,
                        int format, const struct output_column *cols, int ncols,
                        struct aia_error *err);

#endif
