/* builtin.h - plugins compiled into the runtime. */
#ifndef AIARUN_BUILTIN_H
#define AIARUN_BUILTIN_H

#include <aiarun/aiarun.h>

/* Every built-in descriptor, NULL-terminated. */
extern const struct aia_plugin_header *const builtin_all[];

/* The built-in named name of that kind, or NULL. */
const struct aia_plugin_header *builtin_find(const char *name, int kind);

/* The standard wait condition (wait_standard.c). */
extern const struct aia_wait_plugin builtin_wait_standard;

#endif
