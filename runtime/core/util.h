/* util.h - small helpers shared by the runtime's files. */
#ifndef AIARUN_UTIL_H
#define AIARUN_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

/* bytes, rounded up to a whole number of 64-byte lines (at least one),
 * aligned to 64 and zeroed: a message buffer.  From 2 MiB, aligned to a
 * huge page and asking for huge pages (util.c).  Free with free(); NULL
 * when out of memory. */
void *util_alloc_aligned(size_t bytes);

/* Monotonic clock in seconds. */
double util_now(void);

/* Sleep for s seconds (s <= 0: return at once). */
void util_sleep(double s);

/* Folder part of path ("." when there is none); malloc'd, or NULL. */
char *util_dirname(const char *path);

/* a joined with b by one '/'; malloc'd, or NULL. */
char *util_join(const char *a, const char *b);

/* path spelled plainly: "." components and repeated '/' dropped
 * ("././a//b.so" is "a/b.so"); ".." is kept, since a link may stand
 * before it.  malloc'd, or NULL. */
char *util_normpath(const char *path);

/* *out = a * b; -1 (and *out untouched) when the product does not fit
 * in a size_t, as a file's header that promises 2^61 values of 8 bytes
 * would wrap around to a small byte count. */
int util_mul(size_t a, size_t b, size_t *out);

/* Edit distance of a and b (Levenshtein's, with a swap of two
 * neighbours one edit), capped at cap + 1. */
int util_distance(const char *a, const char *b, int cap);

/* The name closest to name (a trailing ext ignored, as in the files)
 * among names (NULL-terminated, or NULL) and the files NAME+ext of the
 * folders dirs (NULL-terminated), at most 2 edits away, into best (size
 * bytes): the fewest edits, then one with name's very letters (a slip of
 * order), then the first in alphabetical order, whatever order a folder
 * lists.  Nothing is opened but the folders.  0 when none is that close. */
int util_closest(const char *name, const char *ext, const char *const *names,
                 char *const *dirs, char *best, size_t size);

/* Read a whole file into a NUL-terminated malloc'd buffer of at most max
 * bytes; sets *len.  A file that is not regular is refused before a byte
 * is read (it is opened without blocking: a FIFO with no writer would
 * hang the reader in open()).  NULL on failure, with err naming the
 * file. */
char *util_read_file(const char *path, size_t max, size_t *len,
                     struct aia_error *err);

/* s as a one-line message may show it: control characters escaped
 * ("\t", "\x1b"), cut after max bytes of s (at a character boundary)
 * with "..." added, and always within buf (len bytes).  Returns buf. */
const char *util_shown(char *buf, size_t len, const char *s, size_t max);

/* The text of an error a plugin (or a user) filled, made safe to show, in
 * place: cut at its last byte when it has no NUL, "(no reason given)"
 * when empty, control characters escaped.  Returns err->text. */
const char *util_error_text(struct aia_error *err);

/* 1 when s is a finite double written in full (no trailing text). */
int util_parse_double(const char *s, double *out);

/* 1 when s is an integer written in full, or a number with an integral
 * value such as 1e6, within int64_t. */
int util_parse_int(const char *s, int64_t *out);

/* What a file of st_mode mode is, for messages: "a FIFO", "a folder",
 * "a character device"... */
const char *util_kind(unsigned mode);

/* 0 when path is a regular file or cannot be looked at (its reader
 * says why); -1 with err naming it and what it is (a FIFO, a device, a
 * folder) otherwise: a FIFO would block its reader and a device such as
 * /dev/zero never ends, so data is read from regular files only. */
int util_regular_input(const char *path, struct aia_error *err);

#endif
