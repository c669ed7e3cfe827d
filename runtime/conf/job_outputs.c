/* job_outputs.c - a job's files checked before anything is read or
 * written: the data file a regular file (a FIFO would hang every rank in
 * open(), /dev/zero would be read without end), each output a regular
 * file or a new path, none the same file as another output or as an
 * input (the job file, the data file). */
#include <config.h>

#include "job.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/util.h"
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

int job_check_outputs(const struct job *job, struct aia_error *err)
{
    char *name[NOUT] = {NULL}, *in[2] = {NULL, NULL};
    const char *inkey[2] = {"the job file", "problem.data.path"};
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
    in[0] = canonical(job->m->path);
    if (job->data.path)
        in[1] = canonical(job->data.path);
    for (size_t i = 0; i < nout && rc == 0; i++) {
        const char *path = output_path(job, s, outputs[i]);
        const char *key = outputs[i]->p.name;
        if (!path)
            continue;
        place(job, key, where, sizeof where);
        util_shown(shown, sizeof shown, path, 160);
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            rc = aia_seterr(err,
                            "%s: output.%s: '%s' is %s: outputs are "
                            "regular files or new paths",
                            where, key, shown, kind(st.st_mode));
            break;
        }
        if (!(name[i] = canonical(path))) {
            rc = aia_seterr(err, "out of memory");
            break;
        }
        for (size_t j = 0; j < i && rc == 0; j++)
            if (name[j] && strcmp(name[i], name[j]) == 0)
                rc = aia_seterr(err,
                                "%s: output.%s: '%s' is also "
                                "output.%s: give each output its "
                                "own file",
                                where, key, shown, outputs[j]->p.name);
        for (size_t j = 0; j < 2 && rc == 0; j++)
            if (in[j] && strcmp(name[i], in[j]) == 0)
                rc = aia_seterr(err,
                                "%s: output.%s: '%s' is %s, an input: "
                                "it would be overwritten",
                                where, key, shown, inkey[j]);
    }
    for (size_t i = 0; i < NOUT; i++)
        free(name[i]);
    free(in[0]);
    free(in[1]);
    return rc;
}
