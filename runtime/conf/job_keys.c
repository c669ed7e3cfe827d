/* job_keys.c - the runtime's keys of a job file, section by section.
 *
 * Each table is both the check (params_bind) and the documentation
 * (job_reference, --job-reference); job.c binds each key by name to its
 * field of struct job.
 */
#include <config.h>

#include "job_keys.h"

#include <stdio.h>

#include "core/codec.h"
#include "data/data.h"
#include "job.h"
#include "params.h"

const struct aia_param job_keys_top[] = {
    {"seed", AIA_INT, "1",
     "seed of every random choice: generated data, mini-batches, stragglers",
     NULL, 0, 9.2e18},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_algorithm[] = {
    {"plugin", AIA_STRING, NULL,
     "the algorithm plugin: a bare name (searched) or a path", NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_problem[] = {
    {"plugin", AIA_STRING, NULL,
     "the problem plugin: a bare name (searched) or a path", NULL, 0, 0},
    {"partition", AIA_ENUM, "block",
     "how rows are split over workers: contiguous blocks or dealt cyclically",
     "block|cyclic", 0, 0},
    {"weights", AIA_DOUBLES, "[]",
     "share of the rows of each worker, in pool order (empty: equal)", NULL, 0,
     1e12},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_data[] = {
    {"path", AIA_STRING, NULL,
     "the data file, relative to the job file's folder", NULL, 0, 0},
    /* from the formats' table (data_formats_init) */
    {"format", AIA_ENUM, "auto", data_format_help, data_format_choices, 0, 0},
    {"header", AIA_ENUM, "auto",
     "csv: whether the first line names the columns (auto: when one of its "
     "cells is not a number)",
     "auto|yes|no", 0, 0},
    {"target", AIA_STRING, "\"\"",
     "csv and binary: the target column, a header name or an index (0 "
     "first, -1 last; empty: the last)",
     NULL, 0, 0},
    {"delimiter", AIA_ENUM, "auto",
     "csv: the cell separator (space: runs of blanks)",
     "auto|comma|semicolon|tab|space", 0, 0},
    {"cols", AIA_INT, "0",
     "binary: values per row, the target's included (required)", NULL, 0, 1e9},
    {"rows", AIA_INT, "0", "binary: rows (0: from the file's size)", NULL, 0,
     9.2e18},
    {"storage", AIA_ENUM, "auto",
     "how rows are held: dense, or sparse (CSR; zeros left out); auto: "
     "sparse for libsvm, dense otherwise",
     "auto|dense|sparse", 0, 0},
    {"features", AIA_INT, "0",
     "libsvm: the number of features (0: the largest index in the file)", NULL,
     0, 4e9},
    {"delivery", AIA_ENUM, "read",
     "read: each worker reads its own rows (a shared file system); scatter: "
     "rank 0 reads the file once and sends each worker its rows",
     "read|scatter", 0, 0},
    {"targets", AIA_STRING, "\"\"",
     "npy, idx: a second file of the targets (1-D; idx: the labels file); "
     "hdf5: the targets' 1-D dataset; empty: a target column (npy, hdf5)",
     NULL, 0, 0},
    {"dataset", AIA_STRING, "x", "hdf5: the rows' 2-D dataset", NULL, 0, 0},
    {"scale", AIA_DOUBLE, "1",
     "npy, idx, hdf5: every feature is multiplied by it (1/255 for pixels)",
     NULL, -1e300, 1e300},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_pool[] = {
    {"workers", AIA_INTS, "[]",
     "ranks that form the pool (empty: every rank but 0)", NULL, 1, 1e9},
    {"shutdown_timeout", AIA_DOUBLE, "30",
     "seconds the coordinator waits for workers to stop before it aborts", NULL,
     0.001, 1e7},
    {"dead_after", AIA_DOUBLE, "0",
     "seconds a busy worker may stay silent before it is declared dead "
     "and the run goes on without it (0: never; see When workers fail in "
     "aiarun(5))",
     NULL, 0, 1e9},
    {"topology", AIA_ENUM, "star",
     "star: the coordinator talks to every worker; tree: queries go down "
     "and answers come up a tree of workers, each node combining its "
     "subtree's answers, so no rank receives more than arity messages a "
     "round (synchronous rounds; the algorithm must declare its answers "
     "combinable)",
     "star|tree", 0, 0},
    {"arity", AIA_INT, "2", "tree: children of each node", NULL, 2, 1e6},
    {"mode", AIA_ENUM, "rounds",
     "rounds: a query to every idle worker, then wait (pool.wait); async: "
     "every answer is an iteration and only its sender gets the next query",
     "rounds|async", 0, 0},
    {"setup_timeout", AIA_DOUBLE, "600",
     "seconds the set-up (reading the data, the plugins' open and create) "
     "may take before the job is aborted, naming what hung (0: no bound)",
     NULL, 0, 1e9},
    {"coordinator_timeout", AIA_DOUBLE, "600",
     "seconds a worker waits with no word from the coordinator before it "
     "leaves with exit status 1 (0: forever)",
     NULL, 0, 1e9},
    {"poll", AIA_ENUM, "auto",
     "how a rank waits for a message it expects (an answer, the next "
     "query): spin: test without sleeping for the round trip expected "
     "(at most 20 ms), then sleep in growing steps; sleep: sleep from the "
     "first microseconds; auto: spin where the node has a core for every "
     "rank on it and other work seldom preempts the rank, else sleep, "
     "but a tree worker yields while its next query is expected unless "
     "its yields give the core to other work for long",
     "auto|spin|sleep", 0, 0},
    {"wake", AIA_ENUM, "bell",
     "how a sleeping rank learns that a message came: bell: the rank on "
     "the same node that sent it wakes it at once (a futex in a page the "
     "node's ranks share), and the sleep's end is the fallback; timer: "
     "only at the end of each sleep",
     "bell|timer", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_codec[] = {
    {"query", AIA_ENUM, "none",
     "how queries travel: as doubles, rounded to float32, float16 or "
     "bfloat16, or compressed by zstd (lossless)",
     codec_query_choices, 0, 0},
    {"answer", AIA_ENUM, "none",
     "how answers travel: as queries, or topk: the largest entries only, "
     "the rest kept by the worker and added to its next answer (error "
     "feedback; for algorithms whose answers are gradients: sgd, gd)",
     codec_answer_choices, 0, 0},
    {"topk", AIA_DOUBLE, "0.01",
     "topk: entries sent, a fraction of the answer's length when below 1 "
     "(at least one), else a count",
     NULL, 1e-9, 4e9},
    {"level", AIA_INT, "3", "zstd: compression level", NULL, 1, 19},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_wait[] = {
    {"plugin", AIA_STRING, "standard",
     "the wait condition: 'standard' (built in) or a plugin", NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

/* The stop section's keys that are no stop rule's: each rule brings its
 * own key (proto_stop_rules), before these. */
const struct aia_param job_keys_stop[] = {
    {"check_every", AIA_INT, "1",
     "iterations between evaluations of the loss for the loss and gap "
     "stops",
     NULL, 1, 9.2e18},
    {"diverge", AIA_DOUBLE, "1e6",
     "stop as diverged (exit 1) when the loss exceeds this many times its "
     "initial value, or is not finite, or an answer is not finite (0: "
     "check finiteness only)",
     NULL, 0, 1e300},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_stragglers[] = {
    {"work_ms", AIA_DOUBLE, "0",
     "simulated work added to every answer of every worker", NULL, 0, 1e9},
    {"link_mbps", AIA_DOUBLE, "0",
     "an emulated link of this many megabits per second to each worker: "
     "before sending an answer a worker waits for the bytes of its query "
     "and its answer (headers included) to cross it (0: no emulation)",
     NULL, 0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_fixed[] = {
    {"ranks", AIA_INTS, NULL, "persistent stragglers", NULL, 1, 1e9},
    {"delay_ms", AIA_DOUBLES, NULL,
     "delay added to each of their answers: one value, or one per rank", NULL,
     0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_random[] = {
    {"probability", AIA_DOUBLE, NULL,
     "chance that any answer of any worker is delayed", NULL, 0, 1},
    {"delay_ms", AIA_DOUBLE, NULL, "the delay", NULL, 0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_markov[] = {
    {"ranks", AIA_INTS, "[]", "workers that have bursts (empty: every one)",
     NULL, 1, 1e9},
    {"p_slow", AIA_DOUBLE, NULL,
     "chance, per answer, that a fast worker "
     "turns slow",
     NULL, 0, 1},
    {"p_fast", AIA_DOUBLE, NULL,
     "chance, per answer, that a slow worker "
     "turns fast",
     NULL, 0, 1},
    {"delay_ms", AIA_DOUBLE, NULL, "delay of each answer while slow", NULL, 0,
     1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_hang[] = {
    {"ranks", AIA_INTS, NULL,
     "workers that stop answering (until they are told to stop)", NULL, 1, 1e9},
    {"after", AIA_INT, "0", "answers they give before they hang", NULL, 0,
     9.2e18},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_corrupt[] = {
    {"ranks", AIA_INTS, NULL,
     "workers whose answers arrive malformed (a fault injected to test that "
     "the coordinator does not trust them)",
     NULL, 1, 1e9},
    {"after", AIA_INT, "0", "good answers they give first", NULL, 0, 9.2e18},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_limits[] = {
    {"memory", AIA_STRING, "\"\"",
     "the most memory the job's rows may take on one machine: bytes, or "
     "with K, M, G or T (powers of 1024); a job estimated to need more is "
     "refused at start (empty: AIARUN_MEMORY_LIMIT, else the machine's "
     "available memory)",
     NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

const struct aia_param job_keys_output[] = {
    {"history", AIA_STRING, "\"\"",
     "CSV file of the loss history, relative to the current folder "
     "(empty: none)",
     NULL, 0, 0},
    {"every", AIA_INT, "1",
     "write a history row every this many iterations (first and last "
     "always)",
     NULL, 1, 9.2e18},
    {"answers", AIA_STRING, "\"\"",
     "CSV file with one row per answer: worker, rounds, staleness, times "
     "(empty: none)",
     NULL, 0, 0},
    {"workers", AIA_STRING, "\"\"",
     "CSV file of the per-worker table: answers, staleness, latency "
     "percentiles (empty: none)",
     NULL, 0, 0},
    {"format", AIA_ENUM, "csv",
     "format of the history and the answer log: CSV with a header line, or "
     "JSON Lines (one object a row)",
     "csv|jsonl", 0, 0},
    {"every_epochs", AIA_INT, "0",
     "also write a history row at the end of every this many epochs (0: "
     "by iterations only)",
     NULL, 0, 9.2e18},
    {"iterates", AIA_STRING, "\"\"",
     "binary file of the model at every history row, the last one "
     "included (layout under Outputs in aiarun(5); empty: none)",
     NULL, 0, 0},
    {"final", AIA_STRING, "\"\"",
     "text file of the final model, one value a line (empty: none)", NULL, 0,
     0},
    {"checkpoint", AIA_STRING, "\"\"",
     "file of the coordinator's state, written atomically, for aiarun "
     "--resume (empty: none)",
     NULL, 0, 0},
    {"checkpoint_every", AIA_INT, "0",
     "write the checkpoint every this many iterations (0: not by "
     "iterations)",
     NULL, 0, 9.2e18},
    {"checkpoint_seconds", AIA_DOUBLE, "0",
     "write the checkpoint every this many seconds (0: not by time); it "
     "is also written at the end and when the run is stopped by a signal",
     NULL, 0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static void reference_table(FILE *out, const char *title,
                            const struct aia_param *table, const char *note)
{
    fprintf(out, "\n#### `%s`\n\n", title);
    if (note)
        fprintf(out, "%s\n\n", note);
    fprintf(out, "| key | type | default | meaning |\n"
                 "|---|---|---|---|\n");
    for (const struct aia_param *p = table; p->name; p++) {
        char type[128], range[64];
        if (p->type == AIA_ENUM) {
            /* '|' would end the table's cell */
            size_t k = 0;
            for (const char *c = p->choices; *c && k < sizeof type - 3; c++) {
                type[k++] = *c == '|' ? ',' : *c;
                if (*c == '|')
                    type[k++] = ' ';
            }
            type[k] = '\0';
        } else {
            snprintf(type, sizeof type, "%s", params_type_name(p->type));
        }
        params_range(range, sizeof range, p);
        fprintf(out, "| `%s` | %s | %s | %s%s%s%s |\n", p->name, type,
                p->def ? p->def : "required", p->help, *range ? " (" : "",
                range, *range ? ")" : "");
    }
}

/* man_text: TEXT as roff input: backslashes and hyphens escaped, a
 * leading '.' or quote guarded, `code` set in bold. */
static void man_text(FILE *out, const char *text)
{
    int bold = 0;
    if (*text == '.' || *text == '\'')
        fputs("\\&", out);
    for (const char *c = text; *c; c++) {
        if (*c == '`') {
            fputs(bold ? "\\fR" : "\\fB", out);
            bold = !bold;
        } else if (*c == '\\') {
            fputs("\\e", out);
        } else if (*c == '-') {
            fputs("\\-", out);
        } else {
            fputc(*c, out);
        }
    }
    if (bold)
        fputs("\\fR", out);
}

/* man_table: one section's keys as a roff subsection of tagged
 * paragraphs, for man/aiarun.5. */
static void man_table(FILE *out, const char *title,
                      const struct aia_param *table, const char *note)
{
    fprintf(out, ".SS \"%s\"\n", title);
    if (note) {
        man_text(out, note);
        fputc('\n', out);
    }
    for (const struct aia_param *p = table; p->name; p++) {
        char range[64];
        params_range(range, sizeof range, p);
        fputs(".TP\n\\fB", out);
        man_text(out, p->name);
        fputs("\\fR (", out);
        man_text(out,
                 p->type == AIA_ENUM ? p->choices : params_type_name(p->type));
        fputs(p->def ? "; default " : "; required", out);
        if (p->def)
            man_text(out, p->def);
        fputs(")\n", out);
        man_text(out, p->help);
        if (*range) {
            fputs(" (", out);
            man_text(out, range);
            fputc(')', out);
        }
        fputc('\n', out);
    }
}

void job_reference(FILE *out)
{
    job_sections_init();
    for (const struct job_section *s = job_sections; s->path; s++)
        reference_table(out, *s->path ? s->path : "top level", s->keys,
                        s->note);
}

void job_reference_man(FILE *out)
{
    job_sections_init();
    for (const struct job_section *s = job_sections; s->path; s++)
        man_table(out, *s->path ? s->path : "top level", s->keys, s->note);
}
