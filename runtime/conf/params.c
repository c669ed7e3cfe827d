/* params.c - bind job-file sections to aia_param tables. */
#include <config.h>

#include "params.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

const char *params_type_name(enum aia_type type)
{
    switch (type) {
    case AIA_INT:
        return "int";
    case AIA_DOUBLE:
        return "number";
    case AIA_BOOL:
        return "bool";
    case AIA_STRING:
        return "string";
    case AIA_ENUM:
        return "choice";
    case AIA_INTS:
        return "int list";
    case AIA_DOUBLES:
        return "number list";
    }
    return "?";
}

const char *params_where(char *buf, size_t len, const char *file,
                         const struct mnode *n)
{
    if (!n)
        snprintf(buf, len, "%s", file);
    else if (n->line == 0)
        snprintf(buf, len, "command line (-o)");
    else if (n->line < 0)
        snprintf(buf, len, "%s: default value", file);
    else
        snprintf(buf, len, "%s:%d:%d", file, n->line, n->col);
    return buf;
}

/* Context of one binding, for messages. */
struct ctx {
    const char *file;
    const char *prefix;
    const char *owner;
    struct aia_error *err;
};

static int fail(const struct ctx *c, const struct mnode *at, const char *key,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(const struct ctx *c, const struct mnode *at, const char *key,
                const char *fmt, ...)
{
    char where[256], msg[400], shown[80];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    params_where(where, sizeof where, c->file, at);
    /* an unknown key is the file's text: shown short and escaped */
    return aia_seterr(c->err, "%s: %s%s%s: %s", where, c->prefix,
                      key && *c->prefix ? "." : "",
                      key ? util_shown(shown, sizeof shown, key, 60) : "", msg);
}

static int in_range(const struct aia_param *p, double v)
{
    if (p->min == 0 && p->max == 0)
        return 1;
    return v >= p->min && v <= p->max;
}

static int range_fail(const struct ctx *c, const struct mnode *at,
                      const struct aia_param *p)
{
    char detail[96];
    if (p->type == AIA_INT || p->type == AIA_INTS)
        snprintf(detail, sizeof detail, "%.0f and %.0f", p->min, p->max);
    else
        snprintf(detail, sizeof detail, "%g and %g", p->min, p->max);
    return fail(c, at, p->name, "must be between %s", detail);
}

int params_bool(const char *s, int64_t *out)
{
    static const char *const yes[] = {"true", "yes", "on"};
    static const char *const no[] = {"false", "no", "off"};
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return *out = 1, 1;
        if (strcasecmp(s, no[i]) == 0)
            return *out = 0, 1;
    }
    return 0;
}

/* Index of s among "a|b|c", or -1. */
static int choice_index(const char *choices, const char *s)
{
    size_t len = strlen(s);
    int i = 0;
    for (const char *p = choices; p; i++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, s, n) == 0)
            return i;
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

/* NaN or infinity, in C's or YAML's spelling, or a number that
 * overflows a double. */
static int nonfinite(const char *s)
{
    static const char *yaml[] = {".nan", ".inf", "+.inf", "-.inf"};
    for (int i = 0; i < 4; i++)
        if (strcasecmp(s, yaml[i]) == 0)
            return 1;
    char *end;
    double d = strtod(s, &end);
    return end != s && *end == '\0' && !isfinite(d);
}

/* Why a scalar that spells a number or a bool is not one: quoted or
 * tagged ("!!int 5") text is text. */
static const char *quoted(const struct mnode *n)
{
    return n->plain ? "" : " (quoted or tagged, so text)";
}

/* One scalar into v as a single value of type (list types take their
 * element type).  0 or -1. */
static int scalar(const struct ctx *c, const struct aia_param *p,
                  const struct mnode *n, enum aia_type type,
                  struct aia_value *v, int64_t *iv, double *dv)
{
    char buf[96];
    if (n->kind != MNODE_SCALAR)
        return fail(c, n, p->name, "expected %s, got a list or mapping",
                    type == AIA_INT ? "an integer"
                    : type == AIA_DOUBLE ? "a number"
                    : type == AIA_BOOL ? "true or false"
                                       : "a single value");
    const char *s = n->text;
    switch (type) {
    case AIA_INT:
        if (!n->plain || !util_parse_int(s, iv))
            return fail(c, n, p->name, "expected an integer, got %s%s",
                        mnode_describe(n, buf, sizeof buf), quoted(n));
        if (!in_range(p, (double)*iv))
            return range_fail(c, n, p);
        return 0;
    case AIA_DOUBLE:
        /* A word the parameter accepts instead of a number ("auto"). */
        if (p->choices && n->plain && choice_index(p->choices, s) >= 0) {
            if (!(v->s = strdup(s)))
                return fail(c, n, p->name, "%s", "out of memory");
            *iv = choice_index(p->choices, s);
            *dv = NAN;
            return 0;
        }
        if (n->plain && nonfinite(s))
            return fail(c, n, p->name, "expected a finite number, got %s",
                        mnode_describe(n, buf, sizeof buf));
        if (!n->plain || !util_parse_double(s, dv))
            return fail(c, n, p->name, "expected a number%s%s, got %s%s",
                        p->choices ? " or " : "",
                        p->choices ? p->choices : "",
                        mnode_describe(n, buf, sizeof buf), quoted(n));
        if (!in_range(p, *dv))
            return range_fail(c, n, p);
        return 0;
    case AIA_BOOL:
        if (!n->plain || !params_bool(s, iv))
            return fail(c, n, p->name, "expected true or false, got %s%s",
                        mnode_describe(n, buf, sizeof buf), quoted(n));
        return 0;
    case AIA_STRING:
        if (!(v->s = strdup(s)))
            return fail(c, n, p->name, "%s", "out of memory");
        return 0;
    case AIA_ENUM: {
        int k = choice_index(p->choices, s);
        if (k < 0) {
            char detail[200];
            snprintf(detail, sizeof detail, "%s is not one of %s",
                     mnode_describe(n, buf, sizeof buf), p->choices);
            return fail(c, n, p->name, "%s", detail);
        }
        if (!(v->s = strdup(s)))
            return fail(c, n, p->name, "%s", "out of memory");
        *iv = k;
        return 0;
    }
    default:
        return fail(c, n, p->name, "%s", "unsupported type");
    }
}

/* A list parameter: a sequence of scalars, or one scalar. */
static int list(const struct ctx *c, const struct aia_param *p,
                const struct mnode *n, struct aia_value *v)
{
    if (n->kind == MNODE_MAP)
        return fail(c, n, p->name, "expected a list, got %s", "a mapping");
    size_t count = n->kind == MNODE_SEQ ? n->n : 1;
    int ints = p->type == AIA_INTS;
    void *arr = calloc(count ? count : 1, ints ? sizeof(int64_t)
                                               : sizeof(double));
    if (!arr)
        return fail(c, n, p->name, "%s", "out of memory");
    if (ints)
        v->ints = arr;
    else
        v->doubles = arr;
    v->n = count;
    for (size_t i = 0; i < count; i++) {
        const struct mnode *e = n->kind == MNODE_SEQ ? n->item[i] : n;
        int64_t iv;
        double dv;
        if (scalar(c, p, e, ints ? AIA_INT : AIA_DOUBLE, v, &iv, &dv) < 0)
            return -1;
        if (ints)
            ((int64_t *)arr)[i] = iv;
        else
            ((double *)arr)[i] = dv;
    }
    return 0;
}

static int bind_one(const struct ctx *c, const struct aia_param *p,
                    const struct mnode *n, struct aia_value *v)
{
    if (p->type == AIA_INTS || p->type == AIA_DOUBLES)
        return list(c, p, n, v);
    int64_t iv = 0;
    double dv = 0;
    if (scalar(c, p, n, p->type, v, &iv, &dv) < 0)
        return -1;
    v->i = iv;
    v->d = p->type == AIA_INT ? (double)iv : dv;
    return 0;
}

const char *const params_other_keys[] = {NULL};

static int skipped(const char *const *skip, const char *key)
{
    if (skip == params_other_keys)
        return 1;
    for (; skip && *skip; skip++)
        if (strcmp(*skip, key) == 0)
            return 1;
    return 0;
}

static int unknown_key(const struct ctx *c, const struct mnode *key,
                       const struct aia_param *table,
                       const char *const *skip)
{
    const char *best = NULL;
    int bestd = 3;
    char known[200] = "";
    size_t used = 0;
    for (const struct aia_param *p = table; p && p->name; p++) {
        int d = util_distance(key->text, p->name, 2);
        if (d < bestd)
            bestd = d, best = p->name;
        int w = snprintf(known + used, sizeof known - used, "%s%s",
                         used ? ", " : "", p->name);
        if (w > 0 && (size_t)w < sizeof known - used)
            used += (size_t)w;
    }
    for (; skip && *skip; skip++) {
        int d = util_distance(key->text, *skip, 2);
        if (d < bestd)
            bestd = d, best = *skip;
        /* a runtime section's sub-sections are its keys too */
        int w = c->owner ? 0
                         : snprintf(known + used, sizeof known - used, "%s%s",
                                    used ? ", " : "", *skip);
        if (w > 0 && (size_t)w < sizeof known - used)
            used += (size_t)w;
    }
    char whose[100] = "";
    if (c->owner)
        snprintf(whose, sizeof whose, " for plugin '%s'", c->owner);
    char msg[400];
    if (best)
        snprintf(msg, sizeof msg, "unknown key%s; did you mean '%s'?", whose,
                 best);
    else if (used)
        snprintf(msg, sizeof msg, "unknown key%s; known keys: %s", whose,
                 known);
    else
        snprintf(msg, sizeof msg, "unknown key%s; it takes no parameters",
                 whose);
    return fail(c, key, key->text, "%s", msg);
}

struct aia_value *params_bind(const char *file, const char *prefix,
                              const struct mnode *section,
                              const struct mnode *section_key,
                              const struct aia_param *table,
                              const char *const *skip, const char *owner,
                              struct aia_error *err)
{
    struct ctx c = {file, prefix, owner, err};
    if (section && section->kind != MNODE_MAP) {
        char buf[96];
        fail(&c, section, NULL, "expected a mapping of keys, got %s",
             mnode_describe(section, buf, sizeof buf));
        return NULL;
    }
    size_t n = 0;
    while (table && table[n].name)
        n++;
    struct aia_value *v = calloc(n + 1, sizeof *v);
    if (!v) {
        aia_seterr(err, "%s: out of memory", file);
        return NULL;
    }
    for (size_t i = 0; section && i < section->n; i++) {
        const struct mnode *key = section->item[2 * i];
        size_t k = 0;
        while (k < n && strcmp(table[k].name, key->text) != 0)
            k++;
        if (k == n && !skipped(skip, key->text)) {
            unknown_key(&c, key, table, skip);
            goto fail;
        }
    }
    for (size_t k = 0; k < n; k++) {
        const struct aia_param *p = &table[k];
        v[k].name = p->name;
        v[k].type = p->type;
        const struct mnode *val = mnode_get(section, p->name, NULL);
        if (val) {
            v[k].given = 1;
            if (bind_one(&c, p, val, &v[k]) < 0)
                goto fail;
            continue;
        }
        if (!p->def) {
            char where[256];
            params_where(where, sizeof where, file, section_key);
            aia_seterr(err, "%s: %s: missing required key '%s'%s%s%s", where,
                       prefix, p->name, owner ? " of plugin '" : "",
                       owner ? owner : "", owner ? "'" : "");
            goto fail;
        }
        struct mnode *dn = mnode_parse_value(p->def, err);
        if (!dn)
            goto fail;
        dn->line = -1;
        int rc = bind_one(&c, p, dn, &v[k]);
        mnode_free(dn);
        if (rc < 0)
            goto fail;
    }
    return v;
fail:
    params_free(v);
    return NULL;
}

void params_free(struct aia_value *values)
{
    if (!values)
        return;
    for (struct aia_value *v = values; v->name; v++) {
        free((void *)v->s);
        free((void *)v->ints);
        free((void *)v->doubles);
    }
    free(values);
}

int params_check_table(const struct aia_param *table, const char *who,
                       struct aia_error *err)
{
    for (const struct aia_param *p = table; p && p->name; p++) {
        if (!*p->name)
            return aia_seterr(err, "%s: a parameter has an empty name", who);
        if (p->type < AIA_INT || p->type > AIA_DOUBLES)
            return aia_seterr(err, "%s: parameter '%s' has unknown type %d",
                              who, p->name, (int)p->type);
        if (p->type == AIA_ENUM && (!p->choices || !*p->choices))
            return aia_seterr(err, "%s: parameter '%s' lists no choices",
                              who, p->name);
        if (strcmp(p->name, "plugin") == 0)
            return aia_seterr(err, "%s: parameter name 'plugin' is reserved",
                              who);
        for (const struct aia_param *q = table; q < p; q++)
            if (strcmp(q->name, p->name) == 0)
                return aia_seterr(err, "%s: parameter '%s' is listed twice",
                                  who, p->name);
        if (!p->def)
            continue;
        /* The default must bind as if it were written in a job file. */
        struct aia_param one[2] = {*p, {0}};
        struct aia_value *v = params_bind(who, "", NULL, NULL, one, NULL, who,
                                          err);
        if (!v)
            return -1;
        params_free(v);
    }
    return 0;
}

const char *params_range(char *buf, size_t len, const struct aia_param *p)
{
    /* open only where the bound is no bound (an int64's, a double's):
     * a bound of 1e9 is enforced, and "at least 1" hid it */
    int open_max = p->max >= 9e18;
    if (p->min == 0 && p->max == 0)
        snprintf(buf, len, "%s", "");
    else if (p->min > 0 && p->min <= 1e-300 && open_max)
        snprintf(buf, len, "%s", "positive");
    else if (open_max)
        snprintf(buf, len, "at least %g", p->min);
    else
        snprintf(buf, len, "%g to %g", p->min, p->max);
    return buf;
}

/* The type column of a parameter: its choices, or its type's name. */
static const char *type_text(const struct aia_param *p)
{
    static char both[96];
    if (p->type == AIA_DOUBLE && p->choices) {
        snprintf(both, sizeof both, "number|%s", p->choices);
        return both;
    }
    return p->type == AIA_ENUM ? p->choices : params_type_name(p->type);
}

void params_print(FILE *out, const struct aia_param *table,
                  const char *indent)
{
    int wname = 14, wtype = 12, wdef = 10;
    for (const struct aia_param *p = table; p && p->name; p++) {
        int n = (int)strlen(p->name), t = (int)strlen(type_text(p));
        int d = p->def ? (int)strlen(p->def) : 10;
        wname = n > wname ? n : wname;
        wtype = t > wtype ? t : wtype;
        wdef = d > wdef ? d : wdef;
    }
    for (const struct aia_param *p = table; p && p->name; p++) {
        char range[64];
        params_range(range, sizeof range, p);
        fprintf(out, "%s%-*s %-*s %-*s %s%s%s%s\n", indent, wname, p->name,
                wtype, type_text(p), wdef, p->def ? p->def : "(required)",
                p->help ? p->help : "", *range ? " (" : "", range,
                *range ? ")" : "");
    }
}
