/* host_rules.h - the rules of the services table that the runtime and
 * plugins must agree on, or that a fix should reach plugins already built:
 * which rows a part holds, a step derived from L and the words that
 * explain it, a gradient table's age factor.  One copy, compiled into the
 * runtime's host (host.c) and into the test host that plugin authors link
 * (testhost.c), so that a plugin tested without the runtime meets the
 * very rules it meets in a run. */
#ifndef AIARUN_HOST_RULES_H
#define AIARUN_HOST_RULES_H

#include <aiarun/aiarun.h>

/* The members of struct aia_host of the same names. */
size_t host_rules_partition_first(const struct aia_host *host,
                                  const struct aia_partition *part, size_t m,
                                  int p);
int host_rules_partition_owner(const struct aia_host *host,
                               const struct aia_partition *part, size_t m,
                               size_t r);
int host_rules_auto_step(const struct aia_host *host,
                         const struct aia_context *ctx,
                         const struct aia_value *v, double scale,
                         const char *rule, double *step, struct aia_error *err);
double host_rules_age_factor(const struct aia_host *host, double rows,
                             double age_rows, double recent_rows, double most);

/* What the plugins told the host, kept for the report (or a test): the
 * step a plugin derived (aia_note_step; NaN and "" before one) ... */
void host_rules_note_step(double step, const char *why);
double host_rules_step(const char **why);

/* ... and their report lines (aia_note), in the order their keys came.
 * host_rules_note_slot: the text buffer (*len bytes) of key's line, a new
 * one for a new key; NULL past the first HOST_RULES_NOTES keys.
 * host_rules_note: the i-th line and its key, NULL past the last. */
#define HOST_RULES_NOTES 8
char *host_rules_note_slot(const char *key, size_t *len);
const char *host_rules_note(int i, const char **key);

#endif
