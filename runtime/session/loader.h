/* loader.h - finding, opening and checking plugins.
 *
 * A plugin is named by a path (it contains a '/') or by a bare name, which
 * is searched as NAME.so in AIARUN_PLUGIN_PATH (colon-separated), then the
 * job file's folder, then the installed plugin folder.  A relative path is
 * taken from the job file's folder.  The descriptor is checked before use:
 * ABI number first, then size, kind, name, parameter table and the kind's
 * required functions.
 */
#ifndef AIARUN_LOADER_H
#define AIARUN_LOADER_H

#include <stdio.h>

#include <aiarun/aiarun.h>

struct plugin {
    int kind;   /* enum aia_kind */
    char *path; /* the file, or "built-in" */
    void *dl;   /* dlopen handle; NULL for built-ins */
    const struct aia_plugin_header *h; /* the descriptor */
};

/* Open the plugin spec of the given kind.  jobdir may be NULL.  Returns a
 * plugin owned by the caller (loader_close), or NULL with err naming the
 * file (or the folders searched) and the reason. */
struct plugin *loader_open(const char *spec, int kind, const char *jobdir,
                           struct aia_error *err);

void loader_close(struct plugin *p);

/* Whether spec can name a plugin of kind at all, before any file is
 * looked at: a path (with a '/') of printable characters shorter than
 * PATH_MAX, or a plain name (letters, digits, '_', '-', at most 64, with
 * or without ".so").  0, or -1 with err (loader_open checks it first). */
int loader_spec_check(const char *spec, int kind, struct aia_error *err);

/* Check a descriptor found in path under the symbol of kind.  name, when
 * not NULL, is the name the descriptor must carry.  0 or -1. */
int loader_check(const struct aia_plugin_header *h, int kind,
                 const char *name, const char *path, struct aia_error *err);

/* What an open instance (state) of problem p offers: in *what the
 * AIA_OFFER_* bits of the optional functions it may be asked (those the
 * descriptor has, narrowed by its offers function), in *metric_name its
 * metric's name (NULL without; the instance's storage).  0, or -1 when
 * the instance names its metric with what is not a name (err says so;
 * nothing is offered). */
int loader_offers(const struct aia_problem_plugin *p, void *state,
                  uint32_t *what, const char **metric_name,
                  struct aia_error *err);

/* 1 when instance state of p offers every function in what
 * (AIA_OFFER_*), else 0. */
int loader_offered(const struct aia_problem_plugin *p, void *state,
                   uint32_t what);

/* "algorithm", "problem", "wait condition". */
const char *loader_kind_name(int kind);

/* The descriptor symbol of a kind ("aia_algorithm_plugin"). */
const char *loader_symbol(int kind);

/* Print every plugin found in the search path (and the built-ins), with
 * kind, version, summary and parameters; broken files are listed with
 * their error.  Returns the number of plugins printed. */
int loader_list(FILE *out, const char *jobdir);

/* From now on, a dlopen that has not returned after seconds (a plugin
 * whose constructor never returns) ends the process with status, after
 * a line naming the file; 0: unbounded (under mpirun the set-up's
 * watchdog bounds it).  For the commands that load plugins and exit:
 * --list-plugins and --check. */
void loader_bound_loading(unsigned seconds, int status);

/* The installed plugin folder. */
const char *loader_plugindir(void);

#endif
