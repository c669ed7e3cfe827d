/* descriptors.c - a plugin's descriptor is its type: const, shared by
 * every instance (the simulator's N + 1 on one process) and never written
 * after load.  Every plugin built (the folders of AIARUN_PLUGIN_PATH, the
 * python problem and algorithm among them when they are built: one file
 * with both descriptors) and every built-in wait
 * condition is loaded through the real loader, its descriptor's bytes
 * kept, a job run on it in this process as the runtime runs one, and the
 * bytes compared.  What differs between instances, a python class's
 * metric or optimum, is asked of the instance (loader_offers). */
#include <config.h>

#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>

#include "algtest.h"
#include "core/builtin.h"
#include "core/host.h"
#include "tap.h"

#define MAX_PLUGINS 64
#define WORKERS 3
#define ROWS 30 /* of every problem's data */
#define COLS 4
#define CLASSES 3

struct loaded {
    struct plugtest t;
    int kind;
    unsigned char *snap; /* the descriptor's bytes at load */
};

static struct loaded all[MAX_PLUGINS];
static int nall;

/* Parameters of the problems of aiarun whose defaults need a data file or
 * are large; a problem not named here runs on its defaults. */
static const struct {
    const char *name, *yaml;
    int data; /* run on rows handed in, as problem.data */
} problem_jobs[] = {
    {"lrmse", "{rows: 30, cols: 4}", 0},
    {"logreg", "{rows: 30, cols: 4}", 0},
    {"pca", "{rows: 30, cols: 5}", 0},
    {"softmax", "{classes: 3}", 1},
    {"mlp", "{classes: 3, hidden: [3]}", 1},
    /* a class with a metric, an optimum and a smoothness, whose rows are
     * those its partition names (the bridge asks the runtime) */
    {"python", "{class: descq:Quad}", 0},
};

static const char quad_py[] =
    "import numpy as np\n"
    "class Quad:\n"
    "    metric_name = 'closeness'\n"
    "    def __init__(self, rows=30):\n"
    "        self.m = int(rows)\n"
    "    def open(self, ctx):\n"
    "        mine = ctx.partition.rows(self.m)\n"
    "        self.rows = len(mine)\n"
    "        r = mine.astype(float) / self.m\n"
    "        self.c = np.stack([r, -r, np.ones_like(r)], axis=1)\n"
    "        return 3\n"
    "    def loss(self, x):\n"
    "        d = self.c - x\n"
    "        return 0.5 * float((d * d).sum()) / max(self.rows, 1)\n"
    "    def gradient(self, x, idx, g):\n"
    "        c = self.c if idx is None else self.c[idx]\n"
    "        g[:] = x - c.mean(axis=0)\n"
    "    def metric(self, x):\n"
    "        return -float(x @ x)\n"
    "    def smoothness(self):\n"
    "        return 1.0\n"
    "    def optimum(self):\n"
    "        x = self.c.mean(axis=0)\n"
    "        return x, self.loss(x)\n"
    "class BadName(Quad):\n"
    "    metric_name = 'acc-ur\\tacy'\n"
    "class Step:\n"
    "    def create(self, ctx):\n"
    "        self.ctx, self.x, self.g = ctx, np.zeros(ctx.dim), None\n"
    "    def init(self, q):\n"
    "        q[:] = self.x\n"
    "    def worker(self, q, a, step):\n"
    "        self.ctx.gradient(q, out=a)\n"
    "    def absorb(self, a, info):\n"
    "        self.g = a.copy()\n"
    "    def query(self, q):\n"
    "        if self.g is not None:\n"
    "            self.x -= 0.01 * self.g\n"
    "        return self.x\n"
    "    def save(self):\n"
    "        return self.x\n"
    "    def load(self, s):\n"
    "        self.x[:] = s\n";

static double X[ROWS * COLS], Y[ROWS];
static size_t ids[ROWS];

static void make_rows(void)
{
    struct aia_rng g;
    aia_rng_seed(&g, 5, 1);
    for (size_t i = 0; i < ROWS; i++) {
        ids[i] = i;
        Y[i] = (double)aia_rng_below(&g, CLASSES);
        for (size_t j = 0; j < COLS; j++)
            X[i * COLS + j] = aia_rng_normal(&g) + (j == Y[i] ? 1.5 : 0);
    }
}

/* Rows first .. first + rows - 1 as problem.data hands them. */
static struct aia_dataset rows_of(size_t first, size_t rows)
{
    struct aia_dataset d = {0};
    d.rows = rows;
    d.cols = COLS;
    d.total_rows = ROWS;
    d.row_ids = ids + first;
    d.y = Y + first;
    d.x = X + first * COLS;
    d.source = "rows.csv";
    return d;
}

static void keep(const char *name, int kind, const char *yaml)
{
    if (nall == MAX_PLUGINS)
        bail_out("more than %d plugins", MAX_PLUGINS);
    struct loaded *l = &all[nall++];
    plugtest_load(&l->t, name, kind, yaml);
    l->kind = kind;
    if (!(l->snap = malloc(l->t.p->h->size)))
        bail_out("out of memory");
    memcpy(l->snap, l->t.p->h, l->t.p->h->size);
}

/* Whether file exports the descriptor of kind. */
static int exports(const char *file, int kind)
{
    void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        bail_out("%s: %s", file, dlerror());
    int has = dlsym(dl, loader_symbol(kind)) != NULL;
    dlclose(dl);
    return has;
}

/* Every plugin file in AIARUN_PLUGIN_PATH's folders, by its path. */
static void load_files(void)
{
    const char *env = getenv("AIARUN_PLUGIN_PATH");
    char *path = strdup(env ? env : ""), *save = NULL;
    for (char *dir = strtok_r(path, ":", &save); dir;
         dir = strtok_r(NULL, ":", &save)) {
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));) {
            size_t n = strlen(e->d_name);
            if (n < 4 || strcmp(e->d_name + n - 3, ".so") != 0)
                continue;
            char file[4096], name[256];
            snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
            snprintf(name, sizeof name, "%.*s", (int)(n - 3), e->d_name);
            for (int kind = AIA_KIND_ALGORITHM; kind <= AIA_KIND_WAIT; kind++) {
                const char *yaml = NULL;
                if (!exports(file, kind))
                    continue;
                for (size_t i = 0;
                     kind == AIA_KIND_PROBLEM &&
                     i < sizeof problem_jobs / sizeof *problem_jobs;
                     i++)
                    if (strcmp(problem_jobs[i].name, name) == 0)
                        yaml = problem_jobs[i].yaml;
                /* the python algorithm: a class stepping along answers */
                if (kind == AIA_KIND_ALGORITHM && strcmp(name, "python") == 0)
                    yaml = "{class: descq:Step}";
                keep(file, kind, yaml);
            }
        }
        if (d)
            closedir(d);
    }
    free(path);
    for (size_t i = 0; builtin_all[i]; i++)
        keep(builtin_all[i]->name, (int)builtin_all[i]->kind, NULL);
}

static const struct loaded *find(const char *name, int kind)
{
    for (int i = 0; i < nall; i++)
        if (all[i].kind == kind && strcmp(all[i].t.p->h->name, name) == 0)
            return &all[i];
    bail_out("%s was not built", name);
}

static int wants_data(const char *name)
{
    for (size_t i = 0; i < sizeof problem_jobs / sizeof *problem_jobs; i++)
        if (strcmp(problem_jobs[i].name, name) == 0)
            return problem_jobs[i].data;
    return 0;
}

/* A job of gd on problem l over WORKERS workers, the problem's instances
 * asked what the runtime asks: what each offers, the facts' smoothness,
 * rounds of answers, the workers' loss and metric, the coordinator's
 * optimum and the rows' summaries. */
static void problem_job(const struct loaded *l, const struct loaded *gd)
{
    const struct aia_problem_plugin *P = (const void *)l->t.p->h;
    const struct aia_algorithm_plugin *A = (const void *)gd->t.p->h;
    const char *name = P->h.name;
    struct aia_error err;
    int data = wants_data(name);
    double weights[WORKERS] = {1, 2, 3};
    void *ps[WORKERS + 1], *as[WORKERS + 1];
    struct aia_dataset ds[WORKERS + 1];
    size_t dim = 0, at = 0;
    for (int r = 0; r <= WORKERS; r++) {
        struct aia_partition part = {r ? r - 1 : AIA_PART_ALL, WORKERS,
                                     AIA_PART_CYCLIC, 0, weights};
        struct aia_context ctx =
            plugtest_ctx(l->t.args, r ? AIA_ROLE_WORKER : AIA_ROLE_COORDINATOR,
                         r, WORKERS, 7);
        size_t k = r ? ROWS / WORKERS : 0;
        ds[r] = rows_of(at, k);
        at += k;
        ctx.data = data ? &ds[r] : NULL;
        if (P->open(&ctx, &part, &ps[r], &err) < 0)
            bail_out("%s: open rank %d: %s", name, r, err.text);
        uint32_t what;
        const char *metric;
        if (loader_offers(P, ps[r], &what, &metric, &err) < 0)
            bail_out("%s: rank %d: %s", name, r, err.text);
        dim = P->dim(ps[r]);
        /* the bridge's rows are the runtime's: Python asks the host */
        if (strcmp(name, "python") == 0 && r > 0)
            is_int((long long)P->rows(ps[r]),
                   (long long)aia_owned_rows(host_get(), &part, ROWS, NULL),
                   "python: worker %d holds the rows the runtime deals it",
                   r - 1);
        if (strcmp(name, "python") == 0)
            is_int((long long)what,
                   r ? AIA_OFFER_METRIC | AIA_OFFER_SMOOTHNESS
                     : AIA_OFFER_METRIC | AIA_OFFER_SMOOTHNESS |
                           AIA_OFFER_OPTIMUM,
                   "python: rank %d offers what the class has (the "
                   "optimum on the coordinator)",
                   r);
    }
    struct aia_problem_facts facts = {.size = sizeof facts, .rows = ROWS};
    double L;
    if (loader_offered(P, ps[1], AIA_OFFER_SMOOTHNESS) &&
        P->smoothness(ps[1], &L, &err) == 0)
        facts.smoothness = facts.smallest = facts.largest = L;
    size_t qlen = 0;
    for (int r = 0; r <= WORKERS; r++) {
        struct aia_context ctx =
            plugtest_ctx(gd->t.args, r ? AIA_ROLE_WORKER : AIA_ROLE_COORDINATOR,
                         r, WORKERS, 7);
        ctx.problem = P;
        ctx.problem_state = ps[r];
        ctx.facts = &facts;
        struct aia_shape shape;
        if (A->create(&ctx, &shape, &as[r], &err) < 0)
            bail_out("%s: gd on rank %d: %s", name, r, err.text);
        qlen = shape.query_len;
    }
    double *q = calloc(qlen + dim + 1, sizeof *q), *a = q + qlen;
    if (!q || A->init(as[0], q, &err) < 0)
        bail_out("%s: init: %s", name, err.text);
    for (uint64_t round = 1; round <= 4; round++) {
        for (int w = 1; w <= WORKERS; w++) {
            struct aia_step step = {.round = round, .answers = round - 1};
            struct aia_answer_info info = {.rank = w,
                                           .worker = w - 1,
                                           .round = round,
                                           .sent_round = round,
                                           .rows = P->rows(ps[w]),
                                           .total_rows = ROWS};
            if (A->worker(as[w], q, a, &step, &err) < 0 ||
                A->absorb(as[0], a, &info, &err) < 0)
                bail_out("%s: round %llu: %s", name, (unsigned long long)round,
                         err.text);
        }
        if (A->query(as[0], q, &err) < 0)
            bail_out("%s: query: %s", name, err.text);
    }
    double f, m, xs[64];
    for (int w = 1; w <= WORKERS; w++)
        if (P->loss(ps[w], q, &f, &err) < 0 ||
            (loader_offered(P, ps[w], AIA_OFFER_METRIC) &&
             P->metric(ps[w], q, &m, &err) < 0))
            bail_out("%s: evaluation on worker %d: %s", name, w - 1, err.text);
    if (P->summary_len && P->summary_len(ps[0]) > 0) {
        size_t n = P->summary_len(ps[0]);
        double *sum = calloc(2 * n, sizeof *sum);
        for (int w = 1; sum && w <= WORKERS; w++) {
            if (P->summarize(ps[w], sum + n, &err) < 0)
                bail_out("%s: summarize: %s", name, err.text);
            for (size_t i = 0; i < n; i++)
                sum[i] += sum[n + i];
        }
        if (!sum || P->combine(ps[0], sum, &err) < 0)
            bail_out("%s: combine: %s", name, err.text);
        free(sum);
    }
    /* an optimum that cannot be had is reported, not a failure */
    if (dim <= sizeof xs / sizeof *xs &&
        loader_offered(P, ps[0], AIA_OFFER_OPTIMUM))
        P->optimum(ps[0], xs, &f, &err);
    free(q);
    for (int r = 0; r <= WORKERS; r++) {
        A->destroy(as[r]);
        P->close(ps[r]);
    }
}

/* A job of algorithm l on lrmse (on pca for a block method): rounds with
 * a lagging worker, the model, and its checkpoint saved. */
static void algorithm_job(const struct loaded *l, const struct loaded *lrmse)
{
    struct algtest t;
    algtest_open(&t, &l->t, &lrmse->t, 4, NULL, 7);
    algtest_rounds(&t, 6, 3, 2);
    algtest_model(&t);
    if (t.alg->state_size) {
        struct aia_error err;
        size_t len = t.alg->state_size(t.as[0]);
        void *buf = malloc(len ? len : 1);
        if (!buf || t.alg->save(t.as[0], buf, &err) < 0)
            bail_out("%s: save", t.alg->h.name);
        free(buf);
    }
    algtest_close(&t);
}

/* A job of wait condition l: rounds over a pool of four. */
static void wait_job(const struct loaded *l)
{
    const struct aia_wait_plugin *W = (const void *)l->t.p->h;
    struct aia_context ctx =
        plugtest_ctx(l->t.args, AIA_ROLE_COORDINATOR, 0, 4, 7);
    int ranks[4] = {1, 2, 3, 4};
    uint64_t repochs[4] = {0}, sent[4] = {1, 1, 1, 1};
    unsigned char busy[4] = {1, 1, 1, 1}, alive[4] = {1, 1, 1, 1},
                  fresh[4] = {0};
    double latency[4] = {0.1, 0.2, 0.3, 0.4};
    struct aia_pool_view v = {.nworkers = 4,
                              .live = 4,
                              .round = 1,
                              .ranks = ranks,
                              .repochs = repochs,
                              .sent = sent,
                              .busy = busy,
                              .alive = alive,
                              .fresh_now = fresh,
                              .latency = latency};
    struct aia_error err;
    void *s;
    if (W->create(&ctx, &s, &err) < 0)
        bail_out("%s: create: %s", W->h.name, err.text);
    for (int w = 0; w < 4; w++) {
        busy[w] = 0;
        fresh[w] = 1;
        repochs[w] = 1;
        v.fresh = v.arrived = w + 1;
        W->ready(s, &v);
        if (W->deadline)
            W->deadline(s, &v);
    }
    W->destroy(s);
}

/* An instance whose metric's name would break the history's header is
 * refused, as a descriptor's is at load. */
static void bad_metric_name(void)
{
    struct plugtest t;
    struct aia_error err;
    void *s;
    uint32_t what;
    const char *name;
    for (int i = 0; i < nall; i++)
        if (strcmp(all[i].t.p->h->name, "python") == 0)
            goto found;
    return;
found:
    plugtest_load(&t, "python", AIA_KIND_PROBLEM, "{class: descq:BadName}");
    const struct aia_problem_plugin *P = (const void *)t.p->h;
    struct aia_partition part = {0, 1, AIA_PART_BLOCK, 0, NULL};
    struct aia_context ctx = plugtest_ctx(t.args, AIA_ROLE_WORKER, 1, 1, 7);
    if (P->open(&ctx, &part, &s, &err) < 0)
        bail_out("python: open: %s", err.text);
    ok(loader_offers(P, s, &what, &name, &err) < 0 &&
           strstr(err.text, "the metric's name 'acc-ur\\tacy': give at most "
                            "32 letters, digits or '_'") &&
           what == 0 && !name,
       "python: a class whose metric_name is not a name is refused (%s)",
       err.text);
    P->close(s);
    plugtest_free(&t);
}

/* Whether p lies in a mapping of this process that cannot be written. */
static int read_only(const void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int ro = -1;
    while (f && ro < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 &&
            (uintptr_t)p >= lo && (uintptr_t)p < hi)
            ro = perms[1] != 'w';
    }
    if (f)
        fclose(f);
    return ro == 1;
}

int main(void)
{
    char dir[] = "/tmp/aiarun-descq-XXXXXX", file[64], env[8192];
    if (!mkdtemp(dir))
        bail_out("mkdtemp");
    snprintf(file, sizeof file, "%s/descq.py", dir);
    FILE *f = fopen(file, "w");
    if (!f || fputs(quad_py, f) < 0 || fclose(f) != 0)
        bail_out("cannot write %s", file);
    const char *old = getenv("AIARUN_PYTHONPATH");
    snprintf(env, sizeof env, "%s%s%s", dir, old ? ":" : "", old ? old : "");
    setenv("AIARUN_PYTHONPATH", env, 1);
    make_rows();

    load_files();
    plan(0);
    const struct loaded *lrmse = find("lrmse", AIA_KIND_PROBLEM);
    const struct loaded *pca = find("pca", AIA_KIND_PROBLEM);
    /* gd with a step of its own, for problems that give no L */
    struct loaded gd = {.kind = AIA_KIND_ALGORITHM};
    plugtest_load(&gd.t, "gd", AIA_KIND_ALGORITHM, "{step: 0.01}");
    for (int i = 0; i < nall; i++)
        if (all[i].kind == AIA_KIND_PROBLEM)
            problem_job(&all[i], &gd);
        else if (all[i].kind == AIA_KIND_ALGORITHM)
            algorithm_job(&all[i],
                          ((const struct aia_algorithm_plugin *)all[i].t.p->h)
                                      ->flags &
                                  AIA_ALG_BLOCK
                              ? pca
                              : lrmse);
        else
            wait_job(&all[i]);
    ok(nall >= 12,
       "%d plugins loaded (every algorithm, problem and "
       "built-in wait condition)",
       nall);
    for (int i = 0; i < nall; i++) {
        const struct aia_plugin_header *h = all[i].t.p->h;
        ok(memcmp(all[i].snap, h, h->size) == 0,
           "%s '%s': its descriptor's %u bytes are as loaded, after a job",
           loader_kind_name(all[i].kind), h->name, h->size);
        ok(read_only(h),
           "%s '%s': its descriptor is const (read-only "
           "memory)",
           loader_kind_name(all[i].kind), h->name);
    }
    bad_metric_name();
    plugtest_free(&gd.t);
    for (int i = 0; i < nall; i++) {
        free(all[i].snap);
        plugtest_free(&all[i].t);
    }
    unlink(file);
    rmdir(dir);
    return done_testing();
}
