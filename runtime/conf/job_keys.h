/* job_keys.h - the job file's runtime sections, and how each key is bound
 * by name to its field of struct job (as nginx binds its directives).
 *
 * Adding a key: one line in its table in job_keys.c and, when it lands in
 * a field, one line in that section's fields in job_fields.c.  Adding a
 * section: its table here, one entry in job_sections (job.c).  A stop
 * rule brings its own key (proto_stop_rules, proto.c).
 */
#ifndef AIARUN_JOB_KEYS_H
#define AIARUN_JOB_KEYS_H

#include <stddef.h>
#include <stdio.h>

#include <aiarun/aiarun.h>

#include "manifest.h"

struct job;

/* A choice's value, by its name. */
struct job_name {
    const char *name;
    int value;
};

enum job_field_kind {
    JF_INT64,   /* int64_t */
    JF_INT,     /* int */
    JF_SIZE,    /* size_t */
    JF_DOUBLE,  /* double, times scale when scale is not 0 */
    JF_TEXT,    /* const char *, NULL for "" */
    JF_ENUM,    /* int, from names, then lookup */
    JF_CHAR,    /* char, from names */
    JF_INTS,    /* const int64_t *, NULL when empty; count at count_off */
    JF_DOUBLES, /* const double *, NULL when empty; count at count_off */
    JF_NODE,    /* const struct mnode *: where the key's value is */
};

/* One key bound to the field at off (offsetof(struct job, ...)). */
struct job_field {
    const char *key;
    enum job_field_kind kind;
    size_t off;
    size_t count_off;                /* JF_INTS, JF_DOUBLES */
    const struct job_name *names;    /* JF_ENUM, JF_CHAR */
    int (*lookup)(const char *name); /* JF_ENUM after names: -1 unknown */
    double scale;
};

enum job_section_kind {
    JS_PLAIN,      /* optional; absent: every key its default */
    JS_PLUGIN,     /* required; every key not in its table is the plugin's */
    JS_PLUGIN_OPT, /* a plugin section that may be absent */
    JS_PRESENT,    /* bound only when present (its keys may be required) */
};

/* A section: its keys, their fields, and a check of what the keys alone
 * cannot say (node is NULL when the section is absent). */
struct job_section {
    const char *path; /* dotted; "" for the top level */
    const struct aia_param *keys;
    enum job_section_kind kind;
    const struct job_field *fields;
    int (*check)(struct job *job, const struct mnode *node,
                 const struct mnode *key, const struct aia_value *v,
                 struct aia_error *err);
    const char *note; /* the reference's words above its table */
};

/* In job.c, ended by an entry whose path is NULL. */
extern const struct job_section job_sections[];

/* Fill what job_sections takes from registries (the stop rules' keys),
 * before it is read: job_load does; a reader of the tables alone calls
 * it first.  0, or -1 when a table has outgrown its room. */
int job_sections_init(void);

extern const struct aia_param job_keys_top[], job_keys_algorithm[],
    job_keys_problem[], job_keys_data[], job_keys_pool[], job_keys_codec[],
    job_keys_wait[], job_keys_stop[], job_keys_stragglers[], job_keys_fixed[],
    job_keys_random[], job_keys_markov[], job_keys_hang[], job_keys_corrupt[],
    job_keys_output[], job_keys_limits[];

/* Print the reference of the job file's runtime keys as roff, the
 * generated part of man/aiarun.5 (--job-reference=man). */
void job_reference_man(FILE *out);

#endif
