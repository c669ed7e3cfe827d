/* job_fields.h - each runtime key of a job file bound to its field of
 * struct job (job_fields.c): one table of struct job_field per section,
 * the binder, and the stop section's tables derived from the stop rules.
 */
#ifndef AIARUN_JOB_FIELDS_H
#define AIARUN_JOB_FIELDS_H

#include <aiarun/aiarun.h>

#include "job.h"
#include "job_keys.h"
#include "manifest.h"

/* Each section's fields, ended by an entry whose key is NULL. */
extern const struct job_field job_fields_top[], job_fields_problem[],
    job_fields_data[], job_fields_test[], job_fields_pool[], job_fields_codec[],
    job_fields_output[], job_fields_limits[], job_fields_stragglers[],
    job_fields_fixed[], job_fields_random[], job_fields_markov[],
    job_fields_hang[], job_fields_corrupt[], job_fields_simulate[],
    job_fields_dsag[];

/* The stop section's keys and fields: each stop rule's key
 * (proto_stop_rules), then job_keys_stop's.  Filled by job_fields_init. */
extern struct aia_param job_fields_stop_keys[];
extern struct job_field job_fields_stop[];

/* Fill the tables derived from registries (the stop section's) before
 * job_sections is read; later calls do nothing.  0, or -1 when a table
 * has outgrown its room (a build defect). */
int job_fields_init(void);

/* Store the bound values v of a section's fields (its dotted path, its
 * mapping node, for messages) into job.  0, or -1 with err naming the
 * file, line and key of a choice this aiarun does not know. */
int job_fields_store(struct job *job, const char *path,
                     const struct mnode *node, const struct job_field *fields,
                     const struct aia_value *v, struct aia_error *err);

#endif
