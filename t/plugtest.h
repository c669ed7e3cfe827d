/* plugtest.h - load a plugin through the real loader for a unit test. */
#ifndef AIARUN_PLUGTEST_H
#define AIARUN_PLUGTEST_H

#include <aiarun/aiarun.h>

#include "session/loader.h"

struct plugtest {
    struct plugin *p;
    struct aia_value *args;
};

/* Load the plugin name of kind from AIARUN_PLUGIN_PATH and bind its
 * parameters from a YAML mapping written inline ("{rows: 20}").  Bails
 * out of the test run on failure. */
void plugtest_load(struct plugtest *t, const char *name, int kind,
                   const char *yaml);

void plugtest_free(struct plugtest *t);

/* A context for role with a stub host (the runtime's rules, its log in
 * TAP comments). */
struct aia_context plugtest_ctx(const struct aia_value *args, int role,
                                int rank, int nworkers, uint64_t seed);

#endif
