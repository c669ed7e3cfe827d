/* job_keys.h - the job file's runtime sections, one row per key.
 *
 * A row holds everything aiarun knows of a key, as nginx's ngx_command_t
 * does: its name, type, default, help and bounds (the check of the job
 * file and its reference at once), and how its value lands in the
 * section's own struct (a kind, an offsetof, a scale or a table of
 * names).  The loader's check tables, the binding, --job-reference and
 * the generated tables of man/aiarun.5 all come from the rows
 * (job_fields.c); nothing joins two tables by a key's name.
 *
 * Adding a key: one row in its section's table (job_keys.c, or the table
 * of the module that owns the section).  Adding a section: its rows, and
 * one entry in job_sections (job.c) with the offset of its struct in
 * struct job.  A stop rule's key is a row of the stop section bound to
 * its field of struct proto_limits.
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
    JF_NONE,    /* checked only: a section's check reads it */
    JF_INT64,   /* int64_t */
    JF_INT,     /* int */
    JF_SIZE,    /* size_t */
    JF_DOUBLE,  /* double, times scale when scale is not 0 */
    JF_TEXT,    /* const char *, NULL for "" */
    JF_ENUM,    /* int, from names, then lookup */
    JF_CHAR,    /* char, from names */
    JF_INTS,    /* const int64_t *, NULL when empty; count at count_off */
    JF_DOUBLES, /* const double *, NULL when empty; count at count_off */
};

/* One key of a section.  Offsets are into the section's struct (struct
 * job_section's base). */
struct job_key {
    struct aia_param p; /* name, type, default, help, choices, bounds */
    enum job_field_kind kind;
    size_t off;
    size_t count_off;                /* JF_INTS, JF_DOUBLES */
    const struct job_name *names;    /* JF_ENUM, JF_CHAR */
    int (*lookup)(const char *name); /* JF_ENUM after names: -1 unknown */
    double scale;
    /* where the key's node is kept for messages, plus one (0: nowhere):
     * write it with JOB_NODE */
    size_t node_at;
    unsigned flags; /* JOB_OUTFILE, JOB_DISTINCT */
};

/* A JF_TEXT row that names a file the run writes: job_check_outputs
 * checks each such file before the run (a regular file or a new path,
 * neither another output nor an input). */
#define JOB_OUTFILE 1u

/* A JF_INTS row of ranks: a rank listed twice is refused (it would be
 * counted once, or take the first of its per-rank values). */
#define JOB_DISTINCT 2u

/* A row's initializer for node_at: the key's node kept at offset off. */
#define JOB_NODE(off) .node_at = (off) + 1

/* The row that ends a section's table. */
#define JOB_KEYS_END                                                           \
    {                                                                          \
        .p = {.name = NULL }                                                   \
    }

enum job_section_kind {
    JS_PLAIN,      /* optional; absent: every key its default */
    JS_PLUGIN,     /* required; every key not in its table is the plugin's */
    JS_PLUGIN_OPT, /* a plugin section that may be absent */
    JS_PRESENT,    /* bound only when present (its keys may be required) */
};

/* A section: its rows, the offset of its struct in struct job, and a
 * check of what the keys alone cannot say (node is NULL when the section
 * is absent). */
struct job_section {
    const char *path;           /* dotted; "" for the top level */
    const struct job_key *keys; /* ended by a row whose name is NULL */
    enum job_section_kind kind;
    size_t base;
    int (*check)(struct job *job, const struct mnode *node,
                 const struct mnode *key, const struct aia_value *v,
                 struct aia_error *err);
    const char *note; /* the reference's words above its table */
};

/* In job.c, ended by an entry whose path is NULL. */
extern const struct job_section job_sections[];

/* Each section's rows: job_keys.c, and the simulator's two (latency.c). */
extern const struct job_key job_keys_top[], job_keys_algorithm[],
    job_keys_problem[], job_keys_data[], job_keys_pool[], job_keys_codec[],
    job_keys_wait[], job_keys_stop[], job_keys_stragglers[], job_keys_fixed[],
    job_keys_random[], job_keys_markov[], job_keys_hang[], job_keys_corrupt[],
    job_keys_slow[],
    job_keys_output[], job_keys_limits[];

/* Derive from the rows what the loader reads as tables (each section's
 * struct aia_param table and the keys the runtime reserves in it), after
 * the registries the rows name are filled (codecs, data formats).  Later
 * calls do nothing.  0, or -1 when the room for them is outgrown (a
 * build defect: t/params checks it). */
int job_sections_init(void);

/* The check table of section s, in its rows' order, ended by a NULL name
 * (job_sections_init first). */
const struct aia_param *job_section_params(const struct job_section *s);

/* The names the runtime reads in section s, its sub-sections' included,
 * NULL-terminated: the keys a plugin section's plugin may not take, and
 * those a plain section passes to its sub-sections. */
const char *const *job_section_reserved(const struct job_section *s);

/* Store the bound values v of section s (its mapping node, for messages)
 * into its struct in job.  0, or -1 with err naming the file, line and
 * key of a choice this aiarun does not know. */
int job_keys_store(struct job *job, const struct job_section *s,
                   const struct mnode *node, const struct aia_value *v,
                   struct aia_error *err);

/* Print the reference of the job file's runtime keys as roff, the
 * generated part of man/aiarun.5 (--job-reference=man). */
void job_reference_man(FILE *out);

#endif
