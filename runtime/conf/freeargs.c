/* freeargs.c - bind the keys of a plugin section that no table declares.
 *
 * A bridge to another language (the python problem) cannot list its
 * parameters: they are the constructor's of a class named in the job.
 * Such a plugin sets AIA_PARAMS_OPEN; its section's other keys reach it
 * typed by their YAML spelling, so that `rows: 100` arrives as an int and
 * `name: "100"` as text, as the other language would read them.
 */
#include <config.h>

#include "freeargs.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "params.h"
#include "core/util.h"

static int is_reserved(const struct job_plugin *s, const struct aia_param *t,
                       const char *key)
{
    for (const char *const *r = s->reserved; r && *r; r++)
        if (strcmp(*r, key) == 0)
            return 1;
    for (; t && t->name; t++)
        if (strcmp(t->name, key) == 0)
            return 1;
    return 0;
}

/* One scalar, typed by its spelling. */
static int scalar(const struct mnode *n, struct aia_value *v)
{
    int64_t i;
    double d;
    if (n->plain && strchr(n->text, '.') == NULL &&
        strpbrk(n->text, "eE") == NULL && util_parse_int(n->text, &i)) {
        v->type = AIA_INT, v->i = i, v->d = (double)i;
    } else if (n->plain && util_parse_double(n->text, &d)) {
        v->type = AIA_DOUBLE, v->d = d;
    } else if (n->plain && params_bool(n->text, &i)) {
        v->type = AIA_BOOL, v->i = i;
    } else {
        v->type = AIA_STRING;
        if (!(v->s = strdup(n->text)))
            return -1;
    }
    return 0;
}

/* A list of numbers: ints when every item spells an int. */
static int numbers(const struct mnode *n, struct aia_value *v, int *bad)
{
    size_t k = n->n;
    int ints = 1;
    for (size_t j = 0; j < k; j++) {
        struct aia_value one = {0};
        const struct mnode *e = n->item[j];
        if (e->kind != MNODE_SCALAR || scalar(e, &one) < 0)
            return *bad = e->kind != MNODE_SCALAR, -1;
        free((void *)one.s);
        if (one.type != AIA_INT && one.type != AIA_DOUBLE)
            return *bad = 1, -1;
        ints &= one.type == AIA_INT;
    }
    v->type = ints ? AIA_INTS : AIA_DOUBLES;
    v->n = k;
    int64_t *iv = ints ? calloc(k ? k : 1, sizeof *iv) : NULL;
    double *dv = ints ? NULL : calloc(k ? k : 1, sizeof *dv);
    if (!iv && !dv)
        return -1;
    for (size_t j = 0; j < k; j++) {
        struct aia_value one = {0};
        scalar(n->item[j], &one);
        if (iv)
            iv[j] = one.i;
        else
            dv[j] = one.d;
    }
    v->ints = iv;
    v->doubles = dv;
    return 0;
}

struct aia_value *freeargs_bind(const struct job *job,
                                const struct job_plugin *s,
                                const struct plugin *p, struct aia_error *err)
{
    const struct aia_param *table = p->h->params;
    struct aia_value *v =
        params_bind(job->m->path, s->name, s->node, s->key, table,
                    params_other_keys, p->h->name, err);
    if (!v || !s->node)
        return v;
    size_t have = 0, extra = 0;
    while (v[have].name)
        have++;
    for (size_t k = 0; k < s->node->n; k++)
        extra += !is_reserved(s, table, s->node->item[2 * k]->text);
    struct aia_value *all = realloc(v, (have + extra + 1) * sizeof *all);
    if (!all) {
        params_free(v);
        aia_seterr(err, "%s: out of memory", job->m->path);
        return NULL;
    }
    v = all;
    memset(v + have, 0, (extra + 1) * sizeof *v);
    for (size_t k = 0; k < s->node->n; k++) {
        const struct mnode *key = s->node->item[2 * k];
        const struct mnode *val = s->node->item[2 * k + 1];
        if (is_reserved(s, table, key->text))
            continue;
        struct aia_value *e = &v[have];
        int bad = 0, rc;
        e->given = 1;
        if (val->kind == MNODE_SCALAR)
            rc = scalar(val, e);
        else if (val->kind == MNODE_SEQ)
            rc = numbers(val, e, &bad);
        else
            rc = -1, bad = 1;
        /* named only now, so that params_free sees its values */
        e->name = key->text;
        if (rc < 0) {
            char where[256];
            params_where(where, sizeof where, job->m->path, val);
            if (bad)
                aia_seterr(err,
                           "%s: %s.%s: plugin '%s' takes a single "
                           "value or a list of numbers here",
                           where, s->name, key->text, p->h->name);
            else
                aia_seterr(err, "%s: out of memory", where);
            params_free(v);
            return NULL;
        }
        have++;
    }
    return v;
}
