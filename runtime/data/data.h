/* data.h - rows of a data file (CSV, libsvm, raw float64, NumPy .npy,
 * MNIST idx, HDF5) for problems.
 *
 * The runtime reads a job's data file here and hands each rank its rows as
 * a struct aia_dataset.  No MPI: a rank reads the rows it keeps, and the
 * whole file is checked once with data_scan.
 *
 * Formats:
 *
 * CSV     one row per line, cells separated by one delimiter: ',', ';',
 *         tab, or runs of blanks (spaces and tabs; leading and trailing
 *         blanks ignored).  Blanks around a cell are ignored.  A cell may
 *         be written in double quotes ("x,1", with "" for a quote inside);
 *         a quoted cell ends on its line.  Every data cell is a finite
 *         number, strtod's syntax.  An optional header line names the
 *         columns.  One column is the target; the others are the features,
 *         in file order.  A UTF-8 byte order mark at the start is skipped.
 * libsvm  (svmlight) "label index:value index:value ...", separated by
 *         blanks.  Indices count from 1 (feature 1 is column 0 of the
 *         dataset) and increase along a line; index 0 is refused rather
 *         than guessed to mean a 0-based file.  Absent features are 0.
 *         Text from '#' to the end of a line is a comment; a line holding
 *         only a comment is not a row.
 * binary  little-endian IEEE float64, row-major, cols values per row with
 *         the target among them; no header.  Its shape comes from the
 *         options and the file size.
 * npy     NumPy's format, versions 1.0 to 3.0: a 2-D array (rows x
 *         columns) of little-endian float64 or float32 in C order; the
 *         target is a column (target), or all columns are features and the
 *         targets come from a 1-D .npy file (targets) of float64, float32
 *         or integers.
 * idx     MNIST's format (big-endian header, then the values), gzip-
 *         compressed or not: an idx file of 2 or more dimensions (the
 *         first counts the rows; a row is the rest, flattened) of unsigned
 *         or signed bytes, int16/32, float32 or float64; the targets (class
 *         labels, say) from a 1-D idx file (targets), as idx1 label files
 *         are shipped.
 * hdf5    a 2-D dataset (dataset, default "x") of an HDF5 file, read as
 *         float64; the target is a column (target) or a 1-D dataset of the
 *         same file (targets).  A rank reads only the hyperslabs of its own
 *         rows.  Needs a build with libhdf5.
 *
 * In text formats lines may end in LF or CRLF, the last one may lack its
 * line end, and blank lines (only blanks) are allowed at the end of the
 * file only.  Lines may be of any length.
 *
 * Every refusal names the file and, when there is one, the line and the
 * column (counted from 1, in bytes): "lr.csv:12:17: column 3 ('x2'): 'abc'
 * is not a number".  Column numbers in messages count from 1 like lines;
 * the target index (an option) and row ids count from 0 like arrays.
 */
#ifndef AIARUN_DATA_H
#define AIARUN_DATA_H

#include <stddef.h>

#include <aiarun/aiarun.h>

/* The formats that other code names, in the order of the registry in
 * data.c. */
enum data_format {
    DATA_CSV = 0,
    DATA_LIBSVM = 1,
    DATA_BINARY = 2,
    DATA_NPY = 3,
    DATA_IDX = 4,
    DATA_HDF5 = 5
};

/* Values of data_opts.header. */
#define DATA_HEADER_AUTO (-1)
#define DATA_HEADER_NO 0
#define DATA_HEADER_YES 1

struct data_opts {
    int format;       /* enum data_format */
    const char *path; /* the file, already resolved by the caller */
    /* CSV.  header: DATA_HEADER_AUTO takes the first line for a header
     * when one of its cells is neither a number nor empty (a header of
     * numbers needs DATA_HEADER_YES). */
    int header;
    /* CSV and binary: the target column, as a header name or as an index
     * written in decimal: "0" is the first column, "-1" the last.  A name
     * in the header wins over an index that reads the same.  NULL: the
     * last column.  libsvm: must be NULL (the label is the target). */
    const char *target;
    /* CSV: ',', ';', '\t', ' ' (runs of blanks) or any other byte but '"'
     * and line ends.  0: the first of ',', ';', '\t' that the first line
     * holds outside quotes, else runs of blanks. */
    char delimiter;
    /* Binary: rows and columns (target included).  cols is required;
     * rows == 0: from the file size, else checked against it. */
    size_t rows, cols;
    /* 1: the rows in CSR form (row_start, col, val; x is NULL), 0: dense.
     * CSR from CSV or binary leaves zeros out; libsvm keeps its entries as
     * written. */
    int sparse;
    /* libsvm: the number of features, which bounds the indices; 0: the
     * largest index among the rows read.  A caller that reads part of a
     * file passes data_scan's count so that every part has the same. */
    size_t features;
    /* npy, idx: a second file holding the targets (1-D), already resolved;
     * hdf5: the name of the targets' 1-D dataset.  NULL: a target column
     * (npy, hdf5). */
    const char *targets;
    /* hdf5: the features' dataset; NULL: "x". */
    const char *dataset;
    /* npy, idx, hdf5: every feature is multiplied by it (1/255 for
     * pixels, say); 0 or 1: as stored. */
    double scale;
    /* 1: the problem keeps the rows as floats (its precision: float32),
     * so a feature beyond a float's range (after scale) is refused, naming
     * where it is, rather than becoming an infinity there. */
    int float32;
};

/* Rows read by data_read.  d is the view handed to problems; it points
 * into the arrays below, which the table owns. */
struct data_table {
    struct aia_dataset d;
    char *source;      /* copy of the path, d.source */
    size_t *row_ids;   /* d.rows entries */
    double *y;         /* d.rows entries */
    double *x;         /* dense: d.rows * d.cols, else NULL */
    size_t *row_start; /* sparse: d.rows + 1 entries, else NULL */
    uint32_t *col;     /* sparse: nnz entries */
    double *val;       /* sparse: nnz entries */
    size_t nnz;        /* sparse: stored entries */
};

/* Set o to the defaults: CSV, header detected, last column the target,
 * delimiter detected, dense. */
void data_opts_init(struct data_opts *o);

/* The format a path's ending suggests: .csv .tsv .txt -> DATA_CSV,
 * .svm .libsvm .svmlight -> DATA_LIBSVM, .bin .f64 -> DATA_BINARY, .npy ->
 * DATA_NPY, -ubyte -ubyte.gz .idx .idx.gz -> DATA_IDX, .h5 .hdf5 .he5 ->
 * DATA_HDF5; -1 for any other. */
int data_format_guess(const char *path);

/* The name of a format ("csv"), or NULL for no format. */
const char *data_format_name(int format);

/* The format named name (a registered format's name), or -1. */
int data_format_lookup(const char *name);

/* problem.data.format's choices ("auto|csv|...") and help, made from the
 * formats' table by data_formats_init (job_sections_init calls it). */
#define DATA_FORMAT_TEXT 1024
extern char data_format_choices[DATA_FORMAT_TEXT];
extern char data_format_help[DATA_FORMAT_TEXT];
void data_formats_init(void);

/* Whether a format's rows are read sparse unless asked otherwise. */
int data_format_sparse(int format);

/* Whether this build reads a format: 0 for one whose library (zlib for
 * idx, libhdf5 for HDF5) it was built without, or no format. */
int data_format_built(int format);

/* Set err to the refusal of path, a file of a format this build lacks
 * the library of ("x.h5: HDF5 files need libhdf5, and this aiarun was
 * built without it (install libhdf5-dev and build again)").  -1. */
int data_format_refuse(int format, const char *path, struct aia_error *err);

/* What the header of a file of a format with one says of its size,
 * without reading its rows: *rows and *cols (the values of a row, a
 * target column among them) of a .npy file's shape, an idx file's
 * dimensions or an HDF5 dataset's dataspace (which a file of 52 KB may
 * give as 10^9 x 1000 never written).  0, or -1 for a format without a
 * header (CSV, libsvm, binary) or a file whose header cannot be read
 * (data_scan says why). */
int data_shape(const struct data_opts *o, double *rows, double *cols);

/* Read the whole file once and check every row as data_read would.  Sets
 * *rows to the number of data rows (header excluded) and *cols to the
 * number of features (target excluded; libsvm: features, or the largest
 * index in the file).  Returns 0, or -1 with err set. */
int data_scan(const struct data_opts *o, size_t *rows, size_t *cols,
              struct aia_error *err);

/* Read into t the data rows r (0-based, header excluded) for which
 * keep(r, arg) is nonzero; keep == NULL keeps every row.  keep is called
 * once per data row, in file order.  Only kept rows are parsed and
 * checked (data_scan checks them all), and memory is proportional to the
 * rows kept plus the longest line.  t->d.total_rows is the file's row
 * count.  Returns 0 with t filled (free it with data_free), or -1 with
 * err set and t emptied. */
int data_read(const struct data_opts *o, int (*keep)(size_t r, void *arg),
              void *arg, struct data_table *t, struct aia_error *err);

/* Into t, a copy of n of the rows of from (all of them when n exceeds
 * its rows), drawn at random without replacement from (seed, stream) and
 * kept in their order; total_rows as from's.  The same arguments give
 * the same rows on every build.  Returns 0 with t filled (free it with
 * data_free), or -1 with err set (out of memory) and t emptied. */
int data_sample(const struct aia_dataset *from, size_t n, uint64_t seed,
                uint64_t stream, struct data_table *t, struct aia_error *err);

/* Free what t owns and empty it; t itself is the caller's. */
void data_free(struct data_table *t);

#endif
