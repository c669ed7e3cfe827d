/* python.c - a problem written in Python (NumPy, PyTorch), run by an
 * embedded CPython on every rank that holds the problem.
 *
 *     problem: {plugin: python, class: lsq:LeastSquares, ridge: 0.1}
 *
 * imports module lsq (from the job file's folder, AIARUN_PYTHONPATH,
 * PYTHONPATH, then the installed and the source tree's aiarun package
 * folders), builds LeastSquares(ridge=0.1) (every key but `class` is a
 * constructor argument: AIA_PARAMS_OPEN) and calls its methods:
 *
 *     open(ctx) -> dim        ctx: aiarun.bridge.Context (rank, partition,
 *                             the rows of the job's data file as arrays)
 *     loss(x) -> float
 *     gradient(x, idx, g)     write the gradient into g, or return it
 *     metric(x) -> float      optional, named by the metric_name attribute
 *     optimum() -> (x, f)     optional (coordinator): the exact minimiser;
 *                             with a data file (the coordinator holds no
 *                             rows) asked only after combine:
 *     summary_len, summarize() -> sums, combine(total)
 *                             optional, all three or none: a C problem's
 *                             summaries (the workers' sums over their rows,
 *                             added up for the coordinator)
 *     smoothness() -> L       optional: L of this rank's gradient (step: auto)
 *     hvp(x, v) -> H v        optional: the Hessian of this rank's loss at x
 *                             times v (newton; the reference optimum)
 *     gram(b) -> A'A b        optional: the rows' Gram matrix applied to b,
 *                             an (n, c) array (subspace); the model is then
 *                             an n x block_cols block (attribute or method,
 *                             default 1), V = block_base + x when the class
 *                             has a block_base (n x block_cols values)
 *
 * The descriptor is const and has every optional function; each instance
 * tells the runtime which its class has (offers), since the simulator's
 * instances share the descriptor and one job's classes need not match
 * another's.
 *     rows                    optional attribute or method: rows held
 *                             (the data file's rows when there is one)
 *
 * x, g, idx and the data arrays are NumPy views of aiarun's own buffers
 * (memoryviews through numpy.frombuffer): nothing is copied on the
 * gradient path, and the views of x and g are made once per buffer.  A
 * view is valid during the call only.
 *
 * A Python exception becomes one line: what was called, the exception's
 * type and text, and the innermost traceback frame (file:line) of the
 * user's code (not of an installed package such as NumPy).
 */
#include <config.h>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

#include "python_embed.h"

static const struct aia_param params[] = {
    {"class", AIA_STRING, NULL,
     "the problem's class as module:Class; every other key is an argument "
     "of its constructor",
     NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct py {
    PyObject *obj;
    PyObject *loss, *gradient, *metric; /* bound methods (metric: NULL) */
    PyObject *vector, *put;             /* aiarun.bridge helpers */
    size_t n, rows;
    struct embed_views x, g, idx;
    const char *cls;
    uint32_t offers;      /* AIA_OFFER_*: what the class has */
    char metric_name[64]; /* with AIA_OFFER_METRIC */
    struct aia_block blk; /* with AIA_OFFER_BLOCK */
    double *base;         /* block_base, or NULL */
    size_t slen;          /* summary_len: 0 when the class gives none */
    const char *no_opt;   /* why optimum() cannot be asked, or NULL */
};

/* The cached view of p. */
static PyObject *cached(struct py *py, struct embed_views *v, const void *p,
                        size_t n, size_t item, const char *code, int w)
{
    return embed_view(v, py->vector, p, n, item, code, w);
}

static void python_close(void *state)
{
    struct py *py = state;
    if (!py)
        return;
    embed_views_free(&py->x);
    embed_views_free(&py->g);
    embed_views_free(&py->idx);
    Py_XDECREF(py->loss);
    Py_XDECREF(py->gradient);
    Py_XDECREF(py->metric);
    Py_XDECREF(py->vector);
    Py_XDECREF(py->put);
    Py_XDECREF(py->obj);
    embed_flush();
    free(py->base);
    free(py);
}

static int python_gram(void *state, const double *b, size_t c, double *out,
                       struct aia_error *err);

/* The class's block: block_cols (default 1) columns of dim / block_cols
 * rows, and its block_base when it has one.  0, or -1 with an exception
 * (or a ValueError of the shape's). */
static int take_block(struct py *py)
{
    size_t cols = 1;
    PyObject *c = embed_method(py->obj, "block_cols", 0);
    if ((c ? embed_size(c, &cols) : PyErr_Occurred() ? -1 : 0) < 0)
        return -1;
    if (cols == 0 || py->n % cols != 0) {
        PyErr_Format(PyExc_ValueError,
                     "block_cols %zu does not divide the model's %zu values",
                     cols, py->n);
        return -1;
    }
    PyObject *b = embed_method(py->obj, "block_base", 0);
    if (b && PyCallable_Check(b)) {
        PyObject *v = PyObject_CallNoArgs(b);
        Py_DECREF(b);
        b = v;
        if (!b)
            return -1;
    }
    if (b && b != Py_None) {
        PyObject *out = (py->base = malloc(py->n * sizeof *py->base))
                            ? embed_array(py->vector, py->base, py->n, 8,
                                          "d", 1)
                            : NULL;
        PyObject *done =
            out ? PyObject_CallFunction(py->put, "OOss", out, b,
                                        "block_base", "the model")
                : NULL;
        Py_XDECREF(out);
        Py_XDECREF(done);
        Py_DECREF(b);
        if (!done)
            return PyErr_Occurred() ? -1 : (PyErr_NoMemory(), -1);
    } else {
        Py_XDECREF(b);
    }
    py->blk = (struct aia_block){.size = sizeof py->blk,
                                 .n = py->n / cols,
                                 .cols = cols,
                                 .base = py->base,
                                 .gram = python_gram};
    py->offers |= AIA_OFFER_BLOCK;
    return 0;
}

/* The class's summaries (summary_len, summarize, combine: all three or
 * none, as a C problem's): their length, 0 without them. */
static int take_summary(struct py *py)
{
    int has[3] = {PyObject_HasAttrString(py->obj, "summary_len"),
                  PyObject_HasAttrString(py->obj, "summarize"),
                  PyObject_HasAttrString(py->obj, "combine")};
    if (!has[0] && !has[1] && !has[2])
        return 0;
    if (!has[0] || !has[1] || !has[2]) {
        PyErr_SetString(PyExc_AttributeError,
                        "summary_len, summarize and combine go together: "
                        "give all three or none");
        return -1;
    }
    return embed_size(PyObject_GetAttrString(py->obj, "summary_len"),
                      &py->slen);
}

/* What the class offers: a smoothness, hvp, a block, a metric and its
 * name (the metric_name attribute, "metric" by default; the runtime
 * checks it), and on the coordinator (where the whole problem is
 * judged) an optimum.  optimum() is offered where it can answer: the
 * coordinator holds the rows (no data file, or the simulator's), or the
 * workers' summaries reach it (combine).  Where it cannot and the class
 * has no hvp (with which stop.gap finds the optimum over the workers'
 * rows), the optimum is offered all the same, to refuse saying what the
 * class should add. */
static int take_offers(struct py *py, const struct aia_context *ctx)
{
    if (take_summary(py) < 0)
        return -1;
    if (PyObject_HasAttrString(py->obj, "smoothness"))
        py->offers |= AIA_OFFER_SMOOTHNESS;
    int hvp = PyObject_HasAttrString(py->obj, "hvp");
    if (hvp)
        py->offers |= AIA_OFFER_HVP;
    if (ctx->role == AIA_ROLE_COORDINATOR) {
        int opt = PyObject_HasAttrString(py->obj, "optimum");
        int rows = !ctx->data || ctx->data->rows > 0;
        if (!opt && !rows && !py->slen)
            py->no_opt = "the rows are the workers' and the class has no "
                         "optimum(): give it hvp(x, v) (the optimum is then "
                         "found over the workers' rows), or optimum() with "
                         "summary_len, summarize() and combine(total)";
        else if (!opt)
            py->no_opt = "the class has no optimum(): give it optimum() "
                         "or hvp(x, v) (the optimum is then found over the "
                         "workers' rows)";
        else if (!rows && !py->slen)
            py->no_opt = "the rows are the workers' and the class gives no "
                         "summary of them: give it hvp(x, v) (the optimum "
                         "is then found over the workers' rows), or "
                         "summary_len, summarize() and combine(total) for "
                         "optimum() to use";
        if (!py->no_opt || !hvp)
            py->offers |= AIA_OFFER_OPTIMUM;
    }
    if (PyObject_HasAttrString(py->obj, "gram") && take_block(py) < 0)
        return -1;
    if (!(py->metric = embed_method(py->obj, "metric", 0)))
        return PyErr_Occurred() ? -1 : 0;
    py->offers |= AIA_OFFER_METRIC;
    const char *name = "metric";
    PyObject *n = embed_method(py->obj, "metric_name", 0);
    if (n && PyUnicode_Check(n))
        name = PyUnicode_AsUTF8(n);
    snprintf(py->metric_name, sizeof py->metric_name, "%s",
             name ? name : "metric");
    Py_XDECREF(n);
    return PyErr_Occurred() ? -1 : 0;
}

static uint32_t python_offers(void *state, const char **metric_name)
{
    struct py *py = state;
    *metric_name = py->offers & AIA_OFFER_METRIC ? py->metric_name : NULL;
    return py->offers;
}

/* A call of what the class lacks (the runtime asks offers first). */
static int lacks(struct py *py, uint32_t what, const char *name,
                 struct aia_error *err)
{
    if (py->offers & what)
        return 0;
    return aia_seterr(err, "%s has no %s", py->cls, name);
}

static int python_open(const struct aia_context *ctx,
                       const struct aia_partition *part, void **state,
                       struct aia_error *err)
{
    if (embed_start(ctx, err) < 0)
        return -1;
    struct py *py = calloc(1, sizeof *py);
    if (!py)
        return aia_seterr(err, "out of memory");
    py->cls = aia_arg(ctx->args, "class")->s;
    char what[200];
    snprintf(what, sizeof what, "class '%s'", py->cls);
    PyObject *bridge = embed_bridge("problem", &py->vector, &py->put, err);
    if (!bridge)
        goto fail;
    PyObject *cls = embed_class(py->cls, err);
    if (!cls) {
        Py_DECREF(bridge);
        goto fail;
    }
    PyObject *kw = embed_kwargs(ctx->args), *none = PyTuple_New(0);
    py->obj = kw && none ? PyObject_Call(cls, none, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(none);
    Py_DECREF(cls);
    PyObject *c = py->obj ? embed_context(bridge, py->vector, ctx, part) : NULL;
    Py_DECREF(bridge);
    PyObject *dim = c ? PyObject_CallMethod(py->obj, "open", "O", c) : NULL;
    Py_XDECREF(c);
    if (!dim || embed_size(dim, &py->n) < 0) {
        embed_fail(err, what);
        goto fail;
    }
    PyObject *rows = embed_method(py->obj, "rows", 0);
    if (!rows && !PyErr_Occurred() && !ctx->data) {
        aia_seterr(err,
                   "%s: without a data file the class must say how "
                   "many rows this rank holds (a rows attribute or "
                   "method)",
                   what);
        goto fail;
    }
    if (rows ? embed_size(rows, &py->rows) < 0 : PyErr_Occurred() != NULL) {
        embed_fail(err, what);
        goto fail;
    }
    if (!rows)
        py->rows = ctx->data->rows;
    if (!(py->loss = embed_method(py->obj, "loss", 1)) ||
        !(py->gradient = embed_method(py->obj, "gradient", 1)) ||
        take_offers(py, ctx) < 0 || PyErr_Occurred()) {
        embed_fail(err, what);
        goto fail;
    }
    *state = py;
    return 0;
fail:
    python_close(py);
    return -1;
}

/* --check: the class can be imported (its module found and loaded). */
static int python_check(const struct aia_context *ctx, struct aia_error *err)
{
    if (embed_start(ctx, err) < 0)
        return -1;
    PyObject *cls = embed_class(aia_arg(ctx->args, "class")->s, err);
    Py_XDECREF(cls);
    return cls ? 0 : -1;
}

static size_t python_dim(void *state)
{
    return ((struct py *)state)->n;
}

static size_t python_rows(void *state)
{
    return ((struct py *)state)->rows;
}

/* A float from a method's result, or -1 with the exception. */
static int number(struct py *py, PyObject *r, const char *name, double *out,
                  struct aia_error *err)
{
    char what[200];
    snprintf(what, sizeof what, "%s.%s", py->cls, name);
    return embed_double(r, what, out, err);
}

static int python_loss(void *state, const double *x, double *f,
                       struct aia_error *err)
{
    struct py *py = state;
    PyObject *xa = cached(py, &py->x, x, py->n, 8, "d", 0);
    PyObject *r = xa ? PyObject_CallOneArg(py->loss, xa) : NULL;
    return number(py, r, "loss", f, err);
}

static int python_metric(void *state, const double *x, double *value,
                         struct aia_error *err)
{
    struct py *py = state;
    if (lacks(py, AIA_OFFER_METRIC, "metric", err) < 0)
        return -1;
    PyObject *xa = cached(py, &py->x, x, py->n, 8, "d", 0);
    PyObject *r = xa ? PyObject_CallOneArg(py->metric, xa) : NULL;
    return number(py, r, "metric", value, err);
}

/* smoothness() -> L: a Lipschitz constant of the gradient of this
 * rank's loss, for step: auto. */
static int python_smoothness(void *state, double *L, struct aia_error *err)
{
    struct py *py = state;
    if (lacks(py, AIA_OFFER_SMOOTHNESS, "smoothness", err) < 0)
        return -1;
    PyObject *r = PyObject_CallMethod(py->obj, "smoothness", NULL);
    return number(py, r, "smoothness", L, err);
}

/* The end of a call of method name (m, a new reference or NULL): 0 when
 * it went through (ok), else the pending exception as one line naming
 * the method, placed in the user's code, or at the method's definition
 * when what it returned was refused after it had returned. */
static int finish(struct py *py, int ok, const char *name, PyObject *m,
                  struct aia_error *err)
{
    int rc = 0;
    if (!ok) {
        char what[200];
        snprintf(what, sizeof what, "%s.%s", py->cls, name);
        rc = embed_fail_in(err, what, m);
    }
    Py_XDECREF(m);
    return rc;
}

/* optimum() -> (x, f): the exact minimiser and its loss, or None when
 * it cannot be had. */
static int python_optimum(void *state, double *x, double *f,
                          struct aia_error *err)
{
    struct py *py = state;
    if (lacks(py, AIA_OFFER_OPTIMUM, "optimum on this rank", err) < 0)
        return -1;
    if (py->no_opt)
        return aia_seterr(err, "class '%s': %s", py->cls, py->no_opt);
    PyObject *m = PyObject_GetAttrString(py->obj, "optimum");
    PyObject *r = m ? PyObject_CallNoArgs(m) : NULL;
    if (r == Py_None) {
        Py_DECREF(r);
        Py_DECREF(m);
        return aia_seterr(err, "%s.optimum gave none", py->cls);
    }
    PyObject *xo = NULL, *fo = NULL, *xa = NULL, *done = NULL;
    if (r && PyArg_ParseTuple(r, "OO", &xo, &fo) &&
        (xa = embed_array(py->vector, x, py->n, 8, "d", 1)))
        done = PyObject_CallFunction(py->put, "OOss", xa, xo, "optimum()",
                                     "a model");
    double v = done ? PyFloat_AsDouble(fo) : 0;
    Py_XDECREF(done);
    Py_XDECREF(xa);
    Py_XDECREF(r);
    if (finish(py, done && !PyErr_Occurred(), "optimum", m, err) < 0)
        return -1;
    *f = v;
    return 0;
}

/* The class's summary_len, 0 without summaries. */
static size_t python_summary_len(void *state)
{
    return ((struct py *)state)->slen;
}

/* summarize() -> the sums over this rank's rows (summary_len values),
 * copied into out. */
static int python_summarize(void *state, double *out, struct aia_error *err)
{
    struct py *py = state;
    PyObject *m = PyObject_GetAttrString(py->obj, "summarize");
    PyObject *oa = embed_array(py->vector, out, py->slen, 8, "d", 1);
    PyObject *r = m && oa ? PyObject_CallNoArgs(m) : NULL;
    PyObject *done = r ? PyObject_CallFunction(py->put, "OOss", oa, r,
                                               "summarize()", "a summary")
                       : NULL;
    Py_XDECREF(done);
    Py_XDECREF(r);
    Py_XDECREF(oa);
    return finish(py, done != NULL, "summarize", m, err);
}

/* combine(total): the element-wise sum of every worker's summary, a
 * view for the call, on the coordinator (optimum() then answers). */
static int python_combine(void *state, const double *sum, struct aia_error *err)
{
    struct py *py = state;
    PyObject *m = PyObject_GetAttrString(py->obj, "combine");
    PyObject *sa = embed_array(py->vector, sum, py->slen, 8, "d", 0);
    PyObject *r = m && sa ? PyObject_CallOneArg(m, sa) : NULL;
    Py_XDECREF(r);
    Py_XDECREF(sa);
    return finish(py, r != NULL, "combine", m, err);
}

static int python_gradient(void *state, const double *x, const size_t *idx,
                           size_t nidx, double *g, struct aia_error *err)
{
    struct py *py = state;
    PyObject *xa = cached(py, &py->x, x, py->n, 8, "d", 0);
    PyObject *ga = cached(py, &py->g, g, py->n, 8, "d", 1);
    PyObject *ia =
        idx ? cached(py, &py->idx, idx, nidx, sizeof *idx, "Q", 0) : Py_None;
    PyObject *r =
        xa && ga && ia
            ? PyObject_CallFunctionObjArgs(py->gradient, xa, ia, ga, NULL)
            : NULL;
    if (r && r != Py_None) {
        /* the gradient returned rather than written: copied into g */
        PyObject *done = PyObject_CallFunctionObjArgs(py->put, ga, r, NULL);
        Py_DECREF(r);
        r = done;
    }
    if (!r) {
        char what[200];
        snprintf(what, sizeof what, "%s.gradient", py->cls);
        return embed_fail_in(err, what, py->gradient);
    }
    Py_DECREF(r);
    return 0;
}

/* hvp(x, v) -> H(x) v, returned (copied into out as gradient's return
 * is).  x, v and out are views of aiarun's buffers, for the call only. */
static int python_hvp(void *state, const double *x, const double *v,
                      double *out, struct aia_error *err)
{
    struct py *py = state;
    if (lacks(py, AIA_OFFER_HVP, "hvp", err) < 0)
        return -1;
    PyObject *m = PyObject_GetAttrString(py->obj, "hvp");
    PyObject *xa = cached(py, &py->x, x, py->n, 8, "d", 0);
    PyObject *va = embed_array(py->vector, v, py->n, 8, "d", 0);
    PyObject *oa = embed_array(py->vector, out, py->n, 8, "d", 1);
    PyObject *r = m && xa && va && oa
                      ? PyObject_CallFunctionObjArgs(m, xa, va, NULL)
                      : NULL;
    PyObject *done =
        r ? PyObject_CallFunction(py->put, "OOss", oa, r, "hvp()", "a model")
          : NULL;
    Py_XDECREF(done);
    Py_XDECREF(r);
    Py_XDECREF(va);
    Py_XDECREF(oa);
    return finish(py, done != NULL, "hvp", m, err);
}

/* gram(b) -> A'A b, b an (n, c) view of aiarun's buffer, the result
 * copied into out. */
static int python_gram(void *state, const double *b, size_t c, double *out,
                       struct aia_error *err)
{
    struct py *py = state;
    if (lacks(py, AIA_OFFER_BLOCK, "gram", err) < 0)
        return -1;
    size_t n = py->blk.n;
    PyObject *m = PyObject_GetAttrString(py->obj, "gram");
    PyObject *flat = embed_array(py->vector, b, n * c, 8, "d", 0);
    PyObject *ba = flat ? PyObject_CallMethod(flat, "reshape", "nn",
                                              (Py_ssize_t)n, (Py_ssize_t)c)
                        : NULL;
    PyObject *oa = embed_array(py->vector, out, n * c, 8, "d", 1);
    PyObject *r = m && ba && oa ? PyObject_CallOneArg(m, ba) : NULL;
    PyObject *done =
        r ? PyObject_CallFunction(py->put, "OOss", oa, r, "gram()", "a block")
          : NULL;
    Py_XDECREF(done);
    Py_XDECREF(r);
    Py_XDECREF(ba);
    Py_XDECREF(flat);
    Py_XDECREF(oa);
    return finish(py, done != NULL, "gram", m, err);
}

static const struct aia_block *python_block(void *state)
{
    struct py *py = state;
    return py->offers & AIA_OFFER_BLOCK ? &py->blk : NULL;
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h = {AIA_ABI_VERSION, (uint32_t)sizeof(struct aia_problem_plugin),
          AIA_KIND_PROBLEM, AIA_PARAMS_OPEN, "python", "1.0",
          "a problem written in Python: a class with open, loss, gradient "
          "(NumPy views of aiarun's buffers)",
          params},
    .flags = AIA_PROBLEM_DATA,
    .open = python_open,
    .close = python_close,
    .dim = python_dim,
    .rows = python_rows,
    .loss = python_loss,
    .gradient = python_gradient,
    .optimum = python_optimum,
    .metric = python_metric,
    .check = python_check,
    .smoothness = python_smoothness,
    .offers = python_offers,
    .hvp = python_hvp,
    .block = python_block,
    .summary_len = python_summary_len,
    .summarize = python_summarize,
    .combine = python_combine,
};
