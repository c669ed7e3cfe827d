/* python_algctx.c - the context a Python algorithm class is given
 * (create(ctx)): this rank's facts, and the problem's gradient and loss
 * and the runtime's step rules as Python functions bound to this rank's
 * problem (aiarun.bridge.AlgorithmContext calls them).
 *
 * They take NumPy arrays (any contiguous float64 buffer) and hand their
 * memory to the problem as it is: a worker's gradient is written into
 * the answer's view without a copy.  The functions hold a copy of what
 * they need of the aia_context (the runtime's lives during create only)
 * and refuse to run once the algorithm is destroyed, when the problem may
 * be closed. */
#include <config.h>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "python_alg.h"

#define CAPSULE "aiarun.algorithm_context"

struct algctx {
    const struct aia_problem_plugin *prob;
    void *pstate;
    size_t dim, rows;
    int open;                       /* 0 once the algorithm is destroyed */
    struct aia_context ctx;         /* a copy, facts pointing below */
    struct aia_problem_facts facts; /* a copy, when the runtime has them */
};

/* The link behind a bound function, or NULL with an exception. */
static struct algctx *link_of(PyObject *self)
{
    struct algctx *c = PyCapsule_GetPointer(self, CAPSULE);
    if (c && !c->open) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the algorithm's context is used after its end "
                        "(destroy): keep it in the instance only");
        return NULL;
    }
    return c;
}

/* A contiguous buffer of n float64 values in o (writable when w), named
 * what in messages: 0, or -1 with an exception (nothing to release). */
static int doubles(PyObject *o, Py_buffer *b, int w, size_t n, const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (w ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, b, flags) < 0)
        return -1;
    const char *f = b->format ? b->format : "B";
    if (f[0] && strchr("@=<", f[0]))
        f++;
    if (b->itemsize != 8 || strcmp(f, "d") != 0) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_TypeError,
                     "%s: float64 values are wanted, not items of format "
                     "'%s'",
                     what, b->format ? b->format : "B");
        return -1;
    }
    if ((size_t)b->len != n * 8) {
        Py_ssize_t len = b->len / 8;
        PyBuffer_Release(b);
        PyErr_Format(PyExc_ValueError,
                     "%s: %zd values, where the problem's dimension is %zu",
                     what, len, n);
        return -1;
    }
    return 0;
}

/* Row numbers idx (int64 or uint64, each below rows): 0, or -1 with an
 * exception. */
static int row_numbers(PyObject *o, Py_buffer *b, size_t rows)
{
    if (PyObject_GetBuffer(o, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *f = b->format ? b->format : "B";
    if (f[0] && strchr("@=<", f[0]))
        f++;
    if (b->itemsize != 8 || !f[0] || f[1] || !strchr("qQlL", f[0])) {
        PyBuffer_Release(b);
        PyErr_SetString(PyExc_TypeError,
                        "idx: 64-bit row numbers are wanted (an int64 array)");
        return -1;
    }
    const int64_t *r = b->buf;
    for (Py_ssize_t i = 0; i < b->len / 8; i++)
        if (r[i] < 0 || (uint64_t)r[i] >= rows) {
            PyErr_Format(PyExc_IndexError,
                         "idx: row %lld of a rank that holds %zu rows",
                         (long long)r[i], rows);
            PyBuffer_Release(b);
            return -1;
        }
    return 0;
}

/* gradient(x, g, idx): the problem's gradient at x over rows idx (all
 * of them when None) into g. */
static PyObject *ctx_gradient(PyObject *self, PyObject *args)
{
    struct algctx *c = link_of(self);
    PyObject *xo, *go, *io = Py_None;
    if (!c || !PyArg_ParseTuple(args, "OO|O", &xo, &go, &io))
        return NULL;
    Py_buffer x, g, idx = {0};
    if (doubles(xo, &x, 0, c->dim, "x") < 0)
        return NULL;
    if (doubles(go, &g, 1, c->dim, "out") < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    if (io != Py_None && row_numbers(io, &idx, c->rows) < 0) {
        PyBuffer_Release(&x);
        PyBuffer_Release(&g);
        return NULL;
    }
    struct aia_error err = {""};
    int rc =
        c->prob->gradient(c->pstate, x.buf, io != Py_None ? idx.buf : NULL,
                          io != Py_None ? (size_t)idx.len / 8 : 0, g.buf, &err);
    PyBuffer_Release(&x);
    PyBuffer_Release(&g);
    if (io != Py_None)
        PyBuffer_Release(&idx);
    if (rc < 0)
        return PyErr_Format(PyExc_RuntimeError, "problem '%s': gradient: %s",
                            c->prob->h.name, err.text);
    Py_RETURN_NONE;
}

/* loss(x): the mean loss over this rank's rows at x. */
static PyObject *ctx_loss(PyObject *self, PyObject *args)
{
    struct algctx *c = link_of(self);
    PyObject *xo;
    Py_buffer x;
    if (!c || !PyArg_ParseTuple(args, "O", &xo) ||
        doubles(xo, &x, 0, c->dim, "x") < 0)
        return NULL;
    struct aia_error err = {""};
    double f;
    int rc = c->prob->loss(c->pstate, x.buf, &f, &err);
    PyBuffer_Release(&x);
    if (rc < 0)
        return PyErr_Format(PyExc_RuntimeError, "problem '%s': loss: %s",
                            c->prob->h.name, err.text);
    return PyFloat_FromDouble(f);
}

/* auto_step(name, scale, rule): the job's key name (absent: auto) as a
 * step, auto being scale / L: the runtime's rule (aia_auto_step_of),
 * which notes the step for the report. */
static PyObject *ctx_auto_step(PyObject *self, PyObject *args)
{
    struct algctx *c = link_of(self);
    const char *name, *rule;
    double scale;
    if (!c || !PyArg_ParseTuple(args, "sds", &name, &scale, &rule))
        return NULL;
    const struct aia_value *a = aia_arg(c->ctx.args, name);
    struct aia_value v = {
        .name = name, .type = AIA_DOUBLE, .d = NAN, .s = "auto"};
    if (a) {
        v.given = a->given;
        if (a->type == AIA_DOUBLE)
            v.d = a->d;
        else if (a->type == AIA_INT)
            v.d = (double)a->i;
        else if (a->type != AIA_STRING || !a->s || strcmp(a->s, "auto") != 0)
            return PyErr_Format(PyExc_ValueError, "%s: give a number or auto",
                                name);
    }
    if (!isnan(v.d) && !(v.d > 0 && isfinite(v.d)))
        return PyErr_Format(PyExc_ValueError,
                            "%s: %g is no step (give a positive number or "
                            "auto)",
                            name, v.d);
    if (!(scale > 0 && isfinite(scale)))
        return PyErr_Format(PyExc_ValueError, "auto_step: scale %g", scale);
    struct aia_error err = {""};
    double step;
    if (aia_auto_step_of(&c->ctx, &v, scale, rule, &step, &err) < 0)
        return PyErr_Format(PyExc_ValueError, "%s", err.text);
    return PyFloat_FromDouble(step);
}

/* age_factor(rows, age_rows, recent_rows, most): the runtime's factor of
 * a step along stale gradients (aia_table_age_factor's); 1 from a host
 * without it. */
static PyObject *ctx_age_factor(PyObject *self, PyObject *args)
{
    struct algctx *c = link_of(self);
    double rows, age, recent, most;
    if (!c || !PyArg_ParseTuple(args, "dddd", &rows, &age, &recent, &most))
        return NULL;
    const struct aia_host *h = c->ctx.host;
    if (!h || !AIA_HAS(struct aia_host, h, age_factor) || !h->age_factor)
        return PyFloat_FromDouble(1.0);
    return PyFloat_FromDouble(h->age_factor(h, rows, age, recent, most));
}

/* log(level, text): one line on stderr, prefixed aiarun[rank]. */
static PyObject *ctx_log(PyObject *self, PyObject *args)
{
    struct algctx *c = link_of(self);
    int level;
    const char *text;
    if (!c || !PyArg_ParseTuple(args, "is", &level, &text))
        return NULL;
    const struct aia_host *h = c->ctx.host;
    if (h && h->log)
        h->log(h, level, "%s", text);
    Py_RETURN_NONE;
}

static PyMethodDef link_methods[] = {
    {"gradient", ctx_gradient, METH_VARARGS, "the problem's gradient"},
    {"loss", ctx_loss, METH_VARARGS, "the problem's loss"},
    {"auto_step", ctx_auto_step, METH_VARARGS, "aia_auto_step_of"},
    {"age_factor", ctx_age_factor, METH_VARARGS, "aia_table_age_factor"},
    {"log", ctx_log, METH_VARARGS, "the host's log"},
};
#define NLINK (sizeof link_methods / sizeof *link_methods)

static void link_free(PyObject *capsule)
{
    free(PyCapsule_GetPointer(capsule, CAPSULE));
}

/* The tuple of the bound functions, in link_methods' order. */
static PyObject *bind(PyObject *cap)
{
    PyObject *t = PyTuple_New(NLINK);
    for (size_t i = 0; t && i < NLINK; i++) {
        PyObject *f = PyCFunction_New(&link_methods[i], cap);
        if (!f) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, f);
    }
    return t;
}

PyObject *algctx_new(PyObject *bridge, const struct aia_context *ctx,
                     PyObject **link)
{
    struct algctx *c = calloc(1, sizeof *c);
    if (!c)
        return PyErr_NoMemory();
    c->prob = ctx->problem;
    c->pstate = ctx->problem_state;
    c->dim = c->prob->dim(c->pstate);
    c->rows = c->prob->rows(c->pstate);
    c->open = 1;
    c->ctx = *ctx;
    const struct aia_problem_facts *f =
        AIA_HAS(struct aia_context, ctx, facts) ? ctx->facts : NULL;
    if (f && f->size >= sizeof *f) {
        c->facts = *f;
        c->ctx.facts = &c->facts;
    } else {
        c->ctx.facts = NULL;
    }
    PyObject *cap = PyCapsule_New(c, CAPSULE, link_free);
    if (!cap) {
        free(c);
        return NULL;
    }
    PyObject *ranks = PyTuple_New(ctx->nworkers > 0 ? ctx->nworkers : 0);
    for (int w = 0; ranks && w < ctx->nworkers; w++) {
        PyObject *r =
            PyLong_FromLong(ctx->pool_ranks ? ctx->pool_ranks[w] : w + 1);
        if (!r)
            Py_CLEAR(ranks);
        else
            PyTuple_SET_ITEM(ranks, w, r);
    }
    PyObject *fns = ranks ? bind(cap) : NULL, *fn = NULL, *kw = NULL,
             *res = NULL;
    PyObject *none = fns ? PyTuple_New(0) : NULL;
    const struct aia_problem_facts *k = c->ctx.facts;
    if (none)
        kw = Py_BuildValue(
            "{s:s,s:i,s:i,s:i,s:K,s:s,s:O,s:O,s:n,s:n,s:n,s:d,s:d,s:d,s:O}",
            "role",
            ctx->role == AIA_ROLE_COORDINATOR ? "coordinator" : "worker",
            "rank", ctx->rank, "worker", ctx->worker, "nworkers", ctx->nworkers,
            "seed", (unsigned long long)ctx->seed, "jobdir",
            ctx->jobdir ? ctx->jobdir : ".", "asynchronous",
            AIA_HAS(struct aia_context, ctx, async) && ctx->async ? Py_True
                                                                  : Py_False,
            "pool_ranks", ranks, "dim", (Py_ssize_t)c->dim, "rows",
            (Py_ssize_t)c->rows, "total_rows", (Py_ssize_t)(k ? k->rows : 0),
            "smoothness", k ? k->smoothness : 0.0, "smallest",
            k ? k->smallest : 0.0, "largest", k ? k->largest : 0.0, "link",
            fns);
    if (kw && (fn = PyObject_GetAttrString(bridge, "AlgorithmContext")))
        res = PyObject_Call(fn, none, kw);
    Py_XDECREF(fn);
    Py_XDECREF(kw);
    Py_XDECREF(none);
    Py_XDECREF(fns);
    Py_XDECREF(ranks);
    if (res)
        *link = cap;
    else
        Py_DECREF(cap);
    return res;
}

void algctx_close(PyObject *link)
{
    struct algctx *c = link ? PyCapsule_GetPointer(link, CAPSULE) : NULL;
    if (c)
        c->open = 0;
    PyErr_Clear();
}
