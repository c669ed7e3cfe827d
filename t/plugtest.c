/* plugtest.c - plugins for unit tests, loaded the way aiarun loads them. */
#include <config.h>

#include "plugtest.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "conf/manifest.h"
#include "core/host.h"
#include "conf/params.h"
#include "tap.h"

static void stub_log(const struct aia_host *host, int level, const char *fmt,
                     ...)
{
    (void)host;
    (void)level;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    diag("plugin says: %s", buf);
}

static double stub_now(const struct aia_host *host)
{
    (void)host;
    return 0;
}

/* The runtime's table with the log in TAP comments and a clock that
 * stands still: the rules plugins ask for (partitions, steps) are the
 * runtime's own. */
static const struct aia_host *stub_host(void)
{
    static struct aia_host h;
    if (!h.size) {
        h = *host_get();
        h.log = stub_log;
        h.now = stub_now;
    }
    return &h;
}

void plugtest_load(struct plugtest *t, const char *name, int kind,
                   const char *yaml)
{
    struct aia_error err;
    memset(t, 0, sizeof *t);
    if (!(t->p = loader_open(name, kind, NULL, &err)))
        bail_out("cannot load %s: %s", name, err.text);
    struct mnode *n = mnode_parse_value(yaml ? yaml : "{}", &err);
    if (!n)
        bail_out("bad test parameters %s: %s", yaml, err.text);
    t->args = params_bind("test", name, n, NULL, t->p->h->params, NULL,
                          t->p->h->name, &err);
    mnode_free(n);
    if (!t->args)
        bail_out("cannot bind %s: %s", yaml, err.text);
}

void plugtest_free(struct plugtest *t)
{
    params_free(t->args);
    loader_close(t->p);
}

struct aia_context plugtest_ctx(const struct aia_value *args, int role,
                                int rank, int nworkers, uint64_t seed)
{
    return (struct aia_context){
        .size = sizeof(struct aia_context),
        .role = (uint32_t)role,
        .rank = rank,
        .worker = rank - 1,
        .nworkers = nworkers,
        .seed = seed,
        .args = args,
        .jobdir = ".",
        .host = stub_host(),
    };
}
