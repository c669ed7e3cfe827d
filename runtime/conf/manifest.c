/* manifest.c - YAML job files to mnode trees, with libyaml's events. */
#include <config.h>

#include "manifest.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/util.h"

#define MAX_DEPTH 32
#define MAX_NODES 200000
#define MAX_FILE (16u << 20)
/* room for 60 bytes of a key or value in a message, escapes included */
#define SHOWN 80

struct builder {
    const char *path;
    const char *text; /* the input, for the places of reader errors */
    size_t len;
    yaml_parser_t parser;
    size_t nodes;
    struct aia_error *err;
};

void mnode_free(struct mnode *n)
{
    if (!n)
        return;
    size_t items = n->kind == MNODE_MAP ? 2 * n->n : n->n;
    for (size_t i = 0; i < items; i++)
        mnode_free(n->item[i]);
    free(n->item);
    free(n->text);
    free(n);
}

static struct mnode *mnode_new(enum mnode_kind kind, yaml_mark_t mark)
{
    struct mnode *n = calloc(1, sizeof *n);
    if (n) {
        n->kind = kind;
        n->line = (int)mark.line + 1;
        n->col = (int)mark.column + 1;
    }
    return n;
}

/* Store child at item[at], growing the array.  Children are stored in
 * order while building, so the array's room is the next power of two
 * (at least 2): it doubles when at reaches a power of two, and a mapping
 * or list of many items costs linear time, not quadratic. */
static int push(struct mnode *parent, size_t at, struct mnode *child)
{
    if (at == 0 || (at >= 2 && (at & (at - 1)) == 0)) {
        size_t room = at ? 2 * at : 2;
        struct mnode **it = realloc(parent->item, room * sizeof *it);
        if (!it)
            return -1;
        parent->item = it;
    }
    parent->item[at] = child;
    return 0;
}

/* The keys of one mapping while it is built, for the duplicate check:
 * an open-addressed table of key numbers + 1 (0: empty), kept at most
 * half full, so that a mapping of many keys is checked in linear time. */
struct keyset {
    size_t *slot;
    size_t room; /* a power of two, or 0 */
};

static size_t key_hash(const char *s)
{
    size_t h = 14695981039346656037u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot of text among map's first n keys: the slot that holds it, or
 * the empty one where it would go. */
static size_t *key_slot(const struct keyset *ks, const struct mnode *map,
                        const char *text)
{
    size_t i = key_hash(text) & (ks->room - 1);
    while (ks->slot[i] &&
           strcmp(map->item[2 * (ks->slot[i] - 1)]->text, text) != 0)
        i = (i + 1) & (ks->room - 1);
    return &ks->slot[i];
}

/* Look key up among map's keys; *prev gets the earlier key of the same
 * text, or NULL after key was recorded as key number map->n.  0, or -1
 * when out of memory. */
static int key_add(struct keyset *ks, const struct mnode *map,
                   const struct mnode *key, const struct mnode **prev)
{
    if (2 * (map->n + 1) > ks->room) {
        struct keyset grown = {NULL, ks->room ? 2 * ks->room : 16};
        if (!(grown.slot = calloc(grown.room, sizeof *grown.slot)))
            return -1;
        for (size_t k = 0; k < map->n; k++)
            *key_slot(&grown, map, map->item[2 * k]->text) = k + 1;
        free(ks->slot);
        *ks = grown;
    }
    size_t *at = key_slot(ks, map, key->text);
    *prev = *at ? map->item[2 * (*at - 1)] : NULL;
    if (!*at)
        *at = map->n + 1;
    return 0;
}

static int fail_at(struct builder *b, yaml_mark_t mark, const char *what)
{
    return aia_seterr(b->err, "%s:%zu:%zu: %s", b->path, mark.line + 1,
                      mark.column + 1, what);
}

/* The line and column of byte offset in the input, as libyaml counts
 * them (lines end at \n, \r\n or \r; columns count characters). */
static yaml_mark_t mark_of(const struct builder *b, size_t offset)
{
    yaml_mark_t m = {offset, 0, 0};
    for (size_t i = 0; i < offset && i < b->len; i++) {
        unsigned char c = (unsigned char)b->text[i];
        if (c == '\n' || (c == '\r' && (i + 1 >= b->len ||
                                          b->text[i + 1] != '\n'))) {
            m.line++;
            m.column = 0;
        } else if (c != '\r' && (c & 0xc0) != 0x80) {
            m.column++;
        }
    }
    return m;
}

/* Next event, or -1 with the parser's own message placed at its mark. */
static int next_event(struct builder *b, yaml_event_t *ev)
{
    if (yaml_parser_parse(&b->parser, ev))
        return 0;
    const yaml_parser_t *p = &b->parser;
    yaml_mark_t mark = p->problem_mark;
    const char *problem = p->problem ? p->problem : "error";
    if (p->error == YAML_MEMORY_ERROR)
        return aia_seterr(b->err, "%s: out of memory", b->path);
    if (p->error == YAML_READER_ERROR) {
        /* the reader gives a byte offset and the offending value, no
         * mark: undecodable bytes, control characters (NUL included) */
        if (p->encoding != YAML_UTF8_ENCODING)
            return aia_seterr(b->err, "%s: byte %zu: %s (0x%x)", b->path,
                              p->problem_offset, problem,
                              (unsigned)p->problem_value);
        mark = mark_of(b, p->problem_offset);
        return aia_seterr(b->err, "%s:%zu:%zu: %s (byte 0x%02x)", b->path,
                          mark.line + 1, mark.column + 1, problem,
                          (unsigned)p->problem_value & 0xffu);
    }
    if (p->context && p->context_mark.line == mark.line &&
        mark.column - p->context_mark.column > 1024 &&
        strcmp(p->context, "while scanning a simple key") == 0)
        return aia_seterr(b->err, "%s:%zu:%zu: YAML syntax error: a key of "
                                  "more than 1024 characters",
                          b->path, p->context_mark.line + 1,
                          p->context_mark.column + 1);
    if (p->context)
        return aia_seterr(b->err, "%s:%zu:%zu: YAML syntax error: %s %s",
                          b->path, mark.line + 1, mark.column + 1, problem,
                          p->context);
    return aia_seterr(b->err, "%s:%zu:%zu: YAML syntax error: %s", b->path,
                      mark.line + 1, mark.column + 1, problem);
}

static struct mnode *build(struct builder *b, yaml_event_t *ev, int depth);

static int build_items(struct builder *b, struct mnode *n, int depth,
                       struct keyset *ks);

/* Children of a map or sequence until its end event. */
static int build_children(struct builder *b, struct mnode *n, int depth)
{
    struct keyset ks = {NULL, 0};
    int rc = build_items(b, n, depth, &ks);
    free(ks.slot);
    return rc;
}

static int build_items(struct builder *b, struct mnode *n, int depth,
                       struct keyset *ks)
{
    yaml_event_type_t end = n->kind == MNODE_MAP ? YAML_MAPPING_END_EVENT
                                                 : YAML_SEQUENCE_END_EVENT;
    for (;;) {
        yaml_event_t ev;
        if (next_event(b, &ev) < 0)
            return -1;
        if (ev.type == end) {
            yaml_event_delete(&ev);
            return 0;
        }
        yaml_mark_t mark = ev.start_mark;
        int is_key = n->kind == MNODE_MAP;
        if (is_key && ev.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&ev);
            return fail_at(b, mark, "a key must be a plain name, not a "
                                    "list or mapping");
        }
        struct mnode *child = build(b, &ev, depth + 1);
        yaml_event_delete(&ev);
        if (!child)
            return -1;
        if (is_key) {
            const struct mnode *prev_key;
            if (key_add(ks, n, child, &prev_key) < 0) {
                mnode_free(child);
                return aia_seterr(b->err, "%s: out of memory", b->path);
            }
            if (prev_key) {
                char shown[SHOWN];
                aia_seterr(b->err,
                           "%s:%d:%d: %s: duplicate key (first at line %d)",
                           b->path, child->line, child->col,
                           util_shown(shown, sizeof shown, child->text, 60),
                           prev_key->line);
                mnode_free(child);
                return -1;
            }
            if (push(n, 2 * n->n, child) < 0) {
                mnode_free(child);
                return aia_seterr(b->err, "%s: out of memory", b->path);
            }
            if (next_event(b, &ev) < 0) {
                mnode_free(n->item[2 * n->n]);
                return -1;
            }
            struct mnode *val = build(b, &ev, depth + 1);
            yaml_event_delete(&ev);
            if (!val || push(n, 2 * n->n + 1, val) < 0) {
                if (val)
                    aia_seterr(b->err, "%s: out of memory", b->path);
                mnode_free(val);
                /* keep the tree well formed: drop the dangling key */
                mnode_free(n->item[2 * n->n]);
                return -1;
            }
            n->n++;
        } else {
            if (push(n, n->n, child) < 0) {
                mnode_free(child);
                return aia_seterr(b->err, "%s: out of memory", b->path);
            }
            n->n++;
        }
    }
}

/* A mapping or list may carry no tag but its own standard one. */
static int collection_tag_ok(const yaml_event_t *ev)
{
    if (ev->type == YAML_MAPPING_START_EVENT)
        return !ev->data.mapping_start.tag ||
               strcmp((const char *)ev->data.mapping_start.tag,
                      YAML_MAP_TAG) == 0;
    return !ev->data.sequence_start.tag ||
           strcmp((const char *)ev->data.sequence_start.tag, YAML_SEQ_TAG) ==
               0;
}

static struct mnode *build(struct builder *b, yaml_event_t *ev, int depth)
{
    if (depth > MAX_DEPTH) {
        fail_at(b, ev->start_mark, "nested too deeply");
        return NULL;
    }
    if (++b->nodes > MAX_NODES) {
        char what[80];
        snprintf(what, sizeof what, "too many nodes (keys, values and list "
                                    "items: at most %d)",
                 MAX_NODES);
        fail_at(b, ev->start_mark, what);
        return NULL;
    }
    struct mnode *n = NULL;
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        fail_at(b, ev->start_mark, "aliases (*name) are not supported in "
                                   "job files");
        return NULL;
    case YAML_SCALAR_EVENT:
        n = mnode_new(MNODE_SCALAR, ev->start_mark);
        if (!n)
            break;
        n->text = strndup((const char *)ev->data.scalar.value,
                          ev->data.scalar.length);
        if (!n->text)
            break;
        if (strlen(n->text) != ev->data.scalar.length) {
            fail_at(b, ev->start_mark, "a value holds a NUL byte");
            mnode_free(n);
            return NULL;
        }
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                   !ev->data.scalar.tag;
        return n;
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT:
        if (!collection_tag_ok(ev)) {
            fail_at(b, ev->start_mark, "tags (!!set, !name) on a mapping or "
                                       "list are not supported in job files");
            return NULL;
        }
        n = mnode_new(ev->type == YAML_MAPPING_START_EVENT ? MNODE_MAP
                                                           : MNODE_SEQ,
                      ev->start_mark);
        if (!n)
            break;
        if (build_children(b, n, depth) < 0) {
            mnode_free(n);
            return NULL;
        }
        return n;
    default:
        fail_at(b, ev->start_mark, "unexpected YAML event");
        return NULL;
    }
    aia_seterr(b->err, "%s: out of memory", b->path);
    mnode_free(n);
    return NULL;
}

struct manifest *manifest_parse(const char *path, const char *text,
                                size_t len, struct aia_error *err)
{
    struct builder b = {.path = path, .text = text, .len = len, .err = err};
    struct manifest *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        aia_seterr(err, "%s: out of memory", path);
        return NULL;
    }
    if (!yaml_parser_initialize(&b.parser)) {
        aia_seterr(err, "%s: cannot start the YAML parser", path);
        goto fail_free;
    }
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
    yaml_event_t ev;
    int docs = 0;
    for (;;) {
        if (next_event(&b, &ev) < 0)
            goto fail;
        yaml_event_type_t type = ev.type;
        yaml_mark_t mark = ev.start_mark;
        if (type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (type == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            yaml_event_delete(&ev);
            fail_at(&b, mark, "a job file holds one YAML document, "
                              "found a second");
            goto fail;
        }
        if (type == YAML_MAPPING_START_EVENT ||
            type == YAML_SEQUENCE_START_EVENT || type == YAML_SCALAR_EVENT ||
            type == YAML_ALIAS_EVENT) {
            if (type != YAML_MAPPING_START_EVENT) {
                yaml_event_delete(&ev);
                fail_at(&b, mark, "the job file must be a mapping of "
                                  "sections (algorithm:, problem:, ...)");
                goto fail;
            }
            m->root = build(&b, &ev, 0);
            yaml_event_delete(&ev);
            if (!m->root)
                goto fail;
            continue;
        }
        yaml_event_delete(&ev);
    }
    if (!m->root) {
        aia_seterr(err, "%s:1:1: the job file is empty", path);
        goto fail;
    }
    yaml_parser_delete(&b.parser);
    return m;
fail:
    yaml_parser_delete(&b.parser);
fail_free:
    manifest_free(m);
    return NULL;
}

struct manifest *manifest_load(const char *path, struct aia_error *err)
{
    size_t len;
    char *text = util_read_file(path, MAX_FILE, &len, err);
    if (!text)
        return NULL;
    struct manifest *m = manifest_parse(path, text, len, err);
    free(text);
    return m;
}

void manifest_free(struct manifest *m)
{
    if (!m)
        return;
    mnode_free(m->root);
    free(m->path);
    free(m);
}

const struct mnode *mnode_get(const struct mnode *map, const char *key,
                              const struct mnode **keynode)
{
    if (keynode)
        *keynode = NULL;
    if (!map || map->kind != MNODE_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++) {
        if (strcmp(map->item[2 * i]->text, key) == 0) {
            if (keynode)
                *keynode = map->item[2 * i];
            return map->item[2 * i + 1];
        }
    }
    return NULL;
}

const char *mnode_describe(const struct mnode *n, char *buf, size_t len)
{
    if (n->kind == MNODE_MAP)
        return "a mapping";
    if (n->kind == MNODE_SEQ)
        return "a list";
    if (n->plain && !*n->text)
        return "an empty value";
    char shown[SHOWN];
    snprintf(buf, len, "'%s'", util_shown(shown, sizeof shown, n->text, 60));
    return buf;
}

struct mnode *mnode_parse_value(const char *value, struct aia_error *err)
{
    size_t len = strlen(value) + 16;
    char *doc = malloc(len);
    if (!doc) {
        aia_seterr(err, "out of memory");
        return NULL;
    }
    snprintf(doc, len, "v: %s\n", value);
    struct manifest *m = manifest_parse("-o", doc, strlen(doc), err);
    free(doc);
    if (!m)
        return NULL;
    struct mnode *v = m->root->item[1];
    m->root->item[1] = NULL;
    m->root->n = 0;
    mnode_free(m->root->item[0]);
    manifest_free(m);
    return v;
}

static void mark_override(struct mnode *n)
{
    n->line = 0;
    n->col = 0;
    size_t items = n->kind == MNODE_MAP ? 2 * n->n : n->n;
    for (size_t i = 0; i < items; i++)
        mark_override(n->item[i]);
}

/* The value slot of key (klen bytes) in map, appended with no value when
 * absent; NULL when out of memory. */
static struct mnode **slot(struct mnode *map, const char *key, size_t klen)
{
    for (size_t i = 0; i < map->n; i++) {
        const char *k = map->item[2 * i]->text;
        if (strlen(k) == klen && memcmp(k, key, klen) == 0)
            return &map->item[2 * i + 1];
    }
    struct mnode **it = realloc(map->item, 2 * (map->n + 1) * sizeof *it);
    if (!it)
        return NULL;
    map->item = it;
    struct mnode *k = calloc(1, sizeof *k);
    if (!k || !(k->text = strndup(key, klen))) {
        free(k);
        return NULL;
    }
    k->kind = MNODE_SCALAR;
    k->plain = 1;
    it[2 * map->n] = k;
    it[2 * map->n + 1] = NULL;
    map->n++;
    return &it[2 * map->n - 1];
}

int manifest_set(struct manifest *m, const char *dotted, const char *value,
                 struct aia_error *err)
{
    struct mnode *val = mnode_parse_value(value, err);
    if (!val)
        return -1;
    mark_override(val);
    struct mnode *map = m->root;
    const char *p = dotted;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t klen = dot ? (size_t)(dot - p) : strlen(p);
        struct mnode **s = klen ? slot(map, p, klen) : NULL;
        if (!klen || !s) {
            mnode_free(val);
            return aia_seterr(err, klen ? "-o %s: out of memory"
                                        : "-o %s: empty key", dotted);
        }
        if (!dot) {
            mnode_free(*s);
            *s = val;
            return 0;
        }
        if (!*s && (*s = calloc(1, sizeof **s)))
            (*s)->kind = MNODE_MAP;
        if (!*s || (*s)->kind != MNODE_MAP) {
            mnode_free(val);
            if (!*s)
                return aia_seterr(err, "-o %s: out of memory", dotted);
            return aia_seterr(err, "-o %s: '%.*s' is not a section", dotted,
                              (int)(p + klen - dotted), dotted);
        }
        map = *s;
        p = dot + 1;
    }
}

int manifest_unset(struct manifest *m, const char *dotted,
                   struct aia_error *err)
{
    struct mnode *map = m->root;
    const char *p = dotted;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t klen = dot ? (size_t)(dot - p) : strlen(p);
        if (!klen)
            return aia_seterr(err, "-o %s: empty key", dotted);
        size_t i = 0;
        while (i < map->n && (strlen(map->item[2 * i]->text) != klen ||
                              memcmp(map->item[2 * i]->text, p, klen) != 0))
            i++;
        if (i == map->n)
            return 0;
        struct mnode *v = map->item[2 * i + 1];
        if (!dot) {
            mnode_free(map->item[2 * i]);
            mnode_free(v);
            memmove(&map->item[2 * i], &map->item[2 * i + 2],
                    2 * (map->n - i - 1) * sizeof *map->item);
            map->n--;
            return 1;
        }
        /* a section given empty ("pool:") holds nothing to remove */
        if (v && v->kind == MNODE_SCALAR && !*v->text)
            return 0;
        if (!v || v->kind != MNODE_MAP)
            return aia_seterr(err, "-o %s: '%.*s' is not a section", dotted,
                              (int)(p + klen - dotted), dotted);
        map = v;
        p = dot + 1;
    }
}
