/* data.c - data files to tables: the registry of formats and the entry
 * points.  Each format's pass lives in its own file (data_text.c,
 * data_bin.c, data_npy.c, data_idx.c, data_hdf5.c) and builds its rows
 * with data_build.c; nothing there calls back here. */
#include <config.h>

#include "data.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "data_pass.h"

/* The data formats, in enum data_format order: the job file's names for
 * problem.data.format and its help are made from this table
 * (data_formats_init).  Adding a format is one entry here and its pass in
 * a file of its own; an enum data_format value only when other code must
 * name the format. */
static const struct data_format_entry {
    const char *name;
    const char *doc;   /* the name as the key's help says it */
    const char *exts;  /* file name endings that suggest it, '|'-separated */
    int sparse;        /* its rows are built sparse */
    int target_column; /* a target column may be chosen */
    int (*pass)(struct data_pass *p);
    /* its header's shape (data_shape); NULL: it has none */
    int (*shape)(struct data_pass *p, double *rows, double *cols);
} formats[] = {
    [DATA_CSV] = {"csv", "csv", ".csv|.tsv|.txt", 0, 1, data_csv_pass, NULL},
    [DATA_LIBSVM] = {"libsvm", "libsvm (svmlight)", ".svm|.libsvm|.svmlight", 1,
                     0, data_svm_pass, NULL},
    [DATA_BINARY] = {"binary", "binary (little-endian float64, row-major)",
                     ".bin|.f64", 0, 1, data_bin_pass, NULL},
    [DATA_NPY] = {"npy", "npy (NumPy)", ".npy", 0, 1, data_npy_pass,
                  data_npy_shape},
    [DATA_IDX] = {"idx", "idx (MNIST, gzip or not)",
                  "-ubyte|-ubyte.gz|.idx|.idx.gz", 0, 0, data_idx_pass,
                  data_idx_shape},
    [DATA_HDF5] = {"hdf5", "hdf5", ".h5|.hdf5|.he5", 0, 1, data_hdf5_pass,
                   data_hdf5_shape},
};

#define NFORMATS (sizeof formats / sizeof formats[0])

/* The formats read through an optional library, and whether this build
 * has it (configure found it, and was not told --without-LIB). */
static const struct data_format_lib {
    int format;
    const char *what, *lib, *package;
    int built;
} libs[] = {
#ifdef HAVE_ZLIB
    {DATA_IDX, "idx files", "zlib", "zlib1g-dev", 1},
#else
    {DATA_IDX, "idx files", "zlib", "zlib1g-dev", 0},
#endif
#ifdef HAVE_HDF5
    {DATA_HDF5, "HDF5 files", "libhdf5", "libhdf5-dev", 1},
#else
    {DATA_HDF5, "HDF5 files", "libhdf5", "libhdf5-dev", 0},
#endif
};

static const struct data_format_lib *lib_of(int format)
{
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (libs[i].format == format)
            return &libs[i];
    return NULL;
}

int data_format_built(int format)
{
    const struct data_format_lib *l = lib_of(format);
    return format >= 0 && (size_t)format < NFORMATS && (!l || l->built);
}

int data_format_refuse(int format, const char *path, struct aia_error *err)
{
    const struct data_format_lib *l = lib_of(format);
    if (!l)
        return aia_seterr(err, "%s: format %d needs no library", path, format);
    return aia_seterr(err,
                      "%s: %s need %s, and this aiarun was built without it "
                      "(install %s and build again)",
                      path, l->what, l->lib, l->package);
}

void data_opts_init(struct data_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = DATA_CSV;
    o->header = DATA_HEADER_AUTO;
}

const char *data_format_name(int format)
{
    return format >= 0 && (size_t)format < NFORMATS ? formats[format].name
                                                    : NULL;
}

int data_format_lookup(const char *name)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(formats[i].name, name) == 0)
            return (int)i;
    return -1;
}

char data_format_choices[DATA_FORMAT_TEXT];
char data_format_help[DATA_FORMAT_TEXT];

/* Append text to buf (of DATA_FORMAT_TEXT bytes, *at used). */
static void add(char *buf, size_t *at, const char *text)
{
    if (*at < DATA_FORMAT_TEXT)
        *at += (size_t)snprintf(buf + *at, DATA_FORMAT_TEXT - *at, "%s", text);
}

void data_formats_init(void)
{
    size_t c = 0, h = 0;
    add(data_format_choices, &c, "auto");
    for (size_t i = 0; i < NFORMATS; i++) {
        add(data_format_choices, &c, "|");
        add(data_format_choices, &c, formats[i].name);
        add(data_format_help, &h,
            i == 0             ? ""
            : i + 1 < NFORMATS ? ", "
                               : " or ");
        add(data_format_help, &h, formats[i].doc);
    }
    add(data_format_help, &h, "; auto: from the extension (");
    for (size_t i = 0; i < NFORMATS; i++) {
        add(data_format_help, &h, i ? ", " : "");
        for (const char *e = formats[i].exts; *e; e++)
            add(data_format_help, &h, *e == '|' ? " " : (char[2]){*e, 0});
    }
    add(data_format_help, &h, ")");
}

int data_format_sparse(int format)
{
    return format >= 0 && (size_t)format < NFORMATS && formats[format].sparse;
}

/* Whether path ends in one of the '|'-separated endings of exts. */
static int ends_in(const char *path, const char *exts)
{
    size_t lp = strlen(path);
    while (*exts) {
        size_t lx = strcspn(exts, "|");
        if (lp >= lx && strncasecmp(path + lp - lx, exts, lx) == 0)
            return 1;
        exts += lx + (exts[lx] == '|');
    }
    return 0;
}

int data_format_guess(const char *path)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (ends_in(path, formats[i].exts))
            return (int)i;
    return -1;
}

static int check_opts(const struct data_opts *o, struct aia_error *err)
{
    if (!o->path || !*o->path)
        return aia_seterr(err, "no data file given");
    if (o->format < 0 || (size_t)o->format >= NFORMATS)
        return aia_seterr(err, "%s: unknown data format %d", o->path,
                          o->format);
    if (o->header < DATA_HEADER_AUTO || o->header > DATA_HEADER_YES)
        return aia_seterr(err, "%s: header must be -1 (auto), 0 or 1", o->path);
    char d = o->delimiter;
    if (d == '"' || d == '\n' || d == '\r')
        return aia_seterr(
            err, "%s: the delimiter cannot be a quote or a line end", o->path);
    if (o->target && (!formats[o->format].target_column || o->targets))
        return aia_seterr(err,
                          o->format == DATA_LIBSVM
                              ? "%s: a libsvm file's target is its label; no "
                                "target column can be chosen"
                              : "%s: the targets come from elsewhere (a "
                                "second file or dataset); no target column "
                                "can be chosen",
                          o->path);
    if (o->features > UINT32_MAX)
        return aia_seterr(err, "%s: %zu features is too many", o->path,
                          o->features);
    return 0;
}

/* One pass over the file with p set up; frees what the pass used. */
static int run(struct data_pass *p)
{
    const struct data_opts *o = p->o;
    int rc = formats[o->format].pass(p);
    if (p->names)
        for (size_t j = 0; j < p->ncells; j++)
            free(p->names[j]);
    free(p->names);
    free(p->cells);
    if (rc < 0)
        return -1;
    if (p->rows == 0)
        return aia_seterr(p->err, "%s: no data rows", o->path);
    if (o->format == DATA_LIBSVM) {
        p->cols = o->features ? o->features : p->maxcol;
        if (p->cols == 0)
            return aia_seterr(p->err, "%s: no features in the rows read",
                              o->path);
    }
    return 0;
}

int data_shape(const struct data_opts *o, double *rows, double *cols)
{
    struct aia_error err;
    if (check_opts(o, &err) < 0 || !formats[o->format].shape ||
        !data_format_built(o->format))
        return -1;
    struct data_pass p = {.o = o, .err = &err};
    return formats[o->format].shape(&p, rows, cols);
}

int data_scan(const struct data_opts *o, size_t *rows, size_t *cols,
              struct aia_error *err)
{
    if (check_opts(o, err) < 0)
        return -1;
    struct data_pass p = {.o = o, .check_all = 1, .err = err};
    if (run(&p) < 0)
        return -1;
    *rows = p.rows;
    *cols = p.cols;
    return 0;
}

int data_read(const struct data_opts *o, int (*keep)(size_t r, void *arg),
              void *arg, struct data_table *t, struct aia_error *err)
{
    memset(t, 0, sizeof *t);
    if (check_opts(o, err) < 0)
        return -1;
    struct data_build b = {.sparse = o->sparse || formats[o->format].sparse};
    struct data_pass p = {
        .o = o, .keep = keep, .arg = arg, .b = &b, .err = err};
    if (run(&p) < 0 || data_build_finish(&p, t) < 0) {
        data_build_free(&b);
        data_free(t);
        return -1;
    }
    return 0;
}

void data_free(struct data_table *t)
{
    if (!t)
        return;
    free(t->source);
    free(t->row_ids);
    free(t->y);
    free(t->x);
    free(t->row_start);
    free(t->col);
    free(t->val);
    memset(t, 0, sizeof *t);
}
