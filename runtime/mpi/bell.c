/* bell.c - doorbells between the ranks of a node: a futex word per rank
 * in a shared page (shm_open), rung by senders, waited on by sleepers. */
#include <config.h>

#define _GNU_SOURCE 1 /* syscall */

#include "bell.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#include "core/util.h"

#if defined(__linux__) && defined(SYS_futex) && defined(HAVE_SHM_OPEN)
#define BELL_POSSIBLE 1
#else
#define BELL_POSSIBLE 0
#endif

/* One rank's bell on a cache line of its own: a ring writes only the
 * receiver's line. */
struct bell {
    uint32_t count;   /* rings so far; the futex word */
    uint32_t waiting; /* 1 while the rank is (about to be) asleep on it */
    char pad[56];
};

static struct bell *bells;  /* the node's bells, by node rank */
static size_t bells_bytes;  /* their mapping's size */
static int *node_of;        /* world rank -> node rank, -1: other node */
static int world_size;      /* node_of's length */
static struct bell *mine;   /* this rank's */
static int use_bells = 1;   /* bell_use */
static char state[160] = "doorbells: not set up";

#if BELL_POSSIBLE
static long futex(uint32_t *word, int op, uint32_t val,
                  const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/* Node rank 0 creates the page and names it; every rank maps it.  Returns
 * the mapping, or NULL with why in state. */
static struct bell *share(MPI_Comm node, int me, int n)
{
    char name[64] = "";
    bells_bytes = (size_t)n * sizeof(struct bell);
    int fd = -1;
    if (me == 0) {
        static unsigned serial;
        snprintf(name, sizeof name, "/aiarun-bell-%ld-%u", (long)getpid(),
                 serial++);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 && ftruncate(fd, (off_t)bells_bytes) != 0) {
            close(fd);
            shm_unlink(name);
            fd = -1;
        }
        if (fd < 0) {
            snprintf(state, sizeof state, "doorbells: off (shm_open: %s)",
                     strerror(errno));
            name[0] = '\0';
        }
    }
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, node);
    if (name[0] == '\0') {
        if (me != 0)
            snprintf(state, sizeof state,
                     "doorbells: off (the node's first rank could not share "
                     "a page)");
        return NULL;
    }
    if (me != 0)
        fd = shm_open(name, O_RDWR, 0600);
    void *p = MAP_FAILED;
    if (fd >= 0) {
        p = mmap(NULL, bells_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                 0);
        close(fd);
    }
    int ok = p != MAP_FAILED, all = 0;
    if (!ok)
        snprintf(state, sizeof state, "doorbells: off (mapping %s: %s)",
                 name, strerror(errno));
    /* every rank of the node maps it or none uses it; then the name goes,
     * the mappings stay */
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, node);
    if (me == 0)
        shm_unlink(name);
    if (!all) {
        if (ok) {
            munmap(p, bells_bytes);
            snprintf(state, sizeof state,
                     "doorbells: off (a rank of the node could not map "
                     "the page)");
        }
        return NULL;
    }
    return p;
}
#endif

void bell_setup(MPI_Comm node)
{
#if BELL_POSSIBLE
    int me = 0, n = 0, world = 0;
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &n);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    bells = share(node, me, n);
    if (!bells)
        return;
    node_of = malloc((size_t)world * 2 * sizeof *node_of);
    MPI_Group wg, ng;
    int ok = node_of != NULL &&
             MPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS;
    if (ok && MPI_Comm_group(node, &ng) == MPI_SUCCESS) {
        int *ranks = node_of + world;
        for (int r = 0; r < world; r++)
            ranks[r] = r;
        ok = MPI_Group_translate_ranks(wg, world, ranks, ng, node_of) ==
             MPI_SUCCESS;
        MPI_Group_free(&ng);
        MPI_Group_free(&wg);
    } else if (ok) {
        MPI_Group_free(&wg);
        ok = 0;
    }
    /* a rank without the table only rings no one: it still sleeps on its
     * bell, with the timeout */
    if (ok) {
        world_size = world;
        for (int r = 0; r < world; r++)
            if (node_of[r] == MPI_UNDEFINED || node_of[r] < 0 ||
                node_of[r] >= n)
                node_of[r] = -1;
    } else {
        free(node_of);
        node_of = NULL;
    }
    mine = &bells[me];
    snprintf(state, sizeof state, "doorbells: on (%d ranks on this node)",
             n);
#else
    (void)node;
    snprintf(state, sizeof state,
             "doorbells: off (no futexes or shm_open on this system)");
#endif
}

void bell_use(int on)
{
    use_bells = on;
}

const char *bell_state(void)
{
    return state;
}

void bell_ring(int dest)
{
#if BELL_POSSIBLE
    if (!node_of || dest < 0 || dest >= world_size)
        return;
    int i = node_of[dest];
    if (i < 0)
        return;
    struct bell *b = &bells[i];
    __atomic_fetch_add(&b->count, 1, __ATOMIC_SEQ_CST);
    /* the receiver sets waiting before it reads the count it sleeps on:
     * either it reads the new count and does not sleep, or this sees
     * waiting and wakes it */
    if (__atomic_load_n(&b->waiting, __ATOMIC_SEQ_CST))
        futex(&b->count, FUTEX_WAKE, INT_MAX, NULL);
#else
    (void)dest;
#endif
}

int bell_isend(const void *buf, int count, int dest, int tag,
               MPI_Request *req)
{
    int rc = MPI_Isend(buf, count, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req);
    if (rc == MPI_SUCCESS)
        bell_ring(dest);
    return rc;
}

int bell_send(const void *buf, int count, int dest, int tag)
{
    int rc = MPI_Send(buf, count, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        bell_ring(dest);
    return rc;
}

long bell_arm(void)
{
    if (!mine || !use_bells)
        return -1;
    __atomic_store_n(&mine->waiting, 1, __ATOMIC_SEQ_CST);
    return (long)__atomic_load_n(&mine->count, __ATOMIC_SEQ_CST);
}

void bell_sleep(long ticket, double s)
{
#if BELL_POSSIBLE
    if (ticket >= 0 && mine) {
        if (s > 0) {
            struct timespec ts;
            ts.tv_sec = (time_t)s;
            ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
            /* returns at a ring, at the timeout, at a signal, or at once
             * when the count moved past the ticket already */
            futex(&mine->count, FUTEX_WAIT, (uint32_t)ticket, &ts);
        }
        __atomic_store_n(&mine->waiting, 0, __ATOMIC_SEQ_CST);
        return;
    }
#else
    (void)ticket;
#endif
    util_sleep(s);
}
