/* util.c - message buffers, clock, paths, files and number parsing for
 * the runtime. */
#include <config.h>

#define _DEFAULT_SOURCE 1 /* posix_memalign, madvise */

#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A buffer this large starts on a huge page's boundary and asks for huge
 * pages (where the kernel gives them on request only, as with
 * transparent_hugepage=madvise): a message's copy between ranks by the
 * kernel (Open MPI's single-copy transfer) pins the buffer's pages at
 * every message, and 4 KiB pages made that most of a large round's cost
 * (bench/ANALYSIS.md, "Case large: huge pages"). */
#define UTIL_HUGE_PAGE ((size_t)2 << 20)

void *util_alloc_aligned(size_t bytes)
{
    size_t rounded = bytes ? (bytes + 63) / 64 * 64 : 64;
    size_t align = rounded >= UTIL_HUGE_PAGE ? UTIL_HUGE_PAGE : 64;
    void *p = NULL;
    if (posix_memalign(&p, align, rounded) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    /* the whole huge pages inside the buffer; a refusal (no THP) leaves
     * small pages, which work the same */
    if (align == UTIL_HUGE_PAGE)
        (void)madvise(p, rounded / UTIL_HUGE_PAGE * UTIL_HUGE_PAGE,
                      MADV_HUGEPAGE);
#endif
    memset(p, 0, rounded);
    return p;
}

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void util_sleep(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

char *util_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

char *util_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    size_t k = la;
    if (la > 0 && a[la - 1] != '/')
        s[k++] = '/';
    memcpy(s + k, b, lb + 1);
    return s;
}

char *util_normpath(const char *path)
{
    size_t n = strlen(path), k = 0;
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    if (path[0] == '/')
        out[k++] = '/';
    for (const char *s = path; *s;) {
        while (*s == '/')
            s++;
        size_t len = strcspn(s, "/");
        if (len == 0)
            break;
        if (!(len == 1 && s[0] == '.')) {
            if (k > 0 && out[k - 1] != '/')
                out[k++] = '/';
            memcpy(out + k, s, len);
            k += len;
        }
        s += len;
    }
    if (k == 0)
        out[k++] = '.';
    out[k] = '\0';
    return out;
}

int util_mul(size_t a, size_t b, size_t *out)
{
    size_t p;
    if (__builtin_mul_overflow(a, b, &p))
        return -1;
    *out = p;
    return 0;
}

int util_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return cap + 1;
    /* rows i - 2, i - 1 and i of the table, at i % 3: two neighbours
     * swapped ("sdg" for "sgd") is one edit, as it is one slip */
    int rows[3][65];
    for (size_t j = 0; j <= lb; j++)
        rows[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int *cur = rows[i % 3], *up = rows[(i - 1) % 3],
            *up2 = rows[(i + 1) % 3];
        int best = cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int v = up[j - 1] + (a[i - 1] != b[j - 1]);
            if (up[j] + 1 < v)
                v = up[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && up2[j - 2] + 1 < v)
                v = up2[j - 2] + 1;
            cur[j] = v;
            if (v < best)
                best = v;
        }
        if (best > cap)
            return cap + 1;
    }
    int d = rows[la % 3][lb];
    return d > cap ? cap + 1 : d;
}

/* cand as a suggestion for name: edits, twice, less one where cand has
 * name's letters (a slip of order, not of letters); 99 beyond 2 edits. */
static int suggest_score(const char *name, const char *cand)
{
    int d = util_distance(name, cand, 2), count[256] = {0}, same = 1;
    if (d > 2)
        return 99;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        count[*p]++;
    for (const unsigned char *p = (const unsigned char *)cand; *p; p++)
        count[*p]--;
    for (int k = 0; k < 256; k++)
        same &= count[k] == 0;
    return 2 * d - same;
}

/* Keep cand (its first len bytes) in best when it is a better
 * suggestion for name than best, whose score is *score. */
static void suggest_offer(const char *name, const char *cand, size_t len,
                          int *score, char *best, size_t size)
{
    char c[256];
    snprintf(c, sizeof c, "%.*s", (int)(len < 255 ? len : 255), cand);
    int d = suggest_score(name, c);
    if (d < *score || (d == *score && d < 99 && strcmp(c, best) < 0)) {
        *score = d;
        snprintf(best, size, "%s", c);
    }
}

int util_closest(const char *name, const char *ext, const char *const *names,
                 char *const *dirs, char *best, size_t size)
{
    size_t len = strlen(name), elen = strlen(ext);
    char bare[256];
    if (len > elen && strcmp(name + len - elen, ext) == 0)
        len -= elen;
    snprintf(bare, sizeof bare, "%.*s", (int)(len < 255 ? len : 255), name);
    int score = 99;
    *best = '\0';
    for (; names && *names; names++)
        suggest_offer(bare, *names, strlen(*names), &score, best, size);
    for (; dirs && *dirs; dirs++) {
        DIR *dir = opendir(*dirs);
        struct dirent *e;
        while (dir && (e = readdir(dir))) {
            size_t n = strlen(e->d_name);
            if (n > elen && strcmp(e->d_name + n - elen, ext) == 0)
                suggest_offer(bare, e->d_name, n - elen, &score, best, size);
        }
        if (dir)
            closedir(dir);
    }
    return score < 99;
}

char *util_read_file(const char *path, size_t max, size_t *len,
                     struct aia_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        aia_seterr(err, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        char shown[200];
        aia_seterr(err,
                   "%s: not a regular file (%s): it is read from a "
                   "regular file only",
                   util_shown(shown, sizeof shown, path, 160),
                   util_kind(st.st_mode));
        return NULL;
    }
    /* a regular file: reads block (a file system may say EAGAIN) */
    FILE *f = fcntl(fd, F_SETFL, 0) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        aia_seterr(err, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        goto nomem;
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n > max) {
            aia_seterr(err, "%s: larger than %zu bytes", path, max);
            goto fail;
        }
        if (got == 0)
            break;
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb)
                goto nomem;
            buf = nb;
            cap *= 2;
        }
    }
    if (ferror(f)) {
        aia_seterr(err, "%s: read error: %s", path, strerror(errno));
        goto fail;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
nomem:
    aia_seterr(err, "%s: out of memory", path);
fail:
    free(buf);
    fclose(f);
    return NULL;
}

const char *util_shown(char *buf, size_t len, const char *s, size_t max)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0, i = 0;
    if (len == 0)
        return buf;
    for (; s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        /* a UTF-8 continuation byte never starts a cut */
        int cut = i >= max && (c & 0xc0) != 0x80;
        char esc[5] = {(char)c, 0};
        if (c == '\t' || c == '\n' || c == '\r')
            esc[0] = '\\', esc[1] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
        else if (c < 0x20 || c == 0x7f)
            esc[0] = '\\', esc[1] = 'x', esc[2] = hex[c >> 4],
            esc[3] = hex[c & 15];
        size_t n = strlen(esc);
        /* room for this character and for a "..." after it */
        if (cut || k + n + 4 > len)
            break;
        memcpy(buf + k, esc, n);
        k += n;
    }
    if (s[i] && k + 4 <= len) {
        /* stopped inside a character: drop its first bytes too */
        if (((unsigned char)s[i] & 0xc0) == 0x80) {
            while (k > 0 && ((unsigned char)buf[k - 1] & 0xc0) == 0x80)
                k--;
            if (k > 0 && (unsigned char)buf[k - 1] >= 0xc0)
                k--;
        }
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k < len ? k : len - 1] = '\0';
    return buf;
}

const char *util_error_text(struct aia_error *err)
{
    char raw[AIA_ERROR_LEN];
    memcpy(raw, err->text, sizeof raw);
    raw[sizeof raw - 1] = '\0';
    if (!raw[0])
        snprintf(raw, sizeof raw, "(no reason given)");
    util_shown(err->text, sizeof err->text, raw, sizeof raw);
    return err->text;
}

int util_parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* ERANGE on a finite value is underflow: v is the nearest double (0
     * or a denormal), which the caller's bounds judge */
    if (end == s || *end != '\0' || !isfinite(v) ||
        (errno == ERANGE && fabs(v) >= DBL_MIN))
        return 0;
    *out = v;
    return 1;
}

int util_parse_int(const char *s, int64_t *out)
{
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end != s && *end == '\0' && errno == 0) {
        *out = v;
        return 1;
    }
    double d;
    if (!util_parse_double(s, &d) || d != floor(d) || fabs(d) >= 0x1p63)
        return 0;
    *out = (int64_t)d;
    return 1;
}

const char *util_kind(unsigned mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISDIR(mode)  ? "a folder"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISLNK(mode)  ? "a symbolic link"
           : S_ISREG(mode)  ? "a regular file"
                            : "not a file";
}

int util_regular_input(const char *path, struct aia_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || S_ISREG(sb.st_mode))
        return 0; /* a missing file is the reader's to name */
    const char *what = util_kind(sb.st_mode);
    char shown[200];
    return aia_seterr(err,
                      "%s: not a regular file (%s): data is read from "
                      "regular files only",
                      util_shown(shown, sizeof shown, path, 120), what);
}
