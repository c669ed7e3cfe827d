/* manifest.h - a job file read into a tree of YAML nodes with positions.
 *
 * libyaml's events are turned into mnode trees here and nowhere else.
 * Aliases, tags on collections, several documents, duplicate keys and
 * non-scalar keys are refused with the file, line and column.
 */
#ifndef AIARUN_MANIFEST_H
#define AIARUN_MANIFEST_H

#include <stddef.h>

#include <aiarun/aiarun.h>

enum mnode_kind { MNODE_SCALAR = 1, MNODE_MAP = 2, MNODE_SEQ = 3 };

struct mnode {
    enum mnode_kind kind;
    int line, col;      /* 1-based position of the node */
    char *text;         /* scalars: the value */
    int plain;          /* scalars: 1 when written without quotes */
    size_t n;           /* sequences: items; maps: key/value pairs */
    struct mnode **item; /* sequences: n items; maps: 2n, key then value */
};

struct manifest {
    char *path;         /* as given */
    struct mnode *root; /* always a map */
};

/* Parse text (len bytes) read from path.  Returns a manifest or NULL with
 * err set to "path:line:col: message". */
struct manifest *manifest_parse(const char *path, const char *text,
                                size_t len, struct aia_error *err);

/* Read and parse the file at path. */
struct manifest *manifest_load(const char *path, struct aia_error *err);

void manifest_free(struct manifest *m);

/* The value under key in a map node, or NULL; *keynode gets the key's node
 * (NULL when absent) when keynode is not NULL. */
const struct mnode *mnode_get(const struct mnode *map, const char *key,
                              const struct mnode **keynode);

/* Set the value at a dotted path ("algorithm.step") to a plain scalar
 * parsed as YAML (so "[1, 2]" becomes a sequence), creating maps on the
 * way.  Used for command-line overrides.  0 or -1. */
int manifest_set(struct manifest *m, const char *dotted, const char *value,
                 struct aia_error *err);

/* Remove the key or section at a dotted path, as -o KEY= (empty) asks, so
 * the key takes its default and a section is absent.  1: removed, 0: the
 * file has no such key, -1 with err: the path runs through a value. */
int manifest_unset(struct manifest *m, const char *dotted,
                   struct aia_error *err);

/* Parse text as one YAML value ("0.1", "[1, 2]", "{a: 1}"); the node is
 * the caller's, freed with mnode_free.  NULL with err on a syntax error. */
struct mnode *mnode_parse_value(const char *text, struct aia_error *err);

void mnode_free(struct mnode *n);

/* Describe a node's kind for messages: "a mapping", "a list", "'text'". */
const char *mnode_describe(const struct mnode *n, char *buf, size_t len);

#endif
