/* buffers.c - message buffers (runtime/core/util.c): whole 64-byte lines,
 * aligned and zeroed; from 2 MiB, aligned to a huge page and marked for
 * huge pages (the "hg" flag of the mapping in /proc/self/smaps), which is
 * what makes the kernel's copy of a large message between ranks cheap
 * (bench/ANALYSIS.md, "Case large: huge pages"). */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tap.h"

#define HUGE_PAGE ((size_t)2 << 20)

static int zeroed(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* The VmFlags of the mapping holding p: 1 when they include flag, 0 when
 * not, -1 when smaps cannot say. */
static int mapping_has(const void *p, const char *flag)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0, found = -1;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') &&
            line[0] != 'V') {
            in = a >= lo && a < hi;
            continue;
        }
        if (in && strncmp(line, "VmFlags:", 8) == 0) {
            char want[8];
            snprintf(want, sizeof want, " %s", flag);
            found = strstr(line, want) != NULL;
            break;
        }
    }
    fclose(f);
    return found;
}

int main(void)
{
    plan(8);
    unsigned char *small = util_alloc_aligned(100);
    ok(small && (uintptr_t)small % 64 == 0, "100 bytes: aligned to 64");
    ok(small && zeroed(small, 128), "and zeroed to the end of its last line");
    free(small);

    size_t big = 3 * HUGE_PAGE + 1000;
    unsigned char *p = util_alloc_aligned(big);
    ok(p != NULL, "%zu bytes allocated", big);
    if (!p)
        bail_out("out of memory");
    ok((uintptr_t)p % HUGE_PAGE == 0, "from 2 MiB: aligned to a huge page");
    ok(zeroed(p, big), "and zeroed");
    int hg = mapping_has(p, "hg");
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (thp)
        fclose(thp);
    if (!thp)
        ok(1, "# SKIP the kernel has no transparent huge pages");
    else if (hg < 0)
        ok(1, "# SKIP /proc/self/smaps says nothing of the mapping");
    else
        ok(hg == 1, "its mapping asks for huge pages (VmFlags hg)");
    free(p);

    unsigned char *q = util_alloc_aligned(HUGE_PAGE - 64);
    ok(q && (uintptr_t)q % 64 == 0, "just under 2 MiB: aligned to 64");
    int qhg = q ? mapping_has(q, "hg") : -1;
    ok(qhg != 1, "and left on small pages");
    free(q);
    return done_testing();
}
