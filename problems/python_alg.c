/* python_alg.c - an algorithm written in Python (NumPy), run by the
 * embedded CPython of python.so on every rank.
 *
 *     algorithm: {plugin: python, class: gd:GD, step: 0.5}
 *
 * imports module gd as the python problem imports its class (the job
 * file's folder, AIARUN_PYTHONPATH, PYTHONPATH, the aiarun package's
 * folders), builds GD(step=0.5) (every key but `class` is a constructor
 * argument: AIA_PARAMS_OPEN) and calls the methods of the algorithm ABI:
 *
 *     create(ctx) -> lengths     every rank; ctx: aiarun.bridge.
 *                                AlgorithmContext (facts, the problem's
 *                                gradient and loss, the step rules);
 *                                None: the problem's dim both ways, n: n
 *                                both ways, (q, a): queries of q values,
 *                                answers of a
 *     init(query)                coordinator: the first query
 *     worker(query, answer, step)  worker: the answer to query
 *     absorb(answer, info)       coordinator: one answer, fresh or stale
 *     query(query)               coordinator: the next query (a round's end)
 *     iterate(x)                 optional: the model; without it the
 *                                query is the model
 *     save() -> doubles          optional, with load: the coordinator's
 *     load(state)                state for checkpoints
 *     close()                    optional: the run's end
 *
 * query, answer and x are NumPy views of aiarun's own buffers, made once
 * per buffer (the coordinator's answers arrive in one buffer a worker):
 * a method writes into them, or returns the values (then copied, their
 * count checked).  A view is valid during the call only.
 *
 * One shared object holds both python plugins because a bare plugin name
 * is a file NAME.so: `plugin: python` finds python.so under either
 * section, which exports both descriptors and starts one interpreter.
 *
 * The descriptor is const and the same for every class: it declares no
 * flags (tree aggregation and top-k answers are refused), and has
 * iterate, save and load, which a class without them answers with a
 * copy of its latest query, and with a refusal at the first checkpoint.
 * A checkpoint's state is the doubles save() returned followed, for a
 * class without iterate(), by that latest query.
 */
#include <config.h>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

#include "python_alg.h"
#include "python_embed.h"

static const struct aia_param params[] = {
    {"class", AIA_STRING, NULL,
     "the algorithm's class as module:Class; every other key is an argument "
     "of its constructor",
     NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

/* The class's methods. */
enum {
    M_CREATE,
    M_INIT,
    M_WORKER,
    M_ABSORB,
    M_QUERY,
    M_ITERATE,
    M_SAVE,
    M_LOAD,
    M_CLOSE,
    M_COUNT
};
/* Each method's name, how the messages show its call, and whether the
 * class must have it. */
static const struct {
    const char *name, *call;
    int required;
} methods[M_COUNT] = {
    [M_CREATE] = {"create", "create(ctx)", 1},
    [M_INIT] = {"init", "init(query)", 1},
    [M_WORKER] = {"worker", "worker(query, answer, step)", 1},
    [M_ABSORB] = {"absorb", "absorb(answer, info)", 1},
    [M_QUERY] = {"query", "query(query)", 1},
    [M_ITERATE] = {"iterate", "iterate(x)", 0},
    [M_SAVE] = {"save", "save()", 0},
    [M_LOAD] = {"load", "load(state)", 0},
    [M_CLOSE] = {"close", "close()", 0},
};

struct pyalg {
    PyObject *obj;
    PyObject *m[M_COUNT]; /* bound methods, NULL where the class has none */
    PyObject *vector, *put, *doubles; /* aiarun.bridge helpers */
    PyObject *link;  /* the context's functions (algctx_close) */
    PyObject *saved; /* save()'s values, from state_size to save */
    const struct aia_host *host;
    const char *cls;
    size_t qlen, alen, dim;
    double *last; /* the latest query, for a class without iterate */
    struct embed_views q, qin, a, ain, x;
    struct aia_error save_err; /* save() failed in state_size */
    int created;               /* create() returned: close() is owed */
};

/* The structs an answer's info and a worker's step are handed as. */
static PyStructSequence_Field info_fields[] = {
    {"rank", "the worker's rank"},
    {"worker", "its pool index"},
    {"round", "the current round"},
    {"sent_round", "the round whose query this answers"},
    {"staleness", "round - sent_round"},
    {"rows", "the rows the worker holds"},
    {"total_rows", "the rows over the whole pool"},
    {"compute_s", "the worker's compute time for it, seconds"},
    {NULL, NULL},
};
static PyStructSequence_Desc info_desc = {
    "aiarun.AnswerInfo", "what the coordinator knows of an answer", info_fields,
    8};
static PyStructSequence_Field step_fields[] = {
    {"round", "the round of the query"},
    {"answers", "answers this worker gave before this one"},
    {NULL, NULL},
};
static PyStructSequence_Desc step_desc = {
    "aiarun.Step", "what a worker knows when it answers", step_fields, 2};
static PyTypeObject *info_type, *step_type;

/* err for the exception of a call of method k. */
static int fail(const struct pyalg *p, int k, struct aia_error *err)
{
    char what[200];
    snprintf(what, sizeof what, "%s.%s", p->cls, methods[k].name);
    return embed_fail_in(err, what, p->m[k]);
}

/* The result r of method k that may return the values of view (of: what
 * view holds, for the message): None (it wrote them), or values copied
 * into view.  Takes r; 0, or -1 with err set. */
static int returned(const struct pyalg *p, int k, PyObject *r, PyObject *view,
                    const char *of, struct aia_error *err)
{
    if (r && r != Py_None) {
        char what[200];
        snprintf(what, sizeof what, "%s()", methods[k].name);
        PyObject *done =
            PyObject_CallFunction(p->put, "OOss", view, r, what, of);
        Py_DECREF(r);
        r = done;
    }
    if (!r)
        return fail(p, k, err);
    Py_DECREF(r);
    return 0;
}

static void destroy(void *state)
{
    struct pyalg *p = state;
    if (!p)
        return;
    if (p->created && p->m[M_CLOSE]) {
        PyObject *r = PyObject_CallNoArgs(p->m[M_CLOSE]);
        struct aia_error err;
        if (!r && p->host && p->host->log) {
            fail(p, M_CLOSE, &err);
            p->host->log(p->host, AIA_LOG_WARN, "%s", err.text);
        }
        Py_XDECREF(r);
    }
    algctx_close(p->link);
    Py_XDECREF(p->link);
    for (int k = 0; k < M_COUNT; k++)
        Py_XDECREF(p->m[k]);
    embed_views_free(&p->q);
    embed_views_free(&p->qin);
    embed_views_free(&p->a);
    embed_views_free(&p->ain);
    embed_views_free(&p->x);
    Py_XDECREF(p->saved);
    Py_XDECREF(p->vector);
    Py_XDECREF(p->put);
    Py_XDECREF(p->doubles);
    Py_XDECREF(p->obj);
    embed_flush();
    free(p->last);
    free(p);
}

/* A length from create()'s result: 0, or -1 with an exception. */
static int length(PyObject *o, size_t *n)
{
    Py_ssize_t v = PyLong_Check(o) ? PyLong_AsSsize_t(o) : -1;
    if (v > 0) {
        *n = (size_t)v;
        return 0;
    }
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError,
                     "create() returned %R: give the query's length, the "
                     "lengths (query, answer), or None for the problem's "
                     "dimension both ways",
                     o);
    return -1;
}

/* The message lengths from create()'s result r (taken): 0, or -1 with an
 * exception. */
static int lengths(struct pyalg *p, PyObject *r)
{
    int rc = 0;
    if (r == Py_None) {
        p->qlen = p->alen = p->dim;
    } else if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
        rc = length(PyTuple_GET_ITEM(r, 0), &p->qlen) < 0 ||
                     length(PyTuple_GET_ITEM(r, 1), &p->alen) < 0
                 ? -1
                 : 0;
    } else if ((rc = length(r, &p->qlen)) == 0) {
        p->alen = p->qlen;
    }
    Py_DECREF(r);
    return rc;
}

/* The class's methods, every required one there and callable; one
 * that is None is absent. */
static int bind_methods(struct pyalg *p, struct aia_error *err)
{
    for (int k = 0; k < M_COUNT; k++) {
        p->m[k] = embed_method(p->obj, methods[k].name, 0);
        if (PyErr_Occurred())
            return embed_fail(err, p->cls);
        if (p->m[k] == Py_None) /* set to None: as absent (a subclass's) */
            Py_CLEAR(p->m[k]);
        if (p->m[k] && !PyCallable_Check(p->m[k]))
            return aia_seterr(err, "class '%s': %s is not a method", p->cls,
                              methods[k].name);
        if (!p->m[k] && methods[k].required)
            return aia_seterr(err, "class '%s' has no method %s", p->cls,
                              methods[k].call);
    }
    if (!p->m[M_SAVE] != !p->m[M_LOAD])
        return aia_seterr(err,
                          "class '%s' has %s but no %s: a checkpoint needs "
                          "both",
                          p->cls, methods[p->m[M_SAVE] ? M_SAVE : M_LOAD].call,
                          methods[p->m[M_SAVE] ? M_LOAD : M_SAVE].call);
    return 0;
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    if (embed_start(ctx, err) < 0)
        return -1;
    if ((!info_type && !(info_type = PyStructSequence_NewType(&info_desc))) ||
        (!step_type && !(step_type = PyStructSequence_NewType(&step_desc))))
        return embed_fail(err, "the python algorithm");
    struct pyalg *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    p->cls = aia_arg(ctx->args, "class")->s;
    p->host = ctx->host;
    p->dim = ctx->problem->dim(ctx->problem_state);
    char what[200];
    snprintf(what, sizeof what, "class '%s'", p->cls);
    PyObject *bridge = embed_bridge("algorithm", &p->vector, &p->put, err);
    PyObject *cls = bridge ? embed_class(p->cls, err) : NULL;
    if (!cls)
        goto fail;
    PyObject *kw = embed_kwargs(ctx->args), *none = PyTuple_New(0);
    p->obj = kw && none ? PyObject_Call(cls, none, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(none);
    Py_DECREF(cls);
    if (!p->obj || !(p->doubles = PyObject_GetAttrString(bridge, "doubles"))) {
        embed_fail(err, what);
        goto fail;
    }
    if (bind_methods(p, err) < 0)
        goto fail;
    PyObject *c = algctx_new(bridge, ctx, &p->link);
    PyObject *r = c ? PyObject_CallOneArg(p->m[M_CREATE], c) : NULL;
    Py_XDECREF(c);
    if (!r || lengths(p, r) < 0) {
        fail(p, M_CREATE, err);
        goto fail;
    }
    p->created = 1;
    if (ctx->role == AIA_ROLE_COORDINATOR && !p->m[M_ITERATE]) {
        if (p->qlen != p->dim) {
            aia_seterr(err,
                       "class '%s' has no iterate(x), so its query is the "
                       "model, but create() gave queries of %zu values for "
                       "a model of %zu",
                       p->cls, p->qlen, p->dim);
            goto fail;
        }
        if (!(p->last = calloc(p->qlen, sizeof *p->last))) {
            aia_seterr(err, "out of memory");
            goto fail;
        }
    }
    Py_DECREF(bridge);
    shape->query_len = p->qlen;
    shape->answer_len = p->alen;
    *state = p;
    return 0;
fail:
    Py_XDECREF(bridge);
    destroy(p);
    return -1;
}

/* init or query (method k): the class writes or returns the query. */
static int write_query(struct pyalg *p, int k, double *query,
                       struct aia_error *err)
{
    PyObject *v = embed_view(&p->q, p->vector, query, p->qlen, 8, "d", 1);
    PyObject *r = v ? PyObject_CallOneArg(p->m[k], v) : NULL;
    if (returned(p, k, r, v, "a query", err) < 0)
        return -1;
    if (p->last)
        memcpy(p->last, query, p->qlen * sizeof *query);
    return 0;
}

static int init(void *state, double *query, struct aia_error *err)
{
    return write_query(state, M_INIT, query, err);
}

static int query(void *state, double *query, struct aia_error *err)
{
    return write_query(state, M_QUERY, query, err);
}

/* A struct sequence of type t with items made from values. */
static PyObject *record(PyTypeObject *t, PyObject *const *values, int n)
{
    PyObject *o = PyStructSequence_New(t);
    for (int i = 0; i < n; i++)
        if (!values[i])
            Py_CLEAR(o);
        else if (o)
            PyStructSequence_SetItem(o, i, values[i]);
        else
            Py_XDECREF(values[i]);
    return o;
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct pyalg *p = state;
    PyObject *q = embed_view(&p->qin, p->vector, query, p->qlen, 8, "d", 0);
    PyObject *a =
        q ? embed_view(&p->a, p->vector, answer, p->alen, 8, "d", 1) : NULL;
    PyObject *v[2] = {PyLong_FromUnsignedLongLong(step->round),
                      PyLong_FromUnsignedLongLong(step->answers)};
    PyObject *s = record(step_type, v, 2);
    PyObject *r =
        a && s ? PyObject_CallFunctionObjArgs(p->m[M_WORKER], q, a, s, NULL)
               : NULL;
    Py_XDECREF(s);
    return returned(p, M_WORKER, r, a, "an answer", err);
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct pyalg *p = state;
    PyObject *a = embed_view(&p->ain, p->vector, answer, p->alen, 8, "d", 0);
    PyObject *v[8] = {PyLong_FromLong(info->rank),
                      PyLong_FromLong(info->worker),
                      PyLong_FromUnsignedLongLong(info->round),
                      PyLong_FromUnsignedLongLong(info->sent_round),
                      PyLong_FromUnsignedLongLong(info->staleness),
                      PyLong_FromSize_t(info->rows),
                      PyLong_FromSize_t(info->total_rows),
                      PyFloat_FromDouble(info->compute_s)};
    PyObject *i = record(info_type, v, 8);
    PyObject *r = a && i
                      ? PyObject_CallFunctionObjArgs(p->m[M_ABSORB], a, i, NULL)
                      : NULL;
    Py_XDECREF(i);
    if (!r)
        return fail(p, M_ABSORB, err);
    Py_DECREF(r);
    return 0;
}

static int iterate(void *state, double *x, struct aia_error *err)
{
    struct pyalg *p = state;
    if (!p->m[M_ITERATE]) {
        memcpy(x, p->last, p->dim * sizeof *x);
        return 0;
    }
    PyObject *v = embed_view(&p->x, p->vector, x, p->dim, 8, "d", 1);
    PyObject *r = v ? PyObject_CallOneArg(p->m[M_ITERATE], v) : NULL;
    return returned(p, M_ITERATE, r, v, "a model", err);
}

/* Checkpoints.  The bytes after save()'s values: the latest query, for a
 * class whose query is its model. */
static size_t tail(const struct pyalg *p)
{
    return p->last ? p->qlen * sizeof(double) : 0;
}

static int no_save(const struct pyalg *p, struct aia_error *err)
{
    return aia_seterr(err,
                      "class '%s' has no save() and load(): its state "
                      "cannot be checkpointed",
                      p->cls);
}

/* save()'s values into p->saved: 0, or -1 with err set. */
static int take_state(struct pyalg *p, struct aia_error *err)
{
    if (!p->m[M_SAVE])
        return no_save(p, err);
    Py_CLEAR(p->saved);
    PyObject *r = PyObject_CallNoArgs(p->m[M_SAVE]);
    p->saved = r ? PyObject_CallOneArg(p->doubles, r) : NULL;
    Py_XDECREF(r);
    return p->saved ? 0 : fail(p, M_SAVE, err);
}

static size_t state_size(void *state)
{
    struct pyalg *p = state;
    p->save_err.text[0] = '\0';
    if (take_state(p, &p->save_err) < 0)
        return 0; /* save says why */
    return (size_t)PyObject_Length(p->saved) * sizeof(double) + tail(p);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct pyalg *p = state;
    if (p->save_err.text[0]) {
        *err = p->save_err;
        p->save_err.text[0] = '\0';
        return -1;
    }
    if (!p->saved && take_state(p, err) < 0)
        return -1;
    Py_buffer b;
    if (PyObject_GetBuffer(p->saved, &b, PyBUF_C_CONTIGUOUS) < 0)
        return fail(p, M_SAVE, err);
    memcpy(buf, b.buf, (size_t)b.len);
    if (p->last)
        memcpy((char *)buf + b.len, p->last, tail(p));
    PyBuffer_Release(&b);
    Py_CLEAR(p->saved);
    return 0;
}

static int load(void *state, const void *buf, size_t len, struct aia_error *err)
{
    struct pyalg *p = state;
    if (!p->m[M_LOAD])
        return no_save(p, err);
    if (len < tail(p) || (len - tail(p)) % sizeof(double))
        return aia_seterr(err, "a state of %zu bytes: not doubles%s", len,
                          p->last ? " and the latest query" : "");
    size_t n = (len - tail(p)) / sizeof(double);
    PyObject *v = embed_array(p->vector, buf, n, 8, "d", 0);
    PyObject *r = v ? PyObject_CallOneArg(p->m[M_LOAD], v) : NULL;
    Py_XDECREF(v);
    if (!r)
        return fail(p, M_LOAD, err);
    Py_DECREF(r);
    if (p->last)
        memcpy(p->last, (const char *)buf + n * sizeof(double), tail(p));
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = {AIA_ABI_VERSION, (uint32_t)sizeof(struct aia_algorithm_plugin),
          AIA_KIND_ALGORITHM, AIA_PARAMS_OPEN, "python", "1.0",
          "an algorithm written in Python: a class with create, init, "
          "worker, absorb, query (NumPy views of aiarun's buffers)",
          params},
    .create = create,
    .destroy = destroy,
    .init = init,
    .worker = worker,
    .absorb = absorb,
    .query = query,
    .iterate = iterate,
    .state_size = state_size,
    .save = save,
    .load = load,
};
