/* job.h - a job file's meaning: the runtime's sections bound and checked,
 * the plugin sections located for binding once their plugins are loaded.
 */
#ifndef AIARUN_JOB_H
#define AIARUN_JOB_H

#include <stdint.h>
#include <stdio.h>

#include <aiarun/aiarun.h>

#include "core/codec.h"
#include "core/proto.h"
#include "manifest.h"
#include "record/output.h"
#include "session/loader.h"

/* The data file of problem.data, for data_scan and data_read. */
enum job_delivery { JOB_READ = 0, JOB_SCATTER = 1 };

struct job_data {
    char *path;         /* resolved against the job's folder; NULL: none */
    int format;         /* enum data_format */
    int header;         /* DATA_HEADER_* */
    const char *target; /* NULL: the last column */
    char delimiter;     /* 0: detect */
    size_t rows, cols;  /* binary shape */
    int sparse;
    size_t features;
    int delivery;            /* enum job_delivery */
    const char *targets_key; /* targets as the job gives it */
    char *targets;           /* npy, idx: a file (resolved); hdf5: a dataset */
    const char *dataset;     /* hdf5: the rows' dataset */
    double scale;            /* multiplies every feature (npy, idx, hdf5) */
    int float32;             /* rows kept as floats: data_opts.float32 */
    const struct mnode *key; /* problem.data's key, for messages */
};

/* A section that names a plugin: algorithm, problem, pool.wait. */
struct job_plugin {
    const char *name;            /* dotted section name, for messages */
    const struct mnode *node;    /* the section's mapping (NULL: absent) */
    const struct mnode *key;     /* the section's key */
    const char *spec;            /* the plugin as the job names it */
    const char *const *reserved; /* the runtime's keys in this section */
};

enum job_mode { JOB_ROUNDS = PROTO_ROUNDS, JOB_ASYNC = PROTO_ASYNC };
enum job_topology { JOB_STAR = 0, JOB_TREE = 1 };

/* How the problem's rows are split over the workers (problem.partition,
 * problem.weights). */
struct job_partition {
    int scheme;            /* enum aia_scheme */
    const double *weights; /* share of each worker; NULL: equal shares */
    size_t nweights;
    const struct mnode *weights_node;
};

/* The limits section: bounds a job is checked against before it
 * allocates. */
struct job_limits {
    const char *memory_text; /* limits.memory as given; NULL: none */
    double memory; /* bytes (job_check_memory); 0: the machine's available */
};

/* The pool section: which ranks work, how rounds go, how ranks wait,
 * and the bounds on silence, in seconds (0: none, unless said). */
struct job_pool {
    const int64_t *workers; /* ranks; NULL: every rank but 0 */
    size_t nworkers;
    const struct mnode *workers_node;
    double shutdown_timeout;
    double dead_after; /* seconds of silence; 0: never */
    double setup_timeout, coordinator_timeout;
    double shard_timeout; /* seconds rank 0 waits for a shard rank */
    int mode; /* enum job_mode */
    const struct mnode *mode_node;
    int topology; /* enum job_topology */
    int arity;    /* tree: children per node */
    int shards;   /* coordinator ranks holding a slice each (1: rank 0) */
    const struct mnode *shards_node;
    int poll;     /* enum poll_mode */
    int wake;     /* 0 bell, 1 timer (poll_configure) */
    const struct mnode *topology_node;
};

/* Injected delays (the stragglers section), all in seconds. */
struct job_stragglers {
    double work;          /* added to every answer of every worker */
    double link_bps;      /* emulated link, bits a second; 0: none */
    const int64_t *fixed; /* persistent stragglers' ranks */
    size_t nfixed;
    const double *fixed_delay; /* one, or one per rank of fixed */
    size_t nfixed_delay;
    double random_p, random_delay;
    int markov;                  /* the burst model is on */
    const int64_t *markov_ranks; /* NULL: every worker */
    size_t nmarkov;
    double p_slow, p_fast, markov_delay;
    const int64_t *slow; /* persistently slow workers' ranks */
    size_t nslow;
    const double *slow_factor; /* one, or one per rank of slow */
    size_t nslow_factor;
    const int64_t *hang; /* ranks that stop answering */
    size_t nhang;
    int64_t hang_after;     /* answers they give first */
    const int64_t *corrupt; /* ranks that send malformed answers */
    size_t ncorrupt;
    int64_t corrupt_after;
    /* where the rank lists are, for messages */
    const struct mnode *fixed_node, *markov_node, *hang_node, *corrupt_node;
    const struct mnode *slow_node;
};

/* The simulate section (latency.c binds it), in seconds: the virtual
 * times of aiarun --simulate. */
struct job_simulate {
    int compute;          /* enum latency_compute */
    double row_s;         /* compute per row of a partition */
    double latency_s;     /* one way, each message */
    double bandwidth_bps; /* 0: stragglers.link_bps, or infinite */
    double comp_mean, comp_spread, comp_cv, cv_spread; /* dsag */
    double comm_mean, comm_spread, comm_cv;
    double p_slow, p_fast, slow_factor;
    int preset; /* simulate.dsag.preset */
    const struct mnode *compute_node;
    int coordinator;             /* enum latency_coordinator */
    double coord_msg_s;          /* model: each message taken or sent */
    double coord_double_s;       /* model: each double absorbed or written */
    int cores;                   /* the ranks' shared cores; 0: one a rank */
    const struct mnode *cores_node;
};

struct job {
    struct manifest *m;
    char *dir; /* folder of the job file */
    uint64_t seed;
    struct job_plugin algorithm, problem, wait;
    struct job_partition part; /* the problem section's runtime keys */
    struct job_data data;
    struct job_data test; /* problem.test: held-out rows; path NULL: none */
    struct job_pool pool;
    struct codec_conf codec;        /* pool.codec, the codecs' */
    const struct mnode *codec_node; /* pool.codec's key, NULL: absent */
    struct proto_limits stop;       /* the stop section, the protocol's */
    struct job_stragglers stragglers;
    struct job_simulate simulate;
    struct output_conf output; /* the output section, the recorder's */
    struct job_limits limits;
    /* bound values of the runtime's sections, owned */
    struct aia_value *v[32]; /* one per entry of job_sections */
};

/* Parse and check the job file text read from path, after applying the
 * overrides ("key.path=value", NULL-terminated, may be NULL).  Returns the
 * job or NULL with err naming file, line and key. */
struct job *job_load(const char *path, const char *text, size_t len,
                     const char *const *overrides, struct aia_error *err);

void job_free(struct job *job);

/* Bind the parameters of plugin p from its section.  Returns a value
 * array (params_free) or NULL with err. */
struct aia_value *job_plugin_args(const struct job *job,
                                  const struct job_plugin *s,
                                  const struct plugin *p,
                                  struct aia_error *err);

/* Prefix err with the place of section s ("file:line:col: name: "), for
 * errors raised by a plugin about its own parameters. */
void job_blame(const struct job *job, const struct job_plugin *s,
               struct aia_error *err);

/* Check the job's files before anything is read or written: the data file
 * regular, each output a regular file or a new path, none the same file
 * as another output, the job file or the data file.  0, or -1 with err
 * naming the file, line and key. */
int job_check_outputs(const struct job *job, struct aia_error *err);

/* Parse bytes ("8e9", "512M", "16G", "2TiB": powers of 1024) into *out.
 * 0, or -1 when s is not such a size. */
int job_parse_bytes(const char *s, double *out);

/* Refuse a job whose rows would take more memory on this machine than it
 * has available (MemAvailable), or than limits.memory or the environment's
 * AIARUN_MEMORY_LIMIT allow.  The machine hosts local of the nworkers
 * workers, and the coordinator when coord; args are the problem's bound
 * parameters (rows, cols of a generator).  0, or -1 with err giving the
 * estimate, the limit and the key to change. */
int job_check_memory(const struct job *job, const struct aia_value *args,
                     int nworkers, int local, int coord, struct aia_error *err);

/* The value at a dotted path ("stop.gap"), for messages that name where
 * it was given; NULL when neither the file nor -o gives it. */
const struct mnode *job_value_node(const struct job *job, const char *path);

/* Print the reference of the job file's runtime keys in markdown. */
void job_reference(FILE *out);

#endif
