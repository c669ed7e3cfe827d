/* python_embed.c - the embedded CPython of python.so, shared by the
 * python problem (python.c) and the python algorithm (python_alg.c):
 * starting the interpreter with the job's folders on its path, importing
 * the class, the job's values and the partition's data as Python objects,
 * NumPy views of aiarun's buffers made once per buffer, and a pending
 * exception as one line of error.  Both plugins drive their classes
 * through these. */
#include <config.h>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "python_embed.h"

/* Whether file is a library's: an installed package's (NumPy's,
 * PyTorch's), generated code's ("<__array_function__ internals>") or the
 * bridge's own (aiarun/bridge.py, from a checkout too), whose checks
 * speak for the user's call. */
static int library_file(const char *f)
{
    size_t n = strlen(f), b = strlen("/aiarun/bridge.py");
    return strstr(f, "-packages/") != NULL || f[0] == '<' ||
           (n >= b && strcmp(f + n - b, "/aiarun/bridge.py") == 0);
}

/* " (at file:line)" of traceback entry t into buf.  1 when the file is a
 * library's (library_file), 0 when not, -1 when the entry has no place
 * (buf unchanged). */
static int frame_place(PyObject *t, char *buf, size_t len)
{
    PyObject *line = PyObject_GetAttrString(t, "tb_lineno");
    PyObject *frame = PyObject_GetAttrString(t, "tb_frame");
    PyObject *code = frame ? PyObject_GetAttrString(frame, "f_code") : NULL;
    PyObject *file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
    const char *f = file ? PyUnicode_AsUTF8(file) : NULL;
    int rc = -1;
    if (f && line) {
        snprintf(buf, len, " (at %s:%ld)", f, PyLong_AsLong(line));
        rc = library_file(f);
    }
    Py_XDECREF(line);
    Py_XDECREF(frame);
    Py_XDECREF(code);
    Py_XDECREF(file);
    return rc;
}

/* " (at file:line)" of where func (a method or function) is defined. */
static void def_place(PyObject *func, char *buf, size_t len)
{
    PyObject *f = PyObject_GetAttrString(func, "__func__");
    if (!f) {
        PyErr_Clear();
        f = Py_NewRef(func);
    }
    PyObject *code = PyObject_GetAttrString(f, "__code__");
    PyObject *file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
    PyObject *line =
        code ? PyObject_GetAttrString(code, "co_firstlineno") : NULL;
    const char *u = file ? PyUnicode_AsUTF8(file) : NULL;
    if (u && line)
        snprintf(buf, len, " (at %s:%ld)", u, PyLong_AsLong(line));
    Py_XDECREF(line);
    Py_XDECREF(file);
    Py_XDECREF(code);
    Py_DECREF(f);
    PyErr_Clear();
}

/* One line for the pending Python exception, after prefix. */
int embed_fail(struct aia_error *err, const char *prefix)
{
    return embed_fail_in(err, prefix, NULL);
}

int embed_fail_in(struct aia_error *err, const char *prefix, PyObject *func)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    char text[200] = "unknown error", where[160] = "";
    const char *tname = type ? ((PyTypeObject *)type)->tp_name : "Error";
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *u = s ? PyUnicode_AsUTF8(s) : NULL;
    if (u) {
        snprintf(text, sizeof text, "%s", u);
        for (char *c = text; *c; c++)
            if (*c == '\n' || *c == '\r')
                *c = ' ';
    }
    /* the innermost frame of the user's code: where the exception was
     * raised, or where the user's code called the library (NumPy's,
     * PyTorch's: installed packages) that raised it */
    char any[160] = "";
    PyObject *t = tb;
    Py_XINCREF(t);
    while (t && t != Py_None) {
        char here[160];
        int rc = frame_place(t, here, sizeof here);
        if (rc >= 0)
            snprintf(any, sizeof any, "%s", here);
        if (rc == 0)
            snprintf(where, sizeof where, "%s", here);
        PyObject *next = PyObject_GetAttrString(t, "tb_next");
        Py_DECREF(t);
        t = next;
    }
    PyErr_Clear();
    /* no frame of the user's: the check of what func returned failed
     * after it had returned, so its definition is the place */
    if (!*where && func)
        def_place(func, where, sizeof where);
    if (!*where)
        snprintf(where, sizeof where, "%s", any);
    Py_XDECREF(t);
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
    return aia_seterr(err, "%s: %s: %s%s", prefix, tname, text, where);
}

/* Prepend dir to sys.path (append when last is set). */
static void add_path(PyObject *path, const char *dir, int last)
{
    if (!dir || !*dir)
        return;
    PyObject *d = PyUnicode_DecodeFSDefault(dir);
    if (!d)
        return PyErr_Clear();
    if (last)
        PyList_Append(path, d);
    else
        PyList_Insert(path, 0, d);
    Py_DECREF(d);
}

/* Start the interpreter once per process and put the job's folders on its
 * path.  libpython is made global first: extension modules (NumPy's) are
 * not linked against it and find its symbols in the global scope, which a
 * plugin's dependencies are not part of. */
int embed_start(const struct aia_context *ctx, struct aia_error *err)
{
    static int started;
    if (!started) {
        /* one BLAS thread unless told otherwise: a rank is one process,
         * and BLAS threads would compete with the other ranks' cores
         * (bench/: OpenBLAS's two threads under load made the gradient
         * ten times slower) */
        static const char *const blas[] = {
            "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"};
        for (size_t i = 0; i < sizeof blas / sizeof blas[0]; i++)
            setenv(blas[i], "1", 0);
        Dl_info info;
        if (dladdr((void *)&Py_InitializeEx, &info) && info.dli_fname)
            dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
        Py_InitializeEx(0);
        if (!Py_IsInitialized())
            return aia_seterr(err, "the embedded Python did not start");
        started = 1;
        PyObject *path = PySys_GetObject("path"); /* borrowed */
        if (!path)
            return aia_seterr(err, "the embedded Python has no sys.path");
        add_path(path, AIA_PYTHONDIR, 1);
        add_path(path, AIA_PYTHON_SRCDIR, 1);
        const char *env = getenv("AIARUN_PYTHONPATH");
        char *dirs = env ? strdup(env) : NULL, *save = NULL;
        /* prepended one by one: reverse order keeps the variable's */
        size_t k = 0;
        char *list[64];
        for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && k < 64;
             d = strtok_r(NULL, ":", &save))
            list[k++] = d;
        while (k > 0)
            add_path(path, list[--k], 0);
        free(dirs);
        add_path(path, ctx->jobdir ? ctx->jobdir : ".", 0);
    }
    return 0;
}

/* The class named module:Class, imported (new reference) or NULL. */
PyObject *embed_class(const char *spec, struct aia_error *err)
{
    char what[200];
    snprintf(what, sizeof what, "class '%s'", spec);
    const char *colon = strchr(spec, ':');
    if (!colon || colon == spec || !colon[1])
        return aia_seterr(err, "%s: write it as module:Class", what), NULL;
    char *mod = strndup(spec, (size_t)(colon - spec));
    PyObject *m = mod ? PyImport_ImportModule(mod) : NULL;
    free(mod);
    if (!m)
        return embed_fail(err, what), NULL;
    PyObject *cls = PyObject_GetAttrString(m, colon + 1);
    Py_DECREF(m);
    if (!cls)
        return embed_fail(err, what), NULL;
    if (!PyCallable_Check(cls)) {
        Py_DECREF(cls);
        return aia_seterr(err, "%s: not a class", what), NULL;
    }
    return cls;
}

/* One job-file value as a Python object (new reference). */
static PyObject *value(const struct aia_value *v)
{
    switch (v->type) {
    case AIA_INT:
        return PyLong_FromLongLong(v->i);
    case AIA_DOUBLE:
        return PyFloat_FromDouble(v->d);
    case AIA_BOOL:
        return PyBool_FromLong((long)v->i);
    case AIA_INTS:
    case AIA_DOUBLES: {
        PyObject *l = PyList_New((Py_ssize_t)v->n);
        for (size_t i = 0; l && i < v->n; i++) {
            PyObject *e = v->type == AIA_INTS
                              ? PyLong_FromLongLong(v->ints[i])
                              : PyFloat_FromDouble(v->doubles[i]);
            if (!e) {
                Py_DECREF(l);
                return NULL;
            }
            PyList_SET_ITEM(l, (Py_ssize_t)i, e);
        }
        return l;
    }
    default:
        return PyUnicode_FromString(v->s ? v->s : "");
    }
}

/* A NumPy view of n items of buffer p ('d' doubles, 'Q' row numbers),
 * read-only unless writable.  New reference, or NULL. */
PyObject *embed_array(PyObject *vector, const void *p, size_t n, size_t item,
                      const char *code, int writable)
{
    static const char empty[8];
    PyObject *mv = PyMemoryView_FromMemory((char *)(p ? p : empty),
                                           (Py_ssize_t)(p ? n * item : 0),
                                           writable ? PyBUF_WRITE : PyBUF_READ);
    if (!mv)
        return NULL;
    PyObject *a = PyObject_CallFunction(vector, "Os", mv, code);
    Py_DECREF(mv);
    return a;
}

/* A partition as the Python side sees it: a copy of the runtime's, its
 * weights after it, and the host whose rules say which rows it holds. */
struct part_rule {
    const struct aia_host *host;
    struct aia_partition part;
    double weights[];
};

static void rule_free(PyObject *capsule)
{
    free(PyCapsule_GetPointer(capsule, "aiarun.partition"));
}

/* first(m, p): aia_partition_first. */
static PyObject *rule_first(PyObject *self, PyObject *args)
{
    struct part_rule *r = PyCapsule_GetPointer(self, "aiarun.partition");
    Py_ssize_t m;
    int p;
    if (!r || !PyArg_ParseTuple(args, "ni", &m, &p))
        return NULL;
    if (m < 0)
        return PyErr_Format(PyExc_ValueError, "%zd rows", m);
    return PyLong_FromSize_t(
        aia_partition_first(r->host, &r->part, (size_t)m, p));
}

/* owners(m, rows, out): out[i] = aia_partition_owner of rows[i], both
 * contiguous int64 arrays of one length. */
static PyObject *rule_owners(PyObject *self, PyObject *args)
{
    struct part_rule *r = PyCapsule_GetPointer(self, "aiarun.partition");
    Py_ssize_t m;
    Py_buffer in, out;
    if (!r || !PyArg_ParseTuple(args, "ny*w*", &m, &in, &out))
        return NULL;
    PyObject *rc = NULL;
    if (m < 0 || in.len != out.len || in.len % 8)
        PyErr_SetString(PyExc_ValueError, "owners: bad arrays");
    else {
        const int64_t *row = in.buf;
        int64_t *who = out.buf;
        for (Py_ssize_t i = 0; i < in.len / 8; i++)
            who[i] = row[i] < 0 || row[i] >= m
                         ? -1
                         : aia_partition_owner(r->host, &r->part, (size_t)m,
                                               (size_t)row[i]);
        rc = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&in);
    PyBuffer_Release(&out);
    return rc;
}

static PyMethodDef rule_methods[] = {
    {"first", rule_first, METH_VARARGS, "aia_partition_first"},
    {"owners", rule_owners, METH_VARARGS, "aia_partition_owner"},
};

/* (first, owners): the runtime's partition rules bound to a copy of part,
 * so that Python never writes them again. */
static PyObject *rules(const struct aia_context *ctx,
                       const struct aia_partition *part)
{
    size_t n = part && part->weights ? (size_t)part->count : 0;
    struct part_rule *r = calloc(1, sizeof *r + n * sizeof *r->weights);
    if (!r)
        return PyErr_NoMemory();
    r->host = ctx->host;
    if (part)
        r->part = *part;
    if (n) {
        memcpy(r->weights, part->weights, n * sizeof *r->weights);
        r->part.weights = r->weights;
    }
    PyObject *cap = PyCapsule_New(r, "aiarun.partition", rule_free);
    if (!cap) {
        free(r);
        return NULL;
    }
    PyObject *first = PyCFunction_New(&rule_methods[0], cap);
    PyObject *owners = PyCFunction_New(&rule_methods[1], cap);
    Py_DECREF(cap);
    PyObject *t = first && owners ? PyTuple_Pack(2, first, owners) : NULL;
    Py_XDECREF(first);
    Py_XDECREF(owners);
    return t;
}

/* The context handed to open(): aiarun.bridge.context(...) with the
 * partition and its rules and, when the job names a data file, its rows
 * as arrays. */
PyObject *embed_context(PyObject *bridge, PyObject *vector,
                        const struct aia_context *ctx,
                        const struct aia_partition *part)
{
    const struct aia_dataset *d = ctx->data;
    PyObject *w = Py_None, *data = Py_None;
    Py_INCREF(w);
    Py_INCREF(data);
    if (part && part->weights) {
        Py_DECREF(w);
        w = embed_array(vector, part->weights, (size_t)part->count, 8, "d", 0);
    }
    if (d && w) {
        Py_DECREF(data);
        size_t nnz = d->x || !d->row_start ? 0 : d->row_start[d->rows];
        data = Py_BuildValue(
            "{s:n,s:n,s:n,s:N,s:N,s:N,s:N,s:N,s:N,s:s}", "rows",
            (Py_ssize_t)d->rows, "cols", (Py_ssize_t)d->cols, "total_rows",
            (Py_ssize_t)d->total_rows, "row_ids",
            embed_array(vector, d->row_ids, d->rows, sizeof(size_t), "Q", 0),
            "y", embed_array(vector, d->y, d->rows, 8, "d", 0), "x",
            d->x ? embed_array(vector, d->x, d->rows * d->cols, 8, "d", 0)
                 : Py_NewRef(Py_None),
            "row_start",
            d->x ? Py_NewRef(Py_None)
                 : embed_array(vector, d->row_start, d->rows + 1,
                               sizeof(size_t), "Q", 0),
            "col",
            d->x ? Py_NewRef(Py_None)
                 : embed_array(vector, d->col, nnz, sizeof(uint32_t), "I", 0),
            "val",
            d->x ? Py_NewRef(Py_None)
                 : embed_array(vector, d->val, nnz, 8, "d", 0),
            "source", d->source ? d->source : "");
    }
    PyObject *c = NULL, *kw = NULL, *f = NULL, *none = PyTuple_New(0);
    PyObject *rule = w && data && none ? rules(ctx, part) : NULL;
    if (rule)
        kw = Py_BuildValue(
            "{s:s,s:i,s:i,s:i,s:K,s:s,s:i,s:i,s:i,s:O,s:O,s:O}", "role",
            ctx->role == AIA_ROLE_COORDINATOR ? "coordinator" : "worker",
            "rank", ctx->rank, "worker", ctx->worker, "nworkers", ctx->nworkers,
            "seed", (unsigned long long)ctx->seed, "jobdir",
            ctx->jobdir ? ctx->jobdir : ".", "index",
            part ? part->index : AIA_PART_ALL, "count", part ? part->count : 0,
            "scheme", part ? part->scheme : AIA_PART_BLOCK, "weights", w,
            "data", data, "rules", rule);
    if (kw && (f = PyObject_GetAttrString(bridge, "context")))
        c = PyObject_Call(f, none, kw);
    Py_XDECREF(f);
    Py_XDECREF(kw);
    Py_XDECREF(rule);
    Py_XDECREF(none);
    Py_XDECREF(w);
    Py_XDECREF(data);
    return c;
}

/* The class's constructor arguments: every parameter but class. */
PyObject *embed_kwargs(const struct aia_value *args)
{
    PyObject *kw = PyDict_New();
    for (const struct aia_value *v = args; kw && v->name; v++) {
        if (strcmp(v->name, "class") == 0)
            continue;
        PyObject *o = value(v);
        if (!o || PyDict_SetItemString(kw, v->name, o) < 0) {
            Py_XDECREF(o);
            Py_DECREF(kw);
            return NULL;
        }
        Py_DECREF(o);
    }
    return kw;
}

/* Distinct buffers a cache of views keeps; past them it starts afresh,
 * so that buffers the runtime frees and replaces do not pile up. */
#define VIEWS_MOST 4096

PyObject *embed_view(struct embed_views *v, PyObject *vector, const void *p,
                     size_t n, size_t item, const char *code, int writable)
{
    if (!v->dict && !(v->dict = PyDict_New()))
        return NULL;
    PyObject *key = PyLong_FromVoidPtr((void *)p);
    if (!key)
        return NULL;
    PyObject *a = PyDict_GetItemWithError(v->dict, key); /* borrowed */
    if (a && PyObject_Length(a) == (Py_ssize_t)n) {
        Py_DECREF(key);
        return a;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    if (PyDict_GET_SIZE(v->dict) >= VIEWS_MOST)
        PyDict_Clear(v->dict);
    a = embed_array(vector, p, n, item, code, writable);
    if (!a || PyDict_SetItem(v->dict, key, a) < 0) {
        Py_XDECREF(a);
        Py_DECREF(key);
        return NULL;
    }
    Py_DECREF(a); /* the cache holds it */
    Py_DECREF(key);
    return a;
}

void embed_views_free(struct embed_views *v)
{
    Py_CLEAR(v->dict);
}

PyObject *embed_method(PyObject *obj, const char *name, int need)
{
    if (!need && !PyObject_HasAttrString(obj, name))
        return NULL;
    return PyObject_GetAttrString(obj, name);
}

int embed_size(PyObject *o, size_t *out)
{
    PyObject *v = o && PyCallable_Check(o) ? PyObject_CallNoArgs(o) : o;
    if (v != o)
        Py_XDECREF(o);
    if (!v)
        return -1;
    Py_ssize_t n = PyNumber_AsSsize_t(v, PyExc_OverflowError);
    Py_DECREF(v);
    if (n < 0 && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "a negative size");
    if (n < 0)
        return -1;
    *out = (size_t)n;
    return 0;
}

int embed_double(PyObject *r, const char *what, double *out,
                 struct aia_error *err)
{
    double v = r ? PyFloat_AsDouble(r) : -1;
    Py_XDECREF(r);
    if (PyErr_Occurred())
        return embed_fail(err, what);
    *out = v;
    return 0;
}

PyObject *embed_bridge(const char *who, PyObject **vector, PyObject **put,
                       struct aia_error *err)
{
    /* the interpreter is configure's, whatever python a venv or pyenv
     * puts first on PATH: say which, and what it lacks */
    char what[240];
    snprintf(what, sizeof what,
             "the python %s runs in " AIA_PYTHON " (" PY_VERSION
             ", aiarun's build; a venv's or pyenv's packages are not "
             "seen), which needs NumPy and the aiarun package installed "
             "for it",
             who);
    PyObject *bridge = PyImport_ImportModule("aiarun.bridge");
    if (!bridge) {
        embed_fail(err, what);
        return NULL;
    }
    *vector = PyObject_GetAttrString(bridge, "vector");
    *put = *vector ? PyObject_GetAttrString(bridge, "put") : NULL;
    if (!*put) {
        embed_fail(err, "aiarun.bridge");
        Py_CLEAR(*vector);
        Py_CLEAR(bridge);
    }
    return bridge;
}

void embed_flush(void)
{
    PyObject *out = PySys_GetObject("stdout"); /* borrowed */
    if (out && out != Py_None)
        Py_XDECREF(PyObject_CallMethod(out, "flush", NULL));
    PyErr_Clear();
}
