/* job_keys.c - the runtime's keys of a job file, one row each, section by
 * section: the check, the reference and the field the value lands in
 * (job_keys.h).  The simulate sections' rows are the simulator's
 * (latency.c). */
#include <config.h>

#include "job_keys.h"

#include <stddef.h>

#include "core/codec.h"
#include "core/proto.h"
#include "data/data.h"
#include "job.h"
#include "record/output.h"

/* Offsets into each section's struct: struct job itself for the top
 * level (seed); struct job_partition (problem), struct job_pool, struct
 * job_limits; struct job_data (problem.data and problem.test share their
 * rows); the core's struct proto_limits (stop) and struct codec_conf
 * (pool.codec); the recorder's struct output_conf (output); struct
 * job_stragglers (stragglers.*). */
#define J(field) offsetof(struct job, field)
#define D(field) offsetof(struct job_data, field)
#define L(field) offsetof(struct proto_limits, field)
#define S(field) offsetof(struct job_stragglers, field)
#define O(field) offsetof(struct output_conf, field)
#define C(field) offsetof(struct codec_conf, field)
#define P(field) offsetof(struct job_pool, field)
#define R(field) offsetof(struct job_partition, field)
#define M(field) offsetof(struct job_limits, field)

static const struct job_name scheme_names[] = {
    {"block", AIA_PART_BLOCK}, {"cyclic", AIA_PART_CYCLIC}, {NULL, 0}};
/* and the formats of data.c's table, by name (data_format_lookup) */
static const struct job_name format_names[] = {{"auto", -1}, {NULL, 0}};
static const struct job_name header_names[] = {{"auto", DATA_HEADER_AUTO},
                                               {"yes", DATA_HEADER_YES},
                                               {"no", DATA_HEADER_NO},
                                               {NULL, 0}};
static const struct job_name delimiter_names[] = {
    {"auto", 0},   {"comma", ','}, {"semicolon", ';'},
    {"tab", '\t'}, {"space", ' '}, {NULL, 0}};
static const struct job_name storage_names[] = {
    {"auto", -1}, {"dense", 0}, {"sparse", 1}, {NULL, 0}};
static const struct job_name delivery_names[] = {
    {"read", JOB_READ}, {"scatter", JOB_SCATTER}, {NULL, 0}};
static const struct job_name topology_names[] = {
    {"star", JOB_STAR}, {"tree", JOB_TREE}, {NULL, 0}};
static const struct job_name poll_names[] = {
    {"auto", 0}, {"spin", 1}, {"sleep", 2}, {NULL, 0}}; /* enum poll_mode */
static const struct job_name wake_names[] = {
    {"bell", 0}, {"timer", 1}, {NULL, 0}};
static const struct job_name mode_names[] = {
    {"rounds", JOB_ROUNDS}, {"async", JOB_ASYNC}, {NULL, 0}};
static const struct job_name format_out_names[] = {
    {"csv", OUTPUT_CSV}, {"jsonl", OUTPUT_JSONL}, {NULL, 0}};

const struct job_key job_keys_top[] = {
    {{"seed", AIA_INT, "1",
      "seed of every random choice: generated data, mini-batches, stragglers",
      NULL, 0, 9.2e18},
     .kind = JF_INT64,
     .off = J(seed)},
    JOB_KEYS_END,
};

const struct job_key job_keys_algorithm[] = {
    {{"plugin", AIA_STRING, NULL,
      "the algorithm plugin: a bare name (searched) or a path", NULL, 0, 0},
     .kind = JF_NONE},
    JOB_KEYS_END,
};

const struct job_key job_keys_problem[] = {
    {{"plugin", AIA_STRING, NULL,
      "the problem plugin: a bare name (searched) or a path", NULL, 0, 0},
     .kind = JF_NONE},
    {{"partition", AIA_ENUM, "block",
      "how rows are split over workers: contiguous blocks or dealt cyclically",
      "block|cyclic", 0, 0},
     .kind = JF_ENUM,
     .off = R(scheme),
     .names = scheme_names},
    {{"weights", AIA_DOUBLES, "[]",
      "share of the rows of each worker, in pool order (empty: equal)", NULL, 0,
      1e12},
     .kind = JF_DOUBLES,
     .off = R(weights),
     .count_off = R(nweights),
     JOB_NODE(R(weights_node))},
    JOB_KEYS_END,
};

const struct job_key job_keys_data[] = {
    {{"path", AIA_STRING, NULL,
      "the data file, relative to the job file's folder", NULL, 0, 0},
     .kind = JF_NONE},
    /* from the formats' table (data_formats_init) */
    {{"format", AIA_ENUM, "auto", data_format_help, data_format_choices, 0, 0},
     .kind = JF_ENUM,
     .off = D(format),
     .names = format_names,
     .lookup = data_format_lookup},
    {{"header", AIA_ENUM, "auto",
      "csv: whether the first line names the columns (auto: when one of its "
      "cells is not a number)",
      "auto|yes|no", 0, 0},
     .kind = JF_ENUM,
     .off = D(header),
     .names = header_names},
    {{"target", AIA_STRING, "\"\"",
      "csv and binary: the target column, a header name or an index (0 "
      "first, -1 last; empty: the last)",
      NULL, 0, 0},
     .kind = JF_TEXT,
     .off = D(target)},
    {{"delimiter", AIA_ENUM, "auto",
      "csv: the cell separator (space: runs of blanks)",
      "auto|comma|semicolon|tab|space", 0, 0},
     .kind = JF_CHAR,
     .off = D(delimiter),
     .names = delimiter_names},
    {{"cols", AIA_INT, "0",
      "binary: values per row, the target's included (required)", NULL, 0, 1e9},
     .kind = JF_SIZE,
     .off = D(cols)},
    {{"rows", AIA_INT, "0", "binary: rows (0: from the file's size)", NULL, 0,
      9.2e18},
     .kind = JF_SIZE,
     .off = D(rows)},
    {{"storage", AIA_ENUM, "auto",
      "how rows are held: dense, or sparse (CSR; zeros left out); auto: "
      "sparse for libsvm, dense otherwise",
      "auto|dense|sparse", 0, 0},
     .kind = JF_ENUM,
     .off = D(sparse),
     .names = storage_names},
    {{"features", AIA_INT, "0",
      "libsvm: the number of features (0: the largest index in the file)", NULL,
      0, 4e9},
     .kind = JF_SIZE,
     .off = D(features)},
    {{"delivery", AIA_ENUM, "read",
      "read: each worker reads its own rows (a shared file system); scatter: "
      "rank 0 reads the file once and sends each worker its rows",
      "read|scatter", 0, 0},
     .kind = JF_ENUM,
     .off = D(delivery),
     .names = delivery_names},
    {{"targets", AIA_STRING, "\"\"",
      "npy, idx: a second file of the targets (1-D; idx: the labels file, "
      "or none: every target 0, for pca); "
      "hdf5: the targets' 1-D dataset; empty: a target column (npy, hdf5)",
      NULL, 0, 0},
     .kind = JF_TEXT,
     .off = D(targets_key)},
    {{"dataset", AIA_STRING, "x", "hdf5: the rows' 2-D dataset", NULL, 0, 0},
     .kind = JF_TEXT,
     .off = D(dataset)},
    {{"scale", AIA_DOUBLE, "1",
      "npy, idx, hdf5: every feature is multiplied by it (1/255 for pixels)",
      NULL, -1e300, 1e300},
     .kind = JF_DOUBLE,
     .off = D(scale)},
    JOB_KEYS_END,
};

const struct job_key job_keys_pool[] = {
    {{"workers", AIA_INTS, "[]",
      "ranks that form the pool (empty: every rank but 0)", NULL, 1, 1e9},
     .kind = JF_INTS,
     .off = P(workers),
     .count_off = P(nworkers),
     JOB_NODE(P(workers_node)),
     .flags = JOB_DISTINCT},
    {{"shutdown_timeout", AIA_DOUBLE, "30",
      "seconds the coordinator waits for workers to stop before it aborts",
      NULL, 0.001, 1e7},
     .kind = JF_DOUBLE,
     .off = P(shutdown_timeout)},
    {{"dead_after", AIA_DOUBLE, "0",
      "seconds a busy worker may stay silent before it is declared dead "
      "and the run goes on without it (0: never; see When workers fail in "
      "aiarun(5))",
      NULL, 0, 1e9},
     .kind = JF_DOUBLE,
     .off = P(dead_after)},
    {{"topology", AIA_ENUM, "star",
      "star: the coordinator talks to every worker; tree: queries go down "
      "and answers come up a tree of workers, each node combining its "
      "subtree's answers, so no rank receives more than arity messages a "
      "round (synchronous rounds; the algorithm must declare its answers "
      "combinable)",
      "star|tree", 0, 0},
     .kind = JF_ENUM,
     .off = P(topology),
     .names = topology_names,
     JOB_NODE(P(topology_node))},
    {{"arity", AIA_INT, "2", "tree: children of each node", NULL, 2, 1e6},
     .kind = JF_INT,
     .off = P(arity)},
    {{"shards", AIA_INT, "1",
      "coordinator ranks that split the model: rank 0 and ranks 1 to "
      "shards-1 each hold a contiguous slice of the iterate and of the "
      "algorithm's state, workers send each slice of an answer to its "
      "rank and take each slice of the query from it, and rank 0 alone "
      "decides (rounds, stops, output); the pool is then ranks shards and "
      "up (1: rank 0 holds the whole model; see Shard ranks in aiarun(5))",
      NULL, 1, 4096},
     .kind = JF_INT,
     .off = P(shards),
     JOB_NODE(P(shards_node))},
    {{"shard_timeout", AIA_DOUBLE, "60",
      "seconds rank 0 waits for a shard rank's word (its replies, and one "
      "asked every third of this) before it declares it lost and stops "
      "the run with exit status 1 (see Shard ranks in aiarun(5))",
      NULL, 0.001, 1e9},
     .kind = JF_DOUBLE,
     .off = P(shard_timeout)},
    {{"mode", AIA_ENUM, "rounds",
      "rounds: a query to every idle worker, then wait (pool.wait); async: "
      "every answer is an iteration and only its sender gets the next query",
      "rounds|async", 0, 0},
     .kind = JF_ENUM,
     .off = P(mode),
     .names = mode_names,
     JOB_NODE(P(mode_node))},
    {{"setup_timeout", AIA_DOUBLE, "600",
      "seconds the set-up (reading the data, the plugins' open and create) "
      "may take before the job is aborted, naming what hung (0: no bound)",
      NULL, 0, 1e9},
     .kind = JF_DOUBLE,
     .off = P(setup_timeout)},
    {{"coordinator_timeout", AIA_DOUBLE, "600",
      "seconds a worker waits with no word from the coordinator before it "
      "leaves with exit status 1 (0: forever)",
      NULL, 0, 1e9},
     .kind = JF_DOUBLE,
     .off = P(coordinator_timeout)},
    {{"poll", AIA_ENUM, "auto",
      "how a rank waits for a message it expects (an answer, the next "
      "query): spin: test without sleeping for the round trip expected "
      "(at most 20 ms), then sleep in growing steps; sleep: sleep from the "
      "first microseconds; auto: spin where the node has a core for every "
      "rank on it and other work seldom preempts the rank, else sleep, "
      "but a tree worker yields while its next query is expected unless "
      "its yields give the core to other work for long",
      "auto|spin|sleep", 0, 0},
     .kind = JF_ENUM,
     .off = P(poll),
     .names = poll_names},
    {{"wake", AIA_ENUM, "bell",
      "how a sleeping rank learns that a message came: bell: the rank on "
      "the same node that sent it wakes it at once (a futex in a page the "
      "node's ranks share), and the sleep's end is the fallback; timer: "
      "only at the end of each sleep",
      "bell|timer", 0, 0},
     .kind = JF_ENUM,
     .off = P(wake),
     .names = wake_names},
    JOB_KEYS_END,
};

const struct job_key job_keys_codec[] = {
    {{"query", AIA_ENUM, "none",
      "how queries travel: as doubles, rounded to float32, float16 or "
      "bfloat16, or compressed by zstd (lossless)",
      codec_query_choices, 0, 0},
     .kind = JF_ENUM,
     .off = C(query),
     .lookup = codec_lookup},
    {{"answer", AIA_ENUM, "none",
      "how answers travel: as queries, or topk: the largest entries only, "
      "the rest kept by the worker and added to its next answer (error "
      "feedback; for algorithms whose answers are gradients: sgd, gd)",
      codec_answer_choices, 0, 0},
     .kind = JF_ENUM,
     .off = C(answer),
     .lookup = codec_lookup},
    {{"topk", AIA_DOUBLE, "0.01",
      "topk: entries sent, a fraction of the answer's length when below 1 "
      "(at least one), else a count",
      NULL, 1e-9, 4e9},
     .kind = JF_DOUBLE,
     .off = C(topk)},
    {{"level", AIA_INT, "3", "zstd: compression level", NULL, 1, 19},
     .kind = JF_INT,
     .off = C(level)},
    JOB_KEYS_END,
};

const struct job_key job_keys_wait[] = {
    {{"plugin", AIA_STRING, "standard",
      "the wait condition: 'standard' (built in) or a plugin", NULL, 0, 0},
     .kind = JF_NONE},
    JOB_KEYS_END,
};

/* The stop section binds into the protocol's struct proto_limits: each
 * stop rule that has a limit (proto_stop_rules' keyed) has its row here,
 * under the rule's name, in the rules' order (t/params checks both). */
const struct job_key job_keys_stop[] = {
    {{"iterations", AIA_INT, "0",
      "stop after this many iterations (central updates; 0: no limit)", NULL, 0,
      9.2e18},
     .kind = JF_INT64,
     .off = L(iterations)},
    {{"time", AIA_DOUBLE, "0",
      "stop after this many seconds of wall time (0: no limit)", NULL, 0, 1e9},
     .kind = JF_DOUBLE,
     .off = L(time)},
    {{"epochs", AIA_INT, "0",
      "stop after this many epochs: passes in which every live worker "
      "answered at least once (0: no limit)",
      NULL, 0, 9.2e18},
     .kind = JF_INT64,
     .off = L(epochs)},
    {{"precision", AIA_DOUBLE, "0",
      "stop when the query changes by at most this much (Euclidean norm) "
      "from one iteration to the next (0: never)",
      NULL, 0, 1e300},
     .kind = JF_DOUBLE,
     .off = L(precision)},
    {{"loss", AIA_DOUBLE, "0", "stop when the loss is at most this (0: never)",
      NULL, 0, 1e300},
     .kind = JF_DOUBLE,
     .off = L(loss)},
    {{"gap", AIA_DOUBLE, "0",
      "stop when (loss - optimum) / optimum is at most this; needs a "
      "problem that knows its optimum, or gives Hessian-vector products "
      "(then found by Newton-CG over the workers' rows) (0: never)",
      NULL, 0, 1e300},
     .kind = JF_DOUBLE,
     .off = L(gap)},
    {{"check_every", AIA_INT, "1",
      "iterations between evaluations of the loss for the loss and gap "
      "stops",
      NULL, 1, 9.2e18},
     .kind = JF_INT64,
     .off = L(check_every)},
    {{"diverge", AIA_DOUBLE, "1e6",
      "stop as diverged (exit 1) when the loss exceeds this many times its "
      "initial value, or is not finite, or an answer is not finite (0: "
      "check finiteness only)",
      NULL, 0, 1e300},
     .kind = JF_DOUBLE,
     .off = L(diverge)},
    JOB_KEYS_END,
};

const struct job_key job_keys_stragglers[] = {
    {{"work_ms", AIA_DOUBLE, "0",
      "simulated work added to every answer of every worker", NULL, 0, 1e9},
     .kind = JF_DOUBLE,
     .off = S(work),
     .scale = 1e-3},
    {{"link_mbps", AIA_DOUBLE, "0",
      "an emulated link of this many megabits per second to each worker: "
      "before sending an answer a worker waits for the bytes of its query "
      "and its answer (headers included) to cross it (0: no emulation)",
      NULL, 0, 1e9},
     .kind = JF_DOUBLE,
     .off = S(link_bps),
     .scale = 1e6},
    JOB_KEYS_END,
};

const struct job_key job_keys_fixed[] = {
    {{"ranks", AIA_INTS, NULL, "persistent stragglers", NULL, 1, 1e9},
     .kind = JF_INTS,
     .off = S(fixed),
     .count_off = S(nfixed),
     JOB_NODE(S(fixed_node)),
     .flags = JOB_DISTINCT},
    {{"delay_ms", AIA_DOUBLES, NULL,
      "delay added to each of their answers: one value, or one per rank", NULL,
      0, 1e9},
     .kind = JF_DOUBLES,
     .off = S(fixed_delay),
     .count_off = S(nfixed_delay)},
    JOB_KEYS_END,
};

const struct job_key job_keys_random[] = {
    {{"probability", AIA_DOUBLE, NULL,
      "chance that any answer of any worker is delayed", NULL, 0, 1},
     .kind = JF_DOUBLE,
     .off = S(random_p)},
    {{"delay_ms", AIA_DOUBLE, NULL, "the delay", NULL, 0, 1e9},
     .kind = JF_DOUBLE,
     .off = S(random_delay),
     .scale = 1e-3},
    JOB_KEYS_END,
};

const struct job_key job_keys_markov[] = {
    {{"ranks", AIA_INTS, "[]", "workers that have bursts (empty: every one)",
      NULL, 1, 1e9},
     .kind = JF_INTS,
     .off = S(markov_ranks),
     .count_off = S(nmarkov),
     JOB_NODE(S(markov_node)),
     .flags = JOB_DISTINCT},
    {{"p_slow", AIA_DOUBLE, NULL,
      "chance, per answer, that a fast worker "
      "turns slow",
      NULL, 0, 1},
     .kind = JF_DOUBLE,
     .off = S(p_slow)},
    {{"p_fast", AIA_DOUBLE, NULL,
      "chance, per answer, that a slow worker "
      "turns fast",
      NULL, 0, 1},
     .kind = JF_DOUBLE,
     .off = S(p_fast)},
    {{"delay_ms", AIA_DOUBLE, NULL, "delay of each answer while slow", NULL, 0,
      1e9},
     .kind = JF_DOUBLE,
     .off = S(markov_delay),
     .scale = 1e-3},
    JOB_KEYS_END,
};

const struct job_key job_keys_slow[] = {
    {{"ranks", AIA_INTS, NULL, "persistently slow workers", NULL, 1, 1e9},
     .kind = JF_INTS,
     .off = S(slow),
     .count_off = S(nslow),
     JOB_NODE(S(slow_node)),
     .flags = JOB_DISTINCT},
    {{"factor", AIA_DOUBLES, NULL,
      "how many times slower per row than they would be, for the whole "
      "run: one value, or one per rank (at least 1)",
      NULL, 1, 1e6},
     .kind = JF_DOUBLES,
     .off = S(slow_factor),
     .count_off = S(nslow_factor)},
    JOB_KEYS_END,
};

const struct job_key job_keys_hang[] = {
    {{"ranks", AIA_INTS, NULL,
      "workers that stop answering (until they are told to stop)", NULL, 1,
      1e9},
     .kind = JF_INTS,
     .off = S(hang),
     .count_off = S(nhang),
     JOB_NODE(S(hang_node)),
     .flags = JOB_DISTINCT},
    {{"after", AIA_INT, "0", "answers they give before they hang", NULL, 0,
      9.2e18},
     .kind = JF_INT64,
     .off = S(hang_after)},
    JOB_KEYS_END,
};

const struct job_key job_keys_corrupt[] = {
    {{"ranks", AIA_INTS, NULL,
      "workers whose answers arrive malformed (a fault injected to test that "
      "the coordinator does not trust them)",
      NULL, 1, 1e9},
     .kind = JF_INTS,
     .off = S(corrupt),
     .count_off = S(ncorrupt),
     JOB_NODE(S(corrupt_node)),
     .flags = JOB_DISTINCT},
    {{"after", AIA_INT, "0", "good answers they give first", NULL, 0, 9.2e18},
     .kind = JF_INT64,
     .off = S(corrupt_after)},
    JOB_KEYS_END,
};

const struct job_key job_keys_limits[] = {
    {{"memory", AIA_STRING, "\"\"",
      "the most memory the job's rows may take on one machine: bytes, or "
      "with K, M, G or T (powers of 1024); a job estimated to need more is "
      "refused at start (empty: AIARUN_MEMORY_LIMIT, else the machine's "
      "available memory)",
      NULL, 0, 0},
     .kind = JF_TEXT,
     .off = M(memory_text)},
    JOB_KEYS_END,
};

const struct job_key job_keys_output[] = {
    {{"history", AIA_STRING, "\"\"",
      "CSV file of the loss history, relative to the current folder "
      "(empty: none)",
      NULL, 0, 0},
     .kind = JF_TEXT,
     .off = O(history),
     .flags = JOB_OUTFILE},
    {{"every", AIA_INT, "1",
      "write a history row every this many iterations (first and last "
      "always)",
      NULL, 1, 9.2e18},
     .kind = JF_INT64,
     .off = O(every)},
    {{"history_sample", AIA_DOUBLE, "auto",
      "training rows (over the pool) whose loss and metric a history row "
      "gives, a seeded sample kept for the run, the last row on every row "
      "(see Outputs); all: every row; auto: 10000 where problem.data holds "
      "at least 5 times as many and stop.gap is not set, else all",
      "auto|all", 1, 9.2e18},
     .kind = JF_NONE},
    {{"answers", AIA_STRING, "\"\"",
      "CSV file with one row per answer: worker, rounds, staleness, times "
      "(empty: none)",
      NULL, 0, 0},
     .kind = JF_TEXT,
     .off = O(answers),
     .flags = JOB_OUTFILE},
    {{"workers", AIA_STRING, "\"\"",
      "CSV file of the per-worker table: answers, staleness, latency "
      "percentiles (empty: none)",
      NULL, 0, 0},
     .kind = JF_TEXT,
     .off = O(workers),
     .flags = JOB_OUTFILE},
    {{"format", AIA_ENUM, "csv",
      "format of the history and the answer log: CSV with a header line, or "
      "JSON Lines (one object a row)",
      "csv|jsonl", 0, 0},
     .kind = JF_ENUM,
     .off = O(format),
     .names = format_out_names},
    {{"every_epochs", AIA_INT, "0",
      "also write a history row at the end of every this many epochs (0: "
      "by iterations only)",
      NULL, 0, 9.2e18},
     .kind = JF_INT64,
     .off = O(every_epochs)},
    {{"iterates", AIA_STRING, "\"\"",
      "binary file of the model at every history row, the last one "
      "included (layout under Outputs in aiarun(5); empty: none)",
      NULL, 0, 0},
     .kind = JF_TEXT,
     .off = O(iterates),
     .flags = JOB_OUTFILE},
    {{"final", AIA_STRING, "\"\"",
      "text file of the final model, one value a line (empty: none)", NULL, 0,
      0},
     .kind = JF_TEXT,
     .off = O(final),
     .flags = JOB_OUTFILE},
    {{"checkpoint", AIA_STRING, "\"\"",
      "file of the coordinator's state, written atomically, for aiarun "
      "--resume (empty: none)",
      NULL, 0, 0},
     .kind = JF_TEXT,
     .off = O(checkpoint),
     .flags = JOB_OUTFILE,
     JOB_NODE(O(checkpoint_node))},
    {{"checkpoint_every", AIA_INT, "0",
      "write the checkpoint every this many iterations (0: not by "
      "iterations)",
      NULL, 0, 9.2e18},
     .kind = JF_INT64,
     .off = O(checkpoint_every)},
    {{"checkpoint_seconds", AIA_DOUBLE, "0",
      "write the checkpoint every this many seconds (0: not by time); it "
      "is also written at the end and when the run is stopped by a signal",
      NULL, 0, 1e9},
     .kind = JF_DOUBLE,
     .off = O(checkpoint_seconds)},
    JOB_KEYS_END,
};
