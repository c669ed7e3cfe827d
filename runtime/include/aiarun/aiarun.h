/* aiarun.h - the plugin ABI of aiarun.
 *
 * A plugin is a shared object that exports one const descriptor with a
 * fixed symbol name per kind:
 *
 *     const struct aia_algorithm_plugin aia_algorithm_plugin = { ... };
 *     const struct aia_problem_plugin   aia_problem_plugin   = { ... };
 *     const struct aia_wait_plugin      aia_wait_plugin      = { ... };
 *
 * Every descriptor starts with struct aia_plugin_header, which the loader
 * checks (ABI number, descriptor size, kind, name) before it touches
 * anything else.  Plugins never call MPI and link against nothing but libc
 * and libm: the runtime owns communication, hands plugins their buffers and
 * offers its services through struct aia_host.
 *
 * Build a plugin with:
 *     cc -shared -fPIC $(pkg-config --cflags aiarun) my.c -o my.so
 *
 * Conventions: functions that act return 0 on success and -1 on failure,
 * after filling the struct aia_error they were given (aia_seterr does
 * both in one line).  Memory a plugin allocates is freed by the plugin.
 */
#ifndef AIARUN_AIARUN_H
#define AIARUN_AIARUN_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change to the structs below: a member moved,
 * removed or retyped, a reserved slot's meaning changed.  The loader
 * refuses a plugin built for another number (rebuild it against this
 * header; aiarun-plugin(7) says what changed).  Growth that uses a
 * reserved slot or the end of struct aia_host keeps the number; such a
 * member is read only where AIA_HAS says the struct has it.
 * 2: aia_context.async moved to the end, aia_problem_plugin.offers, the
 * host's policies (partition_owner, partition_first, auto_step,
 * age_factor); aia_partition_owner and aia_table_age_factor take the
 * host.  Later, in reserved room: aia_problem_plugin.hvp (its first
 * reserved slot, AIA_OFFER_HVP) and AIA_ALG_HVP; aia_problem_plugin.block
 * (its last reserved slot, struct aia_block, AIA_OFFER_BLOCK),
 * AIA_ALG_BLOCK and AIA_PROBLEM_COMBINE_ALL; AIA_ALG_SEPARABLE; at the
 * end of struct aia_host, note. */
#define AIA_ABI_VERSION 2

/* Whether *p, a struct of type type that starts with its own size (struct
 * aia_context, aia_host, aia_problem_facts), has member field: read a
 * member added after the struct's first version only when this holds. */
#define AIA_HAS(type, p, field)                                             \
    ((p)->size >= offsetof(type, field) + sizeof(((type *)0)->field))

enum aia_kind {
    AIA_KIND_ALGORITHM = 1,
    AIA_KIND_PROBLEM = 2,
    AIA_KIND_WAIT = 3,
};

/* ------------------------------------------------------------------ */
/* Errors                                                              */

#define AIA_ERROR_LEN 320

/* 2^53: a double holds every integer below it exactly.  Counts and steps
 * saved in a checkpoint as doubles are checked against it when loaded. */
#define AIA_EXACT_BELOW 9007199254740992.0

struct aia_error {
    char text[AIA_ERROR_LEN];
};

/* Fill err with a printf-style message; always returns -1 so that a
 * failure path is one line: return aia_seterr(err, "bad %s", what); */
static inline int aia_seterr(struct aia_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int aia_seterr(struct aia_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof err->text, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Parameters                                                          */

enum aia_type {
    AIA_INT = 1,     /* int64_t, in aia_value.i */
    AIA_DOUBLE = 2,  /* double, in aia_value.d (an integer is accepted) */
    AIA_BOOL = 3,    /* true/false, in aia_value.i (0 or 1) */
    AIA_STRING = 4,  /* text, in aia_value.s */
    AIA_ENUM = 5,    /* one of choices, in aia_value.s; its index in .i */
    AIA_INTS = 6,    /* list of integers, aia_value.ints[0 .. n-1] */
    AIA_DOUBLES = 7, /* list of numbers, aia_value.doubles[0 .. n-1] */
};

/* One accepted parameter.  A table of them ends with an entry whose name
 * is NULL.  The job file is validated against it: unknown keys, wrong
 * types and values outside [min, max] are errors naming file, line, key. */
struct aia_param {
    const char *name;
    enum aia_type type;
    const char *def;     /* default, as it would be written in YAML;
                            NULL: the parameter is required */
    const char *help;    /* one line */
    const char *choices; /* AIA_ENUM: "a|b|c"; AIA_DOUBLE: words also
                            accepted instead of a number ("auto"), given
                            as d = NaN, s = the word, i = its index */
    double min, max;     /* numbers and list elements; both 0: no bound */
};

/* The value of one parameter, as handed to create/open: an array in the
 * order of the plugin's table, ended by an entry whose name is NULL. */
struct aia_value {
    const char *name;
    enum aia_type type;
    int given; /* 1 when the job file set it, 0 when the default is used */
    int64_t i;
    double d;
    const char *s;
    size_t n; /* list length */
    const int64_t *ints;
    const double *doubles;
};

/* The value named name, or NULL. */
static inline const struct aia_value *aia_arg(const struct aia_value *args,
                                              const char *name)
{
    for (; args && args->name; args++)
        if (strcmp(args->name, name) == 0)
            return args;
    return NULL;
}

/* The value of the AIA_ENUM parameter name as the plugin's own number:
 * the index k of its choice in names[0 .. count-1], which a plugin writes
 * with designated initializers ({[MODE_FAST] = "fast", ...}), so that
 * the order of the choices in the parameter table does not matter.  -1
 * when name is absent or its value is not among names. */
static inline int aia_arg_enum(const struct aia_value *args, const char *name,
                               const char *const *names, size_t count)
{
    const struct aia_value *v = aia_arg(args, name);
    for (size_t k = 0; v && v->s && k < count; k++)
        if (names[k] && strcmp(names[k], v->s) == 0)
            return (int)k;
    return -1;
}

/* ------------------------------------------------------------------ */
/* The common descriptor header                                        */

struct aia_plugin_header {
    uint32_t abi;  /* AIA_ABI_VERSION */
    uint32_t size; /* sizeof the whole descriptor */
    uint32_t kind; /* enum aia_kind */
    uint32_t pflags; /* AIA_PARAMS_*; 0 for a plugin that takes its table */
    const char *name;    /* must match the file name without ".so" */
    const char *version; /* the plugin's own version */
    const char *summary; /* one line */
    const struct aia_param *params; /* NULL: takes no parameters */
};

/* pflags: keys of the plugin's section beyond its table (and the
 * runtime's) are accepted and appended to its aia_value array, after the
 * table's entries: a plain scalar as AIA_INT, AIA_DOUBLE, AIA_BOOL or
 * AIA_STRING (whichever it spells), a quoted one as AIA_STRING, a list of
 * numbers as AIA_INTS or AIA_DOUBLES.  For bridges whose parameters are
 * another language's (python). */
#define AIA_PARAMS_OPEN 0x1u

#define AIA_HEADER(kind_, type_, name_, version_, summary_, params_)        \
    {                                                                       \
        AIA_ABI_VERSION, (uint32_t)sizeof(type_), (kind_), 0, (name_),      \
            (version_), (summary_), (params_)                               \
    }

/* ------------------------------------------------------------------ */
/* Services the runtime offers plugins                                 */

enum aia_log_level { AIA_LOG_ERROR = 0, AIA_LOG_WARN = 1, AIA_LOG_INFO = 2,
                     AIA_LOG_DEBUG = 3 };

struct aia_context;
struct aia_partition;

/* Only ever grows: check size (AIA_HAS) before using a member added
 * later.  Rules that the runtime and plugins must agree on (which rows a
 * part holds) and policies a fix should reach plugins already built (the
 * step an algorithm derives, and the words that explain it) are the
 * runtime's, called through here: the inline functions below only pass
 * the call on. */
struct aia_host {
    uint32_t size;
    uint32_t abi;
    /* Write one diagnostic line on stderr, prefixed aiarun[rank]. */
    void (*log)(const struct aia_host *host, int level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    /* Monotonic clock, in seconds. */
    double (*now)(const struct aia_host *host);
    void *host_data; /* the runtime's, not the plugin's */
    /* Tell the runtime the step the algorithm takes and why (one line,
     * "1/L with L = 3.2 from the problem"), for the run report and the
     * divergence message.  Call it through aia_note_step. */
    void (*note_step)(const struct aia_host *host, double step,
                      const char *why);
    /* aia_partition_owner, aia_partition_first. */
    int (*partition_owner)(const struct aia_host *host,
                           const struct aia_partition *part, size_t m,
                           size_t r);
    size_t (*partition_first)(const struct aia_host *host,
                              const struct aia_partition *part, size_t m,
                              int p);
    /* aia_auto_step_of. */
    int (*auto_step)(const struct aia_host *host,
                     const struct aia_context *ctx, const struct aia_value *v,
                     double scale, const char *rule, double *step,
                     struct aia_error *err);
    /* aia_table_age_factor (alg.h): from the rows filled, their sum of
     * rows times age (steps) and the rows at most one step old. */
    double (*age_factor)(const struct aia_host *host, double rows,
                         double age_rows, double recent_rows, double most);
    /* Tell the runtime one line for the run report, under key (a word of
     * at most 10 letters, "balance"); a later note under the same key
     * replaces it.  Call it through aia_note. */
    void (*note)(const struct aia_host *host, const char *key,
                 const char *text);
};

/* host->note_step when the runtime offers it (a stub host or an older
 * runtime may not). */
static inline void aia_note_step(const struct aia_host *host, double step,
                                 const char *why)
{
    if (host && AIA_HAS(struct aia_host, host, note_step) && host->note_step)
        host->note_step(host, step, why);
}

/* host->note when the runtime offers it. */
static inline void aia_note(const struct aia_host *host, const char *key,
                            const char *text)
{
    if (host && AIA_HAS(struct aia_host, host, note) && host->note)
        host->note(host, key, text);
}

/* ------------------------------------------------------------------ */
/* Context given to every create/open                                  */

enum aia_role {
    AIA_ROLE_COORDINATOR = 1,
    AIA_ROLE_WORKER = 2,
};

struct aia_problem_plugin;

/* Rows of a data file, read by the runtime (problem.data in the job) and
 * handed to the problem instead of data it would generate.  A worker holds
 * its own rows only; the coordinator (AIA_PART_ALL) holds none (rows 0,
 * cols and total_rows set): the workers compute the loss and the metric on
 * their rows, and the coordinator's view of a data file is built from the
 * pool's summaries (see combine). */
struct aia_dataset {
    size_t rows;       /* rows held by this rank */
    size_t cols;       /* features per row, the target not counted */
    size_t total_rows; /* rows in the whole file */
    const size_t *row_ids; /* each held row's 0-based number in the file */
    const double *y;       /* the target of each held row */
    /* Dense storage: rows x cols, row-major.  NULL when sparse. */
    const double *x;
    /* Sparse storage (CSR): row i's entries are k in
     * [row_start[i], row_start[i+1]), feature col[k] with value val[k]. */
    const size_t *row_start;
    const uint32_t *col;
    const double *val;
    const char *source; /* the file, for messages */
    void *reserved[4];
};

/* What the runtime knows of the whole problem before the run, combined
 * from the workers' parts (ctx->facts).  A field that is 0 is unknown. */
struct aia_problem_facts {
    uint32_t size; /* sizeof(struct aia_problem_facts) of the runtime */
    uint32_t reserved0;
    /* L: a Lipschitz constant of the gradient of the mean loss over all
     * rows, the row-weighted mean of the workers' own (problem smoothness
     * function); 0 when a worker's problem cannot tell, or when it was
     * not computed: no algorithm parameter is "auto", and the coordinator
     * holds rows (it then finds L itself if a divergence message needs
     * it) or stop.diverge is 0. */
    double smoothness;
    size_t rows;      /* rows over the whole pool */
    double smallest;  /* the least of the workers' L, 0: unknown */
    double largest;   /* the largest of the workers' L, 0: unknown */
    double reserved[4];
};

struct aia_context {
    uint32_t size; /* sizeof(struct aia_context) of the runtime */
    uint32_t role; /* enum aia_role */
    int rank;      /* this process's rank; the coordinator is 0 */
    int worker;    /* pool index 0 .. nworkers-1; -1 on the coordinator */
    int nworkers;
    int reserved0; /* 0 */
    uint64_t seed;                /* the job's seed */
    const struct aia_value *args; /* this plugin's parameters */
    const char *jobdir;           /* folder of the job file, for data paths */
    const struct aia_host *host;
    /* For algorithms: the problem this rank holds (opened already). */
    const struct aia_problem_plugin *problem;
    void *problem_state;
    /* For problems: the rows read from the job's data file, or NULL when
     * the job names none (the problem generates its data). */
    const struct aia_dataset *data;
    /* The rank of each worker of the pool, in pool order (nworkers). */
    const int *pool_ranks;
    /* For algorithms (every rank): what is known of the whole problem, or
     * NULL from a runtime that predates it. */
    const struct aia_problem_facts *facts;
    /* 1 when the pool runs in async mode (pool.mode: async: every answer
     * is an iteration and its sender is sent the next query at once); 0
     * in rounds mode.  Read it where AIA_HAS(struct aia_context, ctx,
     * async). */
    int async;
    int reserved1;
    void *reserved[2];
};

/* The step of an algorithm whose parameter v (aia_auto_step: args[which];
 * aia_auto_step_named: the one named name) is a number or "auto": an
 * explicit number wins; auto is scale / L, L the problem's smoothness
 * (ctx->facts), rule saying where scale / L comes from.  The runtime
 * notes the step and why for the report (coordinator).  0, or -1 when
 * auto is asked and L is unknown, or the host offers no steps. */
static inline int aia_auto_step_of(const struct aia_context *ctx,
                                   const struct aia_value *v, double scale,
                                   const char *rule, double *step,
                                   struct aia_error *err)
{
    const struct aia_host *h = ctx->host;
    if (!h || !AIA_HAS(struct aia_host, h, auto_step) || !h->auto_step)
        return aia_seterr(err, "%s: this host derives no steps", v->name);
    return h->auto_step(h, ctx, v, scale, rule, step, err);
}

static inline int aia_auto_step(const struct aia_context *ctx, int which,
                                double scale, const char *rule,
                                double *step, struct aia_error *err)
{
    return aia_auto_step_of(ctx, &ctx->args[which], scale, rule, step, err);
}

/* The same for the parameter named name. */
static inline int aia_auto_step_named(const struct aia_context *ctx,
                                      const char *name, double scale,
                                      const char *rule, double *step,
                                      struct aia_error *err)
{
    const struct aia_value *v = aia_arg(ctx->args, name);
    if (!v)
        return aia_seterr(err, "no parameter %s", name);
    return aia_auto_step_of(ctx, v, scale, rule, step, err);
}

/* ------------------------------------------------------------------ */
/* Problems                                                            */

/* Which rows of the data this rank holds. */
enum aia_scheme {
    AIA_PART_BLOCK = 0,  /* contiguous rows, sizes in proportion to weights */
    AIA_PART_CYCLIC = 1, /* row r goes to part r mod count (weights: see
                            aia_partition_owner) */
};

#define AIA_PART_ALL (-1)

struct aia_partition {
    int index; /* 0 .. count-1, or AIA_PART_ALL: every row (coordinator) */
    int count;
    int scheme;             /* enum aia_scheme */
    int reserved0;
    const double *weights;  /* count entries, or NULL for equal shares */
};

/* First row of part p under the block scheme: rows [first(p), first(p+1))
 * belong to part p.  Boundaries follow the cumulative weights, so the
 * parts cover 0 .. m-1 exactly once whatever the weights.  The rule is
 * the runtime's (host->partition_first), so that a plugin and the runtime
 * that delivers its rows always agree; m when the host has none. */
static inline size_t aia_partition_first(const struct aia_host *host,
                                         const struct aia_partition *part,
                                         size_t m, int p)
{
    if (!host || !AIA_HAS(struct aia_host, host, partition_first) ||
        !host->partition_first)
        return m;
    return host->partition_first(host, part, m, p);
}

/* The part that owns row r of m.  Cyclic without weights deals row r to
 * part r mod count.  Cyclic with weights places row r at the point
 * frac(r * golden ratio) of [0, 1), which is equidistributed, and gives it
 * to the part whose weighted share of [0, 1) holds that point: each part
 * gets its share of the rows, spread over the whole file.  The rule is the
 * runtime's (host->partition_owner); -1 (no part) when the host has
 * none. */
static inline int aia_partition_owner(const struct aia_host *host,
                                      const struct aia_partition *part,
                                      size_t m, size_t r)
{
    if (!host || !AIA_HAS(struct aia_host, host, partition_owner) ||
        !host->partition_owner)
        return -1;
    return host->partition_owner(host, part, m, r);
}

/* The problem accepts rows from a data file (ctx->data). */
#define AIA_PROBLEM_DATA 0x1u
/* combine is called on the workers too, with the same sum as the
 * coordinator's, so that a figure a worker computes over its rows (pca's
 * explained variance) can be taken relative to the whole data's. */
#define AIA_PROBLEM_COMBINE_ALL 0x2u

/* What one open instance of a problem offers (its offers function). */
#define AIA_OFFER_OPTIMUM 0x1u    /* optimum */
#define AIA_OFFER_METRIC 0x2u     /* metric, under the name given */
#define AIA_OFFER_SMOOTHNESS 0x4u /* smoothness */
#define AIA_OFFER_HVP 0x8u        /* hvp */
#define AIA_OFFER_BLOCK 0x10u     /* block */

/* What a problem whose model is a block of columns offers through its
 * block function: the shape of the block, how the model stands for it,
 * and the rows' Gram matrix applied to any block, which block (subspace)
 * methods ask of the workers.  Only grows: read a member added later
 * where AIA_HAS(struct aia_block, b, member) holds. */
struct aia_block {
    uint32_t size; /* sizeof(struct aia_block) of the plugin */
    uint32_t reserved0;
    size_t n;    /* the block's rows: the rows' features */
    size_t cols; /* the model's columns: dim is n * cols */
    /* The model x stands for the n x cols block B = base + x (row-major);
     * base NULL: B = x.  Valid while the instance is open. */
    const double *base;
    /* out = A'A b, A the rows this rank holds (one a row each: the sum
     * over them of a (a'b), not a mean), b any n x c block (row-major,
     * c >= 1), out n x c.  0 or -1. */
    int (*gram)(void *state, const double *b, size_t c, double *out,
                struct aia_error *err);
    void *reserved[4];
};

/* The descriptor is the plugin's type: const, the same for every instance
 * and never written after load.  What differs between instances (a
 * bridge's classes, one with a metric and one without) is told by the
 * instance, through offers. */

struct aia_problem_plugin {
    struct aia_plugin_header h;
    uint32_t flags; /* AIA_PROBLEM_* */
    uint32_t reserved0;
    /* Open this rank's part of the problem (part->index == AIA_PART_ALL on
     * the coordinator, which uses it for the loss and the optimum of
     * generated data and may build what it needs lazily; with a data file
     * it holds no rows).  Sets *state; returns 0 or -1. */
    int (*open)(const struct aia_context *ctx,
                const struct aia_partition *part, void **state,
                struct aia_error *err);
    void (*close)(void *state);
    /* Length of the model vector x. */
    size_t (*dim)(void *state);
    /* Rows this rank holds (all rows for AIA_PART_ALL). */
    size_t (*rows)(void *state);
    /* Loss at x, the mean over this rank's rows.  0 or -1. */
    int (*loss)(void *state, const double *x, double *f,
                struct aia_error *err);
    /* Gradient of the loss at x over the local rows idx[0 .. nidx-1] (the
     * mean over them), or over every local row when idx is NULL.  g has
     * dim entries.  0 or -1. */
    int (*gradient)(void *state, const double *x, const size_t *idx,
                    size_t nidx, double *g, struct aia_error *err);
    /* Optional: the exact minimiser and its loss.  0, or -1 when it
     * cannot be had (err says why). */
    int (*optimum)(void *state, double *x, double *f, struct aia_error *err);
    /* Optional: a second figure of merit at x over this rank's rows,
     * reported beside the loss under metric_name (a classifier's
     * "accuracy", say).  Both or neither, unless offers names the metric.
     * 0 or -1. */
    int (*metric)(void *state, const double *x, double *value,
                  struct aia_error *err);
    const char *metric_name;
    /* Optional: validate ctx->args without opening anything (`aiarun
     * --check`; ctx has no data, role coordinator).  0 or -1. */
    int (*check)(const struct aia_context *ctx, struct aia_error *err);
    /* Optional: a Lipschitz constant *L of the gradient of this rank's
     * loss (the mean over its rows), so that methods can take a step from
     * it (step: auto).  0 or -1 (err says why). */
    int (*smoothness)(void *state, double *L, struct aia_error *err);
    /* Optional, all three or none: additive statistics of a data file's
     * rows, so that the coordinator, which holds none, can give the
     * optimum.  summary_len: doubles of a summary (0: none for this
     * shape).  summarize (workers): the sums over this rank's rows into
     * out.  combine (coordinator; the workers too with
     * AIA_PROBLEM_COMBINE_ALL): the element-wise sum of every worker's
     * summary.  0 or -1. */
    size_t (*summary_len)(void *state);
    int (*summarize)(void *state, double *out, struct aia_error *err);
    int (*combine)(void *state, const double *sum, struct aia_error *err);
    /* Optional: which of optimum, metric, smoothness, hvp and block this
     * instance offers (AIA_OFFER_* bits; the descriptor must have the
     * functions), and with AIA_OFFER_METRIC the metric's name in *metric_name (at most
     * 32 letters, digits or '_', valid while the instance is open;
     * metric_name is then not needed).  The runtime calls no function
     * that an instance does not offer.  NULL: every instance offers every
     * one the descriptor has, the metric under metric_name. */
    uint32_t (*offers)(void *state, const char **metric_name);
    /* Optional (ABI 2, once a reserved slot, so a plugin built before it
     * has NULL here): out = H(x) v, the Hessian of this rank's loss (the
     * mean over its rows, the penalty included) at x times v; dim
     * entries each.  Second-order methods (newton, lbfgs's reference)
     * and the reference optimum of a problem whose rows are the
     * workers' are built on it.  0 or -1. */
    int (*hvp)(void *state, const double *x, const double *v, double *out,
               struct aia_error *err);
    /* Optional (ABI 2, once the last reserved slot): the model as a block
     * and the rows' Gram matrix applied to a block (struct aia_block, the
     * plugin's, valid while the instance is open), for block (subspace)
     * methods; NULL when this instance has none. */
    const struct aia_block *(*block)(void *state);
};

/* ------------------------------------------------------------------ */
/* Algorithms                                                          */

/* Lengths of the messages, set by create. */
struct aia_shape {
    size_t query_len;  /* doubles the coordinator sends */
    size_t answer_len; /* doubles a worker sends back */
};

/* What the coordinator knows about an answer it hands to absorb. */
struct aia_answer_info {
    int rank;            /* the worker's rank */
    int worker;          /* its pool index */
    uint64_t round;      /* the current round */
    uint64_t sent_round; /* round whose query produced this answer */
    uint64_t staleness;  /* round - sent_round */
    size_t rows;         /* rows that worker holds */
    size_t total_rows;   /* rows over the whole pool */
    double compute_s;    /* the worker's compute time for it */
    void *reserved[4];
};

/* What a worker knows when it computes an answer. */
struct aia_step {
    uint64_t round;   /* round of the query */
    uint64_t answers; /* answers this worker produced before this one */
    void *reserved[4];
};

/* The algorithm's answers may be combined before they reach absorb: the
 * runtime may replace the answers of several workers to one query by
 * their mean weighted by the workers' rows, absorbed as one answer whose
 * info->rows is the sum of theirs (tree aggregation, pool.topology: tree).
 * Right for an algorithm whose effect of a round's answers depends only on
 * that weighted mean: gradients of row means (gd), models averaged by rows
 * (average). */
#define AIA_ALG_ASSOCIATIVE 0x1u

/* The algorithm's answers are increments whose sum over time is what
 * counts (gradients: sgd, gd): part of an answer may be held back and
 * sent with a later one.  Top-k compression with error feedback
 * (pool.codec.answer: topk) is allowed only for such algorithms; for one
 * whose answers are states (average's models) a held-back part would be
 * a wrong state, not a late one. */
#define AIA_ALG_ADDITIVE 0x2u

/* The algorithm asks the workers for Hessian-vector products (the
 * problem's hvp, newton.h's AIA_REQ_HVP requests): a job that pairs it
 * with a problem whose descriptor has no hvp is refused before the run
 * (`aiarun --check` included), and one whose instance does not offer it
 * (AIA_OFFER_HVP) by the algorithm's create. */
#define AIA_ALG_HVP 0x4u

/* The algorithm's state and update are separable by slices of the
 * model: run with dim the length of a contiguous slice [lo, hi) of the
 * model, it does to that slice exactly what the whole-model instance does
 * to the same elements, in the same order.  Its state is per element
 * (iterate, tables of answers), its query is the slice followed by a tail
 * that does not depend on the slice (a version), its answer the slice of
 * the worker's answer followed by the same tail as the whole answer's,
 * and its step depends on nothing but the problem's facts (L) and the
 * answers' metadata (worker, rounds, rows, staleness), which every slice
 * sees alike.  On a shard rank (pool.shards) the problem it is given has
 * dim the slice's length and no rows, and is asked for nothing else.
 * Only such algorithms run with pool.shards above 1. */
#define AIA_ALG_SEPARABLE 0x8u
/* The algorithm asks the workers for the rows' Gram matrix applied to a
 * block (the problem's block): a job that pairs it with a problem whose
 * descriptor has no block is refused before the run (`aiarun --check`
 * included), and one whose instance does not offer it by the algorithm's
 * create. */
#define AIA_ALG_BLOCK 0x10u

struct aia_algorithm_plugin {
    struct aia_plugin_header h;
    uint32_t flags;
    uint32_t reserved0;
    /* Create the state for ctx->role and set the message lengths. */
    int (*create)(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err);
    void (*destroy)(void *state);
    /* Coordinator: write the first query. */
    int (*init)(void *state, double *query, struct aia_error *err);
    /* Worker: compute the answer to query. */
    int (*worker)(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err);
    /* Coordinator: take one answer into account.  Every answer that
     * arrives is given here exactly once, fresh or stale. */
    int (*absorb)(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err);
    /* Coordinator: write the next query (end of a round). */
    int (*query)(void *state, double *query, struct aia_error *err);
    /* Optional: write the model whose loss is reported (dim doubles).
     * NULL: the query is the model (query_len must equal dim). */
    int (*iterate)(void *state, double *x, struct aia_error *err);
    /* Optional, for checkpoints: the bytes of the coordinator's state. */
    size_t (*state_size)(void *state);
    int (*save)(void *state, void *buf, struct aia_error *err);
    int (*load)(void *state, const void *buf, size_t len,
                struct aia_error *err);
    void (*reserved[8])(void);
};

/* ------------------------------------------------------------------ */
/* Wait conditions                                                     */

/* A read-only view of the pool, given to a wait condition.  Arrays have
 * nworkers entries, indexed by pool index. */
struct aia_pool_view {
    int nworkers;
    int fresh;   /* answers from the current round received this round */
    int arrived; /* answers received this round, fresh or stale */
    int live;    /* workers not declared dead */
    uint64_t round;              /* the current round (first is 1) */
    const int *ranks;            /* MPI rank of each worker */
    const uint64_t *repochs;     /* round of each worker's latest answer,
                                    0 before its first */
    const uint64_t *sent;        /* round of the query each worker holds */
    const unsigned char *busy;   /* 1: computing a query */
    const unsigned char *alive;  /* 0: declared dead */
    const unsigned char *fresh_now; /* 1: answered this round's query */
    const double *latency;       /* recent round-trip estimate, seconds */
    double elapsed;              /* seconds since the round began */
    void *reserved[6];
};

struct aia_wait_plugin {
    struct aia_plugin_header h;
    uint32_t flags;
    uint32_t reserved0;
    int (*create)(const struct aia_context *ctx, void **state,
                  struct aia_error *err);
    void (*destroy)(void *state);
    /* 1: the coordinator may end the round; 0: keep waiting. */
    int (*ready)(void *state, const struct aia_pool_view *view);
    /* Optional: seconds from the round's start after which ready() may
     * turn true with no new answer (a timeout); negative: never. */
    double (*deadline)(void *state, const struct aia_pool_view *view);
    void (*reserved[8])(void);
};

/* ------------------------------------------------------------------ */
/* Random numbers: xoshiro256** seeded by splitmix64, so that a (seed,
 * stream) pair gives the same numbers on every rank and every build. */

struct aia_rng {
    uint64_t s[4];
};

static inline uint64_t aia_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void aia_rng_seed(struct aia_rng *g, uint64_t seed,
                                uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);
    for (int i = 0; i < 4; i++)
        g->s[i] = aia_splitmix64(&x);
}

static inline uint64_t aia_rng_u64(struct aia_rng *g)
{
    uint64_t *s = g->s;
    uint64_t r = s[1] * 5;
    r = ((r << 7) | (r >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return r;
}

/* Uniform in [0, 1). */
static inline double aia_rng_uniform(struct aia_rng *g)
{
    return (double)(aia_rng_u64(g) >> 11) * (1.0 / 9007199254740992.0);
}

/* The 128-bit product a * b: returns its high 64 bits and stores its
 * low 64 bits in *lo (portable C: four 32x32->64 products). */
static inline uint64_t aia_mul64(uint64_t a, uint64_t b, uint64_t *lo)
{
    uint64_t al = a & 0xffffffffu, ah = a >> 32;
    uint64_t bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    *lo = (mid << 32) | (ll & 0xffffffffu);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* Uniform integer in [0, n), n > 0 (Lemire's method, unbiased). */
static inline uint64_t aia_rng_below(struct aia_rng *g, uint64_t n)
{
    uint64_t l, h = aia_mul64(aia_rng_u64(g), n, &l);
    if (l < n) {
        uint64_t t = (0 - n) % n;
        while (l < t)
            h = aia_mul64(aia_rng_u64(g), n, &l);
    }
    return h;
}

/* Standard normal (Marsaglia's polar method). */
static inline double aia_rng_normal(struct aia_rng *g)
{
    double u, v, s;
    do {
        u = 2.0 * aia_rng_uniform(g) - 1.0;
        v = 2.0 * aia_rng_uniform(g) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    return u * sqrt(-2.0 * log(s) / s);
}

#ifdef __cplusplus
}
#endif

#endif /* AIARUN_AIARUN_H */
