/* job_outputs.c - a job's files checked before anything is read or
 * written: the data file a regular file (a FIFO would hang every rank in
 * open(), /dev/zero would be read without end), each output a regular
 * file or a new path, none the same file as another output or as an
 * input (the job file, the data and test files, plugins given by path):
 * by name, and by device and inode, since a hard link is another name
 * for the same bytes (`ln mine.csv hard.csv` made a history overwrite
 * its own data file).  The checkpoint's temporary (PATH.tmp) must be
 * something a write can replace: a folder there was found only when the
 * first checkpoint was written, at the end of the run. */
#include <config.h>

#include "job.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/util.h"
#include "data/data.h"
#include "job_keys.h"
#include "params.h"

/* Room for the output section's files (its rows marked JOB_OUTFILE). */
#define NOUT 16

/* The output section's rows that name a file the run writes, into
 * keys; returns how many, and *s the section. */
static size_t output_keys(const struct job_section **s,
                          const struct job_key **keys)
{
    size_t n = 0;
    for (*s = job_sections; (*s)->path && strcmp((*s)->path, "output") != 0;
         (*s)++)
        ;
    for (const struct job_key *k = (*s)->keys; k && k->p.name && n < NOUT; k++)
        if (k->flags & JOB_OUTFILE)
            keys[n++] = k;
    return n;
}

/* The file path names, spelled one way: the real path of its folder and
 * its own name (so a new file is named too), or path itself when its
 * folder cannot be resolved.  malloc'd, NULL when out of memory. */
static char *canonical(const char *path)
{
    char *real = realpath(path, NULL);
    if (real)
        return real;
    char *dir = util_dirname(path);
    char *rdir = dir ? realpath(dir, NULL) : NULL;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *out = rdir ? util_join(rdir, base) : strdup(path);
    free(dir);
    free(rdir);
    return out;
}

/* What a file that is not regular is, for messages. */
static const char *kind(mode_t mode)
{
    return S_ISDIR(mode)                    ? "a folder"
           : S_ISFIFO(mode)                 ? "a FIFO"
           : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
                                            : "not a regular file";
}

static const char *output_path(const struct job *job,
                               const struct job_section *s,
                               const struct job_key *k)
{
    return *(const char *const *)((const char *)job + s->base + k->off);
}

/* The place of output.KEY in the job file, into where. */
static const char *place(const struct job *job, const char *key, char *where,
                         size_t len)
{
    const struct mnode *sec = mnode_get(job->m->root, "output", NULL);
    return params_where(where, len, job->m->path, mnode_get(sec, key, NULL));
}

/* The files a run reads, by the key that names them. */
#define NIN 32
struct input {
    char key[160]; /* "the job file", "problem.data.path" */
    char *name;    /* canonical(path), malloc'd */
    struct stat st;
    int exists;
};

static int add_input(struct input *in, size_t *n, const char *key,
                     const char *path)
{
    if (!path || *n == NIN)
        return 0;
    struct input *i = &in[(*n)++];
    snprintf(i->key, sizeof i->key, "%s", key);
    i->exists = stat(path, &i->st) == 0;
    return (i->name = canonical(path)) ? 0 : -1;
}

/* A plugin given by a path, resolved as the loader resolves it. */
static int add_plugin(struct input *in, size_t *n, const struct job *job,
                      const struct job_plugin *pl)
{
    if (!pl->spec || !strchr(pl->spec, '/'))
        return 0;
    char *path = pl->spec[0] == '/' || !job->dir
                     ? strdup(pl->spec)
                     : util_join(job->dir, pl->spec);
    if (!path)
        return -1;
    int rc = add_input(in, n, pl->name, path);
    free(path);
    return rc;
}

/* The plugin python: a section whose plugin is `python` or a path to
 * python.so. */
static int is_python(const struct job_plugin *pl)
{
    if (!pl->spec)
        return 0;
    const char *base = strrchr(pl->spec, '/');
    base = base ? base + 1 : pl->spec;
    return strcmp(base, "python") == 0 || strcmp(base, "python.so") == 0;
}

/* The files in dir that the import of module (dots as folders) may read:
 * MODULE.py and MODULE/__init__.py, those that exist. */
static int add_module_in(struct input *in, size_t *n, const char *key,
                         const char *dir, const char *module)
{
    static const char *const forms[] = {".py", "/__init__.py"};
    for (size_t f = 0; f < 2; f++) {
        char path[PATH_MAX];
        struct stat st;
        int len = snprintf(path, sizeof path, "%s/%s%s", dir, module, forms[f]);
        if (len < 0 || (size_t)len >= sizeof path || stat(path, &st) != 0)
            continue;
        if (add_input(in, n, key, path) < 0)
            return -1;
    }
    return 0;
}

/* A python class's module (class: MODULE:Class) is the user's source
 * and an input: the embedded interpreter imports it from the job file's
 * folder, AIARUN_PYTHONPATH or PYTHONPATH (python_embed.c), so each file
 * there that it may be is one.  A history written into it once replaced
 * the user's class with rows, exit 0. */
static int add_python_module(struct input *in, size_t *n, const struct job *job,
                             const struct job_plugin *pl)
{
    const struct mnode *c =
        is_python(pl) ? mnode_get(pl->node, "class", NULL) : NULL;
    if (!c || c->kind != MNODE_SCALAR || !c->text)
        return 0;
    const char *colon = strchr(c->text, ':');
    size_t len = colon ? (size_t)(colon - c->text) : strlen(c->text);
    if (len == 0 || len >= 256)
        return 0;
    char module[256], key[160];
    memcpy(module, c->text, len);
    module[len] = '\0';
    for (char *p = module; *p; p++)
        if (*p == '.')
            *p = '/';
    snprintf(key, sizeof key, "%s.class's module %.*s", pl->name, (int)len,
             c->text);
    if (add_module_in(in, n, key, job->dir ? job->dir : ".", module) < 0)
        return -1;
    static const char *const vars[] = {"AIARUN_PYTHONPATH", "PYTHONPATH"};
    for (size_t v = 0; v < 2; v++) {
        const char *env = getenv(vars[v]);
        char *dirs = env ? strdup(env) : NULL, *save = NULL;
        if (env && !dirs)
            return -1;
        int rc = 0;
        for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && rc == 0;
             d = strtok_r(NULL, ":", &save))
            rc = add_module_in(in, n, key, d, module);
        free(dirs);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int data_inputs(struct input *in, size_t *n, const struct job_data *d,
                       const char *key, const char *tkey)
{
    if (add_input(in, n, key, d->path) < 0)
        return -1;
    /* an HDF5 file's targets are a dataset of it, not a file */
    if (d->format != DATA_HDF5 && add_input(in, n, tkey, d->targets) < 0)
        return -1;
    return 0;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* PATH.tmp, which the checkpoint's write replaces (a stale file or link
 * there is removed, never written through): anything else is refused. */
static int check_temporary(const struct job *job, const char *path,
                           struct aia_error *err)
{
    char where[256], shown[200];
    size_t len = strlen(path);
    char *tmp = malloc(len + 5);
    if (!tmp)
        return aia_seterr(err, "out of memory");
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".tmp", 5);
    struct stat st;
    int rc = 0;
    if (lstat(tmp, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        rc = aia_seterr(err,
                        "%s: output.checkpoint: '%s' is %s: the checkpoint "
                        "is written there first, then renamed; remove it",
                        place(job, "checkpoint", where, sizeof where),
                        util_shown(shown, sizeof shown, tmp, 160),
                        kind(st.st_mode));
    free(tmp);
    return rc;
}

int job_check_outputs(const struct job *job, struct aia_error *err)
{
    char *name[NOUT] = {NULL};
    struct stat ost[NOUT];
    int oexists[NOUT] = {0};
    struct input in[NIN];
    size_t nin = 0;
    char where[256], shown[200];
    int rc = 0;
    const struct job_section *s;
    const struct job_key *outputs[NOUT];
    size_t nout = output_keys(&s, outputs);
    struct stat dst;
    if (job->data.path && stat(job->data.path, &dst) == 0 &&
        !S_ISREG(dst.st_mode)) {
        params_where(where, sizeof where, job->m->path, job->data.key);
        return aia_seterr(err,
                          "%s: problem.data: '%s' is %s: data files are "
                          "regular files",
                          where,
                          util_shown(shown, sizeof shown, job->data.path, 160),
                          kind(dst.st_mode));
    }
    memset(in, 0, sizeof in);
    if (add_input(in, &nin, "the job file", job->m->path) < 0 ||
        data_inputs(in, &nin, &job->data, "problem.data.path",
                    "problem.data.targets") < 0 ||
        data_inputs(in, &nin, &job->test, "problem.test.path",
                    "problem.test.targets") < 0 ||
        add_plugin(in, &nin, job, &job->algorithm) < 0 ||
        add_plugin(in, &nin, job, &job->problem) < 0 ||
        add_plugin(in, &nin, job, &job->wait) < 0 ||
        add_python_module(in, &nin, job, &job->algorithm) < 0 ||
        add_python_module(in, &nin, job, &job->problem) < 0) {
        rc = aia_seterr(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nout && rc == 0; i++) {
        const char *path = output_path(job, s, outputs[i]);
        const char *key = outputs[i]->p.name;
        if (!path)
            continue;
        place(job, key, where, sizeof where);
        util_shown(shown, sizeof shown, path, 160);
        struct stat *st = &ost[i];
        oexists[i] = stat(path, st) == 0;
        if (oexists[i] && !S_ISREG(st->st_mode)) {
            rc = aia_seterr(err,
                            "%s: output.%s: '%s' is %s: outputs are "
                            "regular files or new paths",
                            where, key, shown, kind(st->st_mode));
            break;
        }
        if (!(name[i] = canonical(path))) {
            rc = aia_seterr(err, "out of memory");
            break;
        }
        for (size_t j = 0; j < i && rc == 0; j++)
            if (name[j] &&
                (strcmp(name[i], name[j]) == 0 ||
                 (oexists[i] && oexists[j] && same_file(st, &ost[j]))))
                rc = aia_seterr(err,
                                "%s: output.%s: '%s' is also "
                                "output.%s%s: give each output its "
                                "own file",
                                where, key, shown, outputs[j]->p.name,
                                strcmp(name[i], name[j]) ? " (a hard link)"
                                                         : "");
        for (size_t j = 0; j < nin && rc == 0; j++)
            if (strcmp(name[i], in[j].name) == 0 ||
                (oexists[i] && in[j].exists && same_file(st, &in[j].st)))
                rc = aia_seterr(err,
                                "%s: output.%s: '%s' is %s%s, an input: "
                                "it would be overwritten",
                                where, key, shown, in[j].key,
                                strcmp(name[i], in[j].name) ? " (a hard link)"
                                                            : "");
        if (rc == 0 && strcmp(key, "checkpoint") == 0)
            rc = check_temporary(job, path, err);
    }
out:
    for (size_t i = 0; i < NOUT; i++)
        free(name[i]);
    for (size_t i = 0; i < nin; i++)
        free(in[i].name);
    return rc;
}
