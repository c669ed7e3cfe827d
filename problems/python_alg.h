/* python_alg.h - the python algorithm's context (python_algctx.c), for
 * python_alg.c: shared by the plugin's files only, never exported. */
#ifndef AIARUN_PYTHON_ALG_H
#define AIARUN_PYTHON_ALG_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <aiarun/aiarun.h>

/* The context handed to the class's create(): an
 * aiarun.bridge.AlgorithmContext with ctx's facts and the functions
 * bound to ctx's problem (new reference), and in *link what binds them
 * (new reference, for algctx_close).  NULL with an exception. */
PyObject *algctx_new(PyObject *bridge, const struct aia_context *ctx,
                     PyObject **link);

/* The algorithm is destroyed: the functions refuse to run from now on
 * (the problem they call may be closed).  Takes no reference. */
void algctx_close(PyObject *link);

#endif
