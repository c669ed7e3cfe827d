/* builtin.c - the table of plugins compiled into the runtime. */
#include <config.h>

#include "builtin.h"

#include <string.h>

const struct aia_plugin_header *const builtin_all[] = {
    &builtin_wait_standard.h,
    NULL,
};

const struct aia_plugin_header *builtin_find(const char *name, int kind)
{
    for (size_t i = 0; builtin_all[i]; i++)
        if ((int)builtin_all[i]->kind == kind &&
            strcmp(builtin_all[i]->name, name) == 0)
            return builtin_all[i];
    return NULL;
}
