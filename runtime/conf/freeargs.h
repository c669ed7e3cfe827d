/* freeargs.h - the parameters of a plugin that takes any key
 * (AIA_PARAMS_OPEN): its table's, then every other key of its section.
 */
#ifndef AIARUN_FREEARGS_H
#define AIARUN_FREEARGS_H

#include <aiarun/aiarun.h>

#include "job.h"
#include "session/loader.h"

/* Bind section s of job to plugin p's table like job_plugin_args, then
 * append a value for each other key that is not the runtime's: plain
 * scalars typed by their spelling (int, number, bool, else string),
 * quoted ones as strings, lists of numbers as AIA_INTS or AIA_DOUBLES.
 * Names point into the job's manifest, so the array must be freed
 * (params_free) before the job.  NULL with err naming file, line and key
 * for a mapping or a list that is not all numbers. */
struct aia_value *freeargs_bind(const struct job *job,
                                const struct job_plugin *s,
                                const struct plugin *p, struct aia_error *err);

#endif
