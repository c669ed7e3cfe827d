/* python_embed.h - the embedded CPython's services to the python problem
 * (python_embed.c): shared by the plugin's two files only, never exported
 * (the plugin exports its descriptor alone). */
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

#endif
