/* python_embed.h - the embedded CPython's services (python_embed.c) to
 * the two plugins of python.so, the python problem (python.c) and the
 * python algorithm (python_alg.c): shared by the plugin's files only,
 * never exported (the plugin exports its descriptors alone). */
#ifndef AIARUN_PYTHON_EMBED_H
#define AIARUN_PYTHON_EMBED_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <aiarun/aiarun.h>

/* Start the interpreter once per process, with the job's folder,
 * AIARUN_PYTHONPATH and the aiarun package's folders on sys.path.  0, or
 * -1 with err set. */
int embed_start(const struct aia_context *ctx, struct aia_error *err);

/* Set err to one line for the pending Python exception, after prefix:
 * its type, text and the innermost frame of the user's code.  Clears the
 * exception; returns -1. */
int embed_fail(struct aia_error *err, const char *prefix);

/* The same, where func (a bound method) was the call: when no frame of
 * the user's code is in the traceback (what func returned failed a check
 * after it had returned), the place named is func's definition. */
int embed_fail_in(struct aia_error *err, const char *prefix, PyObject *func);

/* A class's instance is gone: what it printed is flushed (the
 * interpreter stays up, since NumPy cannot be loaded twice, and its
 * buffers would be lost at exit), and any exception cleared. */
void embed_flush(void);

/* The class named module:Class, imported (new reference), or NULL with
 * err set. */
PyObject *embed_class(const char *spec, struct aia_error *err);

/* A NumPy view (made by vector, aiarun.bridge's) of n items of item bytes
 * of buffer p, of type code ('d', 'Q', 'I'), read-only unless writable.
 * New reference, or NULL with an exception. */
PyObject *embed_array(PyObject *vector, const void *p, size_t n, size_t item,
                      const char *code, int writable);

/* The context handed to the class's open(): aiarun.bridge.context(...)
 * with the rank, the partition and, when the job names a data file, its
 * rows as arrays.  New reference, or NULL with an exception. */
PyObject *embed_context(PyObject *bridge, PyObject *vector,
                        const struct aia_context *ctx,
                        const struct aia_partition *part);

/* The class's constructor arguments, a dict of every parameter but class,
 * by name.  New reference, or NULL with an exception. */
PyObject *embed_kwargs(const struct aia_value *args);

/* A cache of views of buffers the runtime hands over again and again (a
 * query, each worker's answer): one view per buffer, made the first time
 * (zeroed to start; embed_views_free drops them). */
struct embed_views {
    PyObject *dict; /* the buffer's address -> its view */
};

/* The view of n items at p (embed_array's arguments), from the cache or
 * made and kept there.  A borrowed reference, valid until the next call
 * on the same cache; NULL with an exception. */
PyObject *embed_view(struct embed_views *v, PyObject *vector, const void *p,
                     size_t n, size_t item, const char *code, int writable);
void embed_views_free(struct embed_views *v);

/* obj's attribute name (new reference); NULL when it has none and need
 * is 0 (no exception), or with an exception. */
PyObject *embed_method(PyObject *obj, const char *name, int need);

/* A size from o, a number or a method called without arguments (the
 * reference to o is taken).  0, or -1 with an exception. */
int embed_size(PyObject *o, size_t *out);

/* A float from r, a call's result (the reference is taken): 0, or -1 with
 * err naming what. */
int embed_double(PyObject *r, const char *what, double *out,
                 struct aia_error *err);

/* The aiarun.bridge module (new reference) and its vector and put
 * helpers (new references), or NULL with err set, saying that the python
 * who (problem, algorithm) needs the package. */
PyObject *embed_bridge(const char *who, PyObject **vector, PyObject **put,
                       struct aia_error *err);

#endif
