/* params.h - job-file sections checked against aia_param tables.
 *
 * The runtime's own sections and every plugin's parameters are described
 * by the same struct aia_param tables, bound to values here, and printed
 * from here for --list-plugins and the job-file reference.
 */
#ifndef AIARUN_PARAMS_H
#define AIARUN_PARAMS_H

#include <stdio.h>

#include <aiarun/aiarun.h>

#include "manifest.h"

/* As the skip of params_bind: every key not in the table is the
 * caller's (a plugin section, whose other keys are the plugin's). */
extern const char *const params_other_keys[];

/* Bind the keys of section (a mapping node, or NULL when the section is
 * absent) to table.  prefix names the section in messages ("algorithm"),
 * owner the plugin when there is one (NULL otherwise), and skip the keys
 * the caller reads itself (NULL-terminated, may be NULL).  Returns a value
 * array in table order, ended by an entry whose name is NULL, owned by the
 * caller (params_free); or NULL with err naming file, line and key. */
struct aia_value *params_bind(const char *file, const char *prefix,
                              const struct mnode *section,
                              const struct mnode *section_key,
                              const struct aia_param *table,
                              const char *const *skip, const char *owner,
                              struct aia_error *err);

void params_free(struct aia_value *values);

/* Check a plugin's table: names present and unique, types known, enum
 * choices given, defaults valid for their type.  0 or -1. */
int params_check_table(const struct aia_param *table, const char *who,
                       struct aia_error *err);

/* Print a table, one parameter a line, each line starting with indent. */
void params_print(FILE *out, const struct aia_param *table,
                  const char *indent);

/* The bounds of p in words ("positive", "at least 1", "0 to 10"), or ""
 * when it has none. */
const char *params_range(char *buf, size_t len, const struct aia_param *p);

/* The name of a type as the job-file reference writes it. */
const char *params_type_name(enum aia_type type);

/* Whether s spells a boolean (true/yes/on, false/no/off, any case): 1
 * with *out 1 or 0, else 0 and *out untouched. */
int params_bool(const char *s, int64_t *out);

/* "file:line:col" of node n into buf: "command line (-o)" for overrides
 * (line 0), "file: default value" for defaults (line < 0), "file" when n
 * is NULL. */
const char *params_where(char *buf, size_t len, const char *file,
                         const struct mnode *n);

#endif
