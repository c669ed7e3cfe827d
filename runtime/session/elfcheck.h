/* elfcheck.h - a shared object checked around dlopen: its headers
 * against its size (a truncated file killed the process inside dlopen
 * with SIGBUS, no message), the time its loading takes, and the symbol
 * its descriptor is exported under. */
#ifndef AIARUN_ELFCHECK_H
#define AIARUN_ELFCHECK_H

#include <aiarun/aiarun.h>

/* 0 when path is not an ELF file of this machine (dlopen refuses it with
 * its own message) or when its ELF header, its program and section
 * headers and its loadable segments lie within the file; -1 with err
 * naming the file and how far its headers reach past its end. */
int elfcheck_file(const char *path, struct aia_error *err);

/* From now on elfcheck_dlopen ends the process with status, after a
 * line naming the file, when a dlopen has not returned after seconds (a
 * constructor that never returns); 0: unbounded. */
void elfcheck_bound(unsigned seconds, int status);

/* elfcheck_file, then dlopen(path, RTLD_NOW | RTLD_LOCAL) within the
 * bound.  The handle, or NULL with err naming the file and dlerror's
 * reason. */
void *elfcheck_dlopen(const char *path, struct aia_error *err);

/* Whether h, the address a symbol name of path resolved to, is data of
 * at least size bytes (a descriptor's header; the ABI number in it says
 * the rest): a function exported under the
 * descriptor's name was read as one (a misaligned read).  0, or -1 with
 * err. */
int elfcheck_symbol(const void *h, size_t size, const char *name,
                    const char *path, struct aia_error *err);

#endif
