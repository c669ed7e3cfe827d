/* job_fields.c - what the rows of job_keys.h generate: each section's
 * check table (struct aia_param, for params_bind) and the keys the runtime
 * reserves in it, the binding that stores a section's checked values into
 * its struct by the rows' offsets, and the job file's reference
 * (--job-reference, man/aiarun.5's tables). */
#include <config.h>

#include "job_keys.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "data/data.h"
#include "job.h"
#include "params.h"

/* Room for the derived tables: every section's rows and its end, and
 * every section's reserved names and their end.  job_sections_init fails
 * (and t/params with it) when the rows outgrow it. */
#define SECTIONS_MAX 32
#define PARAMS_MAX 256
#define RESERVED_MAX 256

static struct aia_param params[PARAMS_MAX];
static const char *reserved[RESERVED_MAX];
static const struct aia_param *section_params[SECTIONS_MAX];
static const char *const *section_reserved[SECTIONS_MAX];

/* Whether section t is a direct sub-section of s; *name: its last part. */
static int child_of(const struct job_section *t, const struct job_section *s,
                    const char **name)
{
    size_t plen = strlen(s->path);
    const char *rest = t->path + plen + (plen > 0);
    *name = rest;
    return t != s && strncmp(t->path, s->path, plen) == 0 &&
           (plen == 0 || t->path[plen] == '.') && *rest && !strchr(rest, '.');
}

int job_sections_init(void)
{
    static int done;
    size_t np = 0, nr = 0, i = 0;
    if (done)
        return 0;
    /* the rows point into these registries' choices and help */
    codec_choices_init();
    data_formats_init();
    for (const struct job_section *s = job_sections; s->path; s++, i++) {
        if (i >= SECTIONS_MAX)
            return -1;
        section_params[i] = &params[np];
        section_reserved[i] = &reserved[nr];
        for (const struct job_key *k = s->keys; k && k->p.name; k++) {
            if (np >= PARAMS_MAX - 1 || nr >= RESERVED_MAX - 1)
                return -1;
            params[np++] = k->p;
            reserved[nr++] = k->p.name;
        }
        for (const struct job_section *t = job_sections; t->path; t++) {
            const char *name;
            if (!child_of(t, s, &name))
                continue;
            if (nr >= RESERVED_MAX - 1)
                return -1;
            reserved[nr++] = name;
        }
        if (np >= PARAMS_MAX || nr >= RESERVED_MAX)
            return -1;
        params[np++] = (struct aia_param){.name = NULL};
        reserved[nr++] = NULL;
    }
    done = 1;
    return 0;
}

const struct aia_param *job_section_params(const struct job_section *s)
{
    return section_params[s - job_sections];
}

const char *const *job_section_reserved(const struct job_section *s)
{
    return section_reserved[s - job_sections];
}

static int name_value(const struct job_key *k, const char *name, int *out)
{
    for (const struct job_name *n = k->names; n && n->name; n++)
        if (strcmp(n->name, name) == 0)
            return *out = n->value, 0;
    if (k->lookup && (*out = k->lookup(name)) >= 0)
        return 0;
    return -1;
}

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A JOB_DISTINCT list (at n) holding a rank twice: refused at the
 * second, naming the section and key.  Sorted, so that a list of 10^5
 * ranks costs no 10^10 comparisons. */
static int twice(const struct job *job, const struct job_section *s,
                 const struct job_key *k, const struct mnode *n,
                 const struct aia_value *a, struct aia_error *err)
{
    if (a->n < 2)
        return 0;
    int64_t *sorted = malloc(a->n * sizeof *sorted);
    if (!sorted)
        return aia_seterr(err, "%s.%s: out of memory", s->path, k->p.name);
    memcpy(sorted, a->ints, a->n * sizeof *sorted);
    qsort(sorted, a->n, sizeof *sorted, cmp_int64);
    size_t d = 1;
    while (d < a->n && sorted[d] != sorted[d - 1])
        d++;
    int found = d < a->n;
    int64_t rank = found ? sorted[d] : 0;
    free(sorted);
    if (!found)
        return 0;
    size_t j = 0, seen = 0; /* the rank's second place in the list */
    while (seen < 2)
        seen += a->ints[j++] == rank;
    j--;
    char where[256];
    const struct mnode *at =
        n && n->kind == MNODE_SEQ && j < n->n ? n->item[j] : n;
    params_where(where, sizeof where, job->m->path, at);
    return aia_seterr(err, "%s: %s.%s: rank %lld is listed twice", where,
                      s->path, k->p.name, (long long)rank);
}

int job_keys_store(struct job *job, const struct job_section *s,
                   const struct mnode *node, const struct aia_value *v,
                   struct aia_error *err)
{
    char *base = (char *)job + s->base;
    size_t i = 0;
    for (const struct job_key *k = s->keys; k && k->p.name; k++, i++) {
        /* params_bind's values are in the rows' order */
        const struct aia_value *a = &v[i];
        void *p = base + k->off;
        int e;
        if (k->node_at)
            *(const struct mnode **)(base + k->node_at - 1) =
                mnode_get(node, k->p.name, NULL);
        switch (k->kind) {
        case JF_NONE:
            break;
        case JF_INT64:
            *(int64_t *)p = a->i;
            break;
        case JF_INT:
            *(int *)p = (int)a->i;
            break;
        case JF_SIZE:
            *(size_t *)p = (size_t)a->i;
            break;
        case JF_DOUBLE:
            *(double *)p = k->scale ? a->d * k->scale : a->d;
            break;
        case JF_TEXT:
            *(const char **)p = a->s && *a->s ? a->s : NULL;
            break;
        case JF_ENUM:
        case JF_CHAR:
            if (name_value(k, a->s, &e) < 0) {
                char where[256];
                params_where(where, sizeof where, job->m->path,
                             mnode_get(node, k->p.name, NULL));
                return aia_seterr(err,
                                  "%s: %s.%s: %s: not known to this "
                                  "aiarun",
                                  where, s->path, k->p.name, a->s);
            }
            if (k->kind == JF_CHAR)
                *(char *)p = (char)e;
            else
                *(int *)p = e;
            break;
        case JF_INTS:
            if ((k->flags & JOB_DISTINCT) &&
                twice(job, s, k, mnode_get(node, k->p.name, NULL), a, err) < 0)
                return -1;
            *(const int64_t **)p = a->n ? a->ints : NULL;
            *(size_t *)(base + k->count_off) = a->n;
            break;
        case JF_DOUBLES:
            *(const double **)p = a->n ? a->doubles : NULL;
            *(size_t *)(base + k->count_off) = a->n;
            break;
        }
    }
    return 0;
}

static void reference_table(FILE *out, const char *title,
                            const struct aia_param *table, const char *note)
{
    fprintf(out, "\n#### `%s`\n\n", title);
    if (note)
        fprintf(out, "%s\n\n", note);
    fprintf(out, "| key | type | default | meaning |\n"
                 "|---|---|---|---|\n");
    for (const struct aia_param *p = table; p->name; p++) {
        char type[128], range[64];
        if (p->type == AIA_ENUM) {
            /* '|' would end the table's cell */
            size_t k = 0;
            for (const char *c = p->choices; *c && k < sizeof type - 3; c++) {
                type[k++] = *c == '|' ? ',' : *c;
                if (*c == '|')
                    type[k++] = ' ';
            }
            type[k] = '\0';
        } else {
            snprintf(type, sizeof type, "%s", params_type_name(p->type));
        }
        params_range(range, sizeof range, p);
        fprintf(out, "| `%s` | %s | %s | %s%s%s%s |\n", p->name, type,
                p->def ? p->def : "required", p->help, *range ? " (" : "",
                range, *range ? ")" : "");
    }
}

/* man_text: TEXT as roff input: backslashes and hyphens escaped, a
 * leading '.' or quote guarded, `code` set in bold. */
static void man_text(FILE *out, const char *text)
{
    int bold = 0;
    if (*text == '.' || *text == '\'')
        fputs("\\&", out);
    for (const char *c = text; *c; c++) {
        if (*c == '`') {
            fputs(bold ? "\\fR" : "\\fB", out);
            bold = !bold;
        } else if (*c == '\\') {
            fputs("\\e", out);
        } else if (*c == '-') {
            fputs("\\-", out);
        } else {
            fputc(*c, out);
        }
    }
    if (bold)
        fputs("\\fR", out);
}

/* man_table: one section's keys as a roff subsection of tagged
 * paragraphs, for man/aiarun.5. */
static void man_table(FILE *out, const char *title,
                      const struct aia_param *table, const char *note)
{
    fprintf(out, ".SS \"%s\"\n", title);
    if (note) {
        man_text(out, note);
        fputc('\n', out);
    }
    for (const struct aia_param *p = table; p->name; p++) {
        char range[64];
        params_range(range, sizeof range, p);
        fputs(".TP\n\\fB", out);
        man_text(out, p->name);
        fputs("\\fR (", out);
        man_text(out,
                 p->type == AIA_ENUM ? p->choices : params_type_name(p->type));
        fputs(p->def ? "; default " : "; required", out);
        if (p->def)
            man_text(out, p->def);
        fputs(")\n", out);
        man_text(out, p->help);
        if (*range) {
            fputs(" (", out);
            man_text(out, range);
            fputc(')', out);
        }
        fputc('\n', out);
    }
}

void job_reference(FILE *out)
{
    job_sections_init();
    for (const struct job_section *s = job_sections; s->path; s++)
        reference_table(out, *s->path ? s->path : "top level",
                        job_section_params(s), s->note);
}

void job_reference_man(FILE *out)
{
    job_sections_init();
    for (const struct job_section *s = job_sections; s->path; s++)
        man_table(out, *s->path ? s->path : "top level", job_section_params(s),
                  s->note);
}
