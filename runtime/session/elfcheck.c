/* elfcheck.c - a shared object checked around dlopen: its ELF headers
 * against its size before dlopen maps it, the time dlopen may take, and
 * the descriptor symbol it exports.
 *
 * dlopen maps each loadable segment over the file's length that its
 * program header states; on a file cut short (the first 1,200 bytes of a
 * plugin, a copy that did not finish) the loader touches pages past the
 * end of the file and the process dies of SIGBUS with no message.  So
 * the headers that dlopen reads and the segments that it maps must lie
 * within the file.  A file that is not ELF of this machine's class and
 * byte order is left to dlopen, which refuses it from its first bytes.
 */
#include <config.h>

#define _GNU_SOURCE 1 /* dladdr1 */

#include "elfcheck.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

#if __SIZEOF_POINTER__ == 8
#define CLASS ELFCLASS64
#else
#define CLASS ELFCLASS32
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ORDER ELFDATA2LSB
#else
#define ORDER ELFDATA2MSB
#endif

/* Program headers read at most: a shared object has about ten. */
#define MAX_PHDRS 4096

/* Whether [off, off + len) lies within a file of size bytes. */
static int within(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* All of count records of entsize bytes at off, within size. */
static int table_within(uint64_t off, uint64_t count, uint64_t entsize,
                        uint64_t size, uint64_t *end)
{
    if (count && entsize > UINT64_MAX / count) {
        *end = UINT64_MAX;
        return 0;
    }
    *end = off + count * entsize < off ? UINT64_MAX : off + count * entsize;
    return within(off, count * entsize, size);
}

static ssize_t read_at(int fd, void *buf, size_t len, uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t got =
            pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        done += (size_t)got;
    }
    return (ssize_t)done;
}

static int truncated(const char *path, const char *what, uint64_t need,
                     uint64_t size, struct aia_error *err)
{
    char shown[200];
    return aia_seterr(err,
                      "%s: a truncated shared object: its %s end%s at byte "
                      "%ju, the file has %ju bytes (copied or built only in "
                      "part?)",
                      util_shown(shown, sizeof shown, path, 160), what,
                      what[strlen(what) - 1] == 's' ? "" : "s", (uintmax_t)need,
                      (uintmax_t)size);
}

/* The program headers of h within the file, and each segment's bytes. */
static int segments(int fd, const char *path, const ElfW(Ehdr) * h,
                    uint64_t size, struct aia_error *err)
{
    uint64_t end;
    if (h->e_phnum == 0)
        return 0;
    if (h->e_phentsize != sizeof(ElfW(Phdr)) || h->e_phnum > MAX_PHDRS)
        return 0; /* not for this machine's loader: dlopen says so */
    if (!table_within(h->e_phoff, h->e_phnum, h->e_phentsize, size, &end))
        return truncated(path, "program headers", end, size, err);
    ElfW(Phdr) *ph = malloc(h->e_phnum * sizeof *ph);
    if (!ph)
        return aia_seterr(err, "%s: out of memory", path);
    int rc = 0;
    size_t len = h->e_phnum * sizeof *ph;
    if (read_at(fd, ph, len, h->e_phoff) != (ssize_t)len)
        rc = aia_seterr(err, "%s: cannot read its program headers: %s", path,
                        strerror(errno ? errno : EIO));
    for (size_t i = 0; rc == 0 && i < h->e_phnum; i++) {
        uint64_t off = ph[i].p_offset, n = ph[i].p_filesz;
        if (ph[i].p_type != PT_LOAD && ph[i].p_type != PT_DYNAMIC)
            continue;
        if (!within(off, n, size))
            rc = truncated(path,
                           ph[i].p_type == PT_LOAD ? "loadable segment"
                                                   : "dynamic section",
                           off + n < off ? UINT64_MAX : off + n, size, err);
    }
    free(ph);
    return rc;
}

/* The section headers of h within the file (their count may be in the
 * first one's sh_size, when there are 0xff00 or more). */
static int sections(int fd, const char *path, const ElfW(Ehdr) * h,
                    uint64_t size, struct aia_error *err)
{
    uint64_t count = h->e_shnum, end;
    if (h->e_shoff == 0)
        return 0;
    if (h->e_shentsize != sizeof(ElfW(Shdr)))
        return 0; /* dlopen does not read them; nor do we */
    if (!within(h->e_shoff, sizeof(ElfW(Shdr)), size))
        return truncated(path, "section headers", h->e_shoff + h->e_shentsize,
                         size, err);
    if (count == 0) {
        ElfW(Shdr) first;
        if (read_at(fd, &first, sizeof first, h->e_shoff) != sizeof first)
            return aia_seterr(err, "%s: cannot read its section headers", path);
        count = first.sh_size;
    }
    if (!table_within(h->e_shoff, count, h->e_shentsize, size, &end))
        return truncated(path, "section headers", end, size, err);
    return 0;
}

int elfcheck_file(const char *path, struct aia_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return 0; /* dlopen names what is wrong with it */
    }
    uint64_t size = (uint64_t)st.st_size;
    ElfW(Ehdr) h;
    memset(&h, 0, sizeof h);
    ssize_t got = read_at(fd, &h, sizeof h, 0);
    int rc = 0;
    if (got < SELFMAG || memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 ||
        (got > EI_DATA &&
         (h.e_ident[EI_CLASS] != CLASS || h.e_ident[EI_DATA] != ORDER)))
        goto out; /* not ELF, or not this machine's: dlopen refuses it */
    if (got < (ssize_t)sizeof h) {
        rc = truncated(path, "ELF header", sizeof h, size, err);
        goto out;
    }
    rc = segments(fd, path, &h, size, err);
    if (rc == 0)
        rc = sections(fd, path, &h, size, err);
out:
    close(fd);
    return rc < 0 ? -1 : 0;
}

/* The bound on one dlopen, and the status to leave with past it; the
 * message is made before the alarm is set, since the handler may only
 * write it. */
static unsigned bound_s;
static int bound_status;
static char bound_msg[400];
static size_t bound_len;

static void load_timeout(int signo)
{
    (void)signo;
    if (write(STDERR_FILENO, bound_msg, bound_len) < 0)
        _exit(bound_status);
    _exit(bound_status);
}

void elfcheck_bound(unsigned seconds, int status)
{
    bound_s = seconds;
    bound_status = status;
}

void *elfcheck_dlopen(const char *path, struct aia_error *err)
{
    if (elfcheck_file(path, err) < 0)
        return NULL;
    struct sigaction sa, old;
    if (bound_s) {
        char shown[200];
        int n = snprintf(bound_msg, sizeof bound_msg,
                         "aiarun: %s: loading it did not end within %u s "
                         "(a constructor that never returns?)\n",
                         util_shown(shown, sizeof shown, path, 160), bound_s);
        bound_len = n < 0                          ? 0
                    : (size_t)n < sizeof bound_msg ? (size_t)n
                                                   : sizeof bound_msg - 1;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = load_timeout;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, &old);
        alarm(bound_s);
    }
    dlerror();
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (bound_s) {
        alarm(0);
        sigaction(SIGALRM, &old, NULL);
    }
    if (!dl) {
        const char *why = dlerror();
        aia_seterr(err, "%s: not a loadable shared object: %s", path,
                   why ? why : "unknown error");
    }
    return dl;
}

int elfcheck_symbol(const void *h, size_t size, const char *name,
                    const char *path, struct aia_error *err)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (dladdr1(h, &info, (void **)&sym, RTLD_DL_SYMENT) && sym) {
        int type = ELF64_ST_TYPE(sym->st_info);
        if (type != STT_OBJECT)
            return aia_seterr(err,
                              "%s: %s is %s, not data: a descriptor is a "
                              "const struct",
                              path, name,
                              type == STT_FUNC ? "a function"
                                               : "not a data object");
        if (sym->st_size && sym->st_size < size)
            return aia_seterr(err,
                              "%s: %s is %zu bytes, fewer than a "
                              "descriptor's header (%zu)",
                              path, name, (size_t)sym->st_size, size);
    }
    if ((uintptr_t)h % _Alignof(struct aia_plugin_header) != 0)
        return aia_seterr(err, "%s: %s is not aligned as a descriptor is", path,
                          name);
    return 0;
}
