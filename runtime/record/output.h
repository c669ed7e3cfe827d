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

/* Bytes written so far, all flushed to the file. */
long long output_size(struct output *o);

/* One row of ncols values; NaN is written as an empty CSV field or a JSON
 * null.  0 or -1 with err. */
int output_row(struct output *o, const double *values, struct aia_error *err);

/* Flush and close; 0, or -1 when a write failed.  NULL is a no-op. */
int output_close(struct output *o, struct aia_error *err);

struct iterates;

struct iterates *iterates_open(const char *path, size_t dim,
                               long long keep, struct aia_error *err);
long long iterates_size(struct iterates *f);
int iterates_write(struct iterates *f, int64_t iteration, int64_t epoch,
                   double time, const double *x, struct aia_error *err);
int iterates_close(struct iterates *f, struct aia_error *err);

#endif
