/* average.h - the average plugin's state, shared by its files: average.c
 * (parameters, workers, answers), average_mix.c (the query from the
 * models: weights, staleness, preemption) and average_state.c
 * (checkpoints). */
#ifndef AIARUN_PLUGIN_AVERAGE_H
#define AIARUN_PLUGIN_AVERAGE_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>

/* In the order of the memory parameter's choices. */
enum { MEM_LATEST, MEM_DELTA };

/* How stale models count (the staleness parameter's choices, in order). */
enum average_scheme {
    SCHEME_AUTO,  /* gd where it applies, else none */
    SCHEME_NONE,  /* the weighted average of the latest models */
    SCHEME_DECAY, /* a model's weight times decay^(its age in rounds) */
    SCHEME_GD     /* latest local progress per worker, from the iterate */
};

struct average {
    const struct aia_problem_plugin *prob;
    void *pstate;
    const struct aia_host *host;
    size_t dim, rows, batch;
    uint64_t local_steps, delay, preempt_every, preempt;
    double step;
    int memory, nworkers, compensate, me;
    int scheme;      /* enum average_scheme, auto resolved */
    double decay;    /* SCHEME_DECAY: a model's weight per round of age */
    double *weights; /* nworkers entries, or NULL: shares of the rows */
    /* worker */
    double *y;         /* the local model */
    double *g;         /* a gradient */
    double *sent;      /* memory: delta or delay: the model last sent */
    int have;          /* delay: y holds a model of this worker's own */
    int answered;      /* memory: delta: sent holds the model last answered */
    uint64_t restarts; /* preemption: replacements acted on */
    size_t *idx;       /* the batch's rows */
    struct aia_rng rng;
    /* coordinator */
    double *x;          /* the query */
    double *models;     /* memory: latest: nworkers x dim */
    double *sum;        /* memory: delta: S, the weighted sum of the models */
    double total;       /* W, the weight of the workers heard from */
    double *w;          /* weight of each worker heard from */
    double *wq;         /* each worker's share of the query being formed */
    double *sent_round; /* SCHEME_DECAY: the round each model answered */
    /* async mode, memory: latest, weights that do not age: the models
     * are a running table (alg.h's aia_table_add), models its entries and
     * each worker's weight its rows, so that the query's weighted sum
     * changes by difference as an answer replaces a model (O(dim) an
     * answer, not O(workers x dim)), summed afresh as the table decides
     * and after a preemption */
    int running;
    struct aia_table table;
    double round;       /* SCHEME_DECAY: the latest round absorbed in */
    /* heard[i]: worker i has answered at least once */
    unsigned char *heard;
    /* preemption */
    double *score;         /* each worker's latest score */
    unsigned char *scored; /* score[i] is from its latest answer */
    double *replaced;      /* times each worker was replaced */
    double *best;          /* the best model of the latest preemption */
    uint64_t rounds;       /* queries written since init */
};

/* Preemption puts x_best and the counts in the query and the score in
 * the answer. */
#define PREEMPTING(s) ((s)->preempt_every > 0)

/* The query from the models and deltas absorbed: s->x (memory: latest and
 * delta, every scheme), after a preemption when one is due. */
void average_mix(struct average *s);

/* The running sum summed afresh from the models (s->running). */
void average_resum(struct average *s);

/* Absorb worker i's answer a into the models (memory: latest) or the sum
 * (memory: delta), as the scheme wants; round: the round it answers. */
void average_keep(struct average *s, int i, const double *a, uint64_t round,
                  uint64_t now);

/* Checkpoints: the state's size, and its copy to and from buf. */
size_t average_state_size(void *state);
int average_save(void *state, void *buf, struct aia_error *err);
int average_load(void *state, const void *buf, size_t len,
                 struct aia_error *err);

#endif
