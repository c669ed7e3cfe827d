/* job_fields.c - each runtime key of a job file bound by name to its
 * field of struct job (offsetof tables, as nginx binds its directives),
 * and the binder that stores a section's checked values into them.  The
 * stop section's rules come from the protocol's registry of stop rules
 * (proto_stop_rules): each rule brings its key and its field. */
#include <config.h>

#include "job_fields.h"

#include <stddef.h>
#include <string.h>

#include "core/codec.h"
#include "data/data.h"
#include "sim/latency.h"
#include "record/output.h"
#include "params.h"
#include "core/proto.h"

#define F(field) offsetof(struct job, field)

static int name_value(const struct job_field *f, const char *name, int *out)
{
    for (const struct job_name *n = f->names; n && n->name; n++)
        if (strcmp(n->name, name) == 0)
            return *out = n->value, 0;
    if (f->lookup && (*out = f->lookup(name)) >= 0)
        return 0;
    return -1;
}

int job_fields_store(struct job *job, const char *path,
                     const struct mnode *node, const struct job_field *fields,
                     const struct aia_value *v, struct aia_error *err)
{
    char *base = (char *)job;
    for (const struct job_field *f = fields; f && f->key; f++) {
        const struct aia_value *a = aia_arg(v, f->key);
        void *p = base + f->off;
        int e;
        if (!a && f->kind != JF_NODE)
            return aia_seterr(err, "%s: %s: no key '%s' to bind", job->m->path,
                              path, f->key);
        switch (f->kind) {
        case JF_INT64:
            *(int64_t *)p = a->i;
            break;
        case JF_INT:
            *(int *)p = (int)a->i;
            break;
        case JF_SIZE:
            *(size_t *)p = (size_t)a->i;
            break;
        case JF_DOUBLE:
            *(double *)p = f->scale ? a->d * f->scale : a->d;
            break;
        case JF_TEXT:
            *(const char **)p = a->s && *a->s ? a->s : NULL;
            break;
        case JF_ENUM:
        case JF_CHAR:
            if (name_value(f, a->s, &e) < 0) {
                char where[256];
                params_where(where, sizeof where, job->m->path,
                             mnode_get(node, f->key, NULL));
                return aia_seterr(err,
                                  "%s: %s.%s: %s: not known to this "
                                  "aiarun",
                                  where, path, f->key, a->s);
            }
            if (f->kind == JF_CHAR)
                *(char *)p = (char)e;
            else
                *(int *)p = e;
            break;
        case JF_INTS:
            *(const int64_t **)p = a->n ? a->ints : NULL;
            *(size_t *)(base + f->count_off) = a->n;
            break;
        case JF_DOUBLES:
            *(const double **)p = a->n ? a->doubles : NULL;
            *(size_t *)(base + f->count_off) = a->n;
            break;
        case JF_NODE:
            *(const struct mnode **)p = mnode_get(node, f->key, NULL);
            break;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Each key to its field                                               */

#define END                                                                    \
    {                                                                          \
        NULL, 0, 0, 0, NULL, NULL, 0                                           \
    }
#define ST(field) F(stragglers.field)

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

static const struct job_name compute_names[] = {{"rows", LATENCY_ROWS},
                                                {"measured", LATENCY_MEASURED},
                                                {"dsag", LATENCY_DSAG},
                                                {NULL, 0}};
#define SIM(field) F(simulate.field)
const struct job_field job_fields_simulate[] = {
    {"compute", JF_ENUM, SIM(compute), 0, compute_names, NULL, 0},
    {"compute", JF_NODE, SIM(compute_node), 0, NULL, NULL, 0},
    {"row_us", JF_DOUBLE, SIM(row_s), 0, NULL, NULL, 1e-6},
    {"latency_us", JF_DOUBLE, SIM(latency_s), 0, NULL, NULL, 1e-6},
    {"bandwidth_mbps", JF_DOUBLE, SIM(bandwidth_bps), 0, NULL, NULL, 1e6},
    END};
const struct job_field job_fields_dsag[] = {
    {"compute_ms", JF_DOUBLE, SIM(comp_mean), 0, NULL, NULL, 1e-3},
    {"compute_spread", JF_DOUBLE, SIM(comp_spread), 0, NULL, NULL, 0},
    {"compute_cv", JF_DOUBLE, SIM(comp_cv), 0, NULL, NULL, 0},
    {"cv_spread", JF_DOUBLE, SIM(cv_spread), 0, NULL, NULL, 0},
    {"comm_ms", JF_DOUBLE, SIM(comm_mean), 0, NULL, NULL, 1e-3},
    {"comm_spread", JF_DOUBLE, SIM(comm_spread), 0, NULL, NULL, 0},
    {"comm_cv", JF_DOUBLE, SIM(comm_cv), 0, NULL, NULL, 0},
    {"p_slow", JF_DOUBLE, SIM(p_slow), 0, NULL, NULL, 0},
    {"p_fast", JF_DOUBLE, SIM(p_fast), 0, NULL, NULL, 0},
    {"slow_factor", JF_DOUBLE, SIM(slow_factor), 0, NULL, NULL, 0},
    END};

const struct job_field job_fields_top[] = {
    {"seed", JF_INT64, F(seed), 0, NULL, NULL, 0}, END};
const struct job_field job_fields_problem[] = {
    {"partition", JF_ENUM, F(part_scheme), 0, scheme_names, NULL, 0},
    {"weights", JF_DOUBLES, F(weights), F(nweights), NULL, NULL, 0},
    {"weights", JF_NODE, F(weights_node), 0, NULL, NULL, 0},
    END};
/* problem.data's and problem.test's keys, into the job_data at base */
#define ROW_FIELDS(base)                                                        \
    {                                                                           \
        "format",           JF_ENUM, F(base.format), 0, format_names,           \
        data_format_lookup, 0},                                                 \
        {"header", JF_ENUM, F(base.header), 0, header_names, NULL, 0},          \
        {"target", JF_TEXT, F(base.target), 0, NULL, NULL, 0},                  \
        {"delimiter", JF_CHAR, F(base.delimiter), 0, delimiter_names, NULL, 0}, \
        {"cols", JF_SIZE, F(base.cols), 0, NULL, NULL, 0},                      \
        {"rows", JF_SIZE, F(base.rows), 0, NULL, NULL, 0},                      \
        {"storage", JF_ENUM, F(base.sparse), 0, storage_names, NULL, 0},        \
        {"features", JF_SIZE, F(base.features), 0, NULL, NULL, 0},              \
        {"delivery", JF_ENUM, F(base.delivery), 0, delivery_names, NULL, 0},    \
        {"targets", JF_TEXT, F(base.targets_key), 0, NULL, NULL, 0},            \
        {"dataset", JF_TEXT, F(base.dataset), 0, NULL, NULL, 0},                \
        {"scale", JF_DOUBLE, F(base.scale), 0, NULL, NULL, 0},
const struct job_field job_fields_data[] = {ROW_FIELDS(data) END};
const struct job_field job_fields_test[] = {ROW_FIELDS(test) END};
const struct job_field job_fields_pool[] = {
    {"workers", JF_INTS, F(workers), F(nworkers), NULL, NULL, 0},
    {"workers", JF_NODE, F(workers_node), 0, NULL, NULL, 0},
    {"shutdown_timeout", JF_DOUBLE, F(shutdown_timeout), 0, NULL, NULL, 0},
    {"setup_timeout", JF_DOUBLE, F(setup_timeout), 0, NULL, NULL, 0},
    {"coordinator_timeout", JF_DOUBLE, F(coordinator_timeout), 0, NULL, NULL,
     0},
    {"dead_after", JF_DOUBLE, F(dead_after), 0, NULL, NULL, 0},
    {"topology", JF_ENUM, F(topology), 0, topology_names, NULL, 0},
    {"topology", JF_NODE, F(topology_node), 0, NULL, NULL, 0},
    {"arity", JF_INT, F(arity), 0, NULL, NULL, 0},
    {"mode", JF_ENUM, F(mode), 0, mode_names, NULL, 0},
    {"mode", JF_NODE, F(mode_node), 0, NULL, NULL, 0},
    {"poll", JF_ENUM, F(poll), 0, poll_names, NULL, 0},
    {"wake", JF_ENUM, F(wake), 0, wake_names, NULL, 0},
    END};
const struct job_field job_fields_codec[] = {
    {"query", JF_ENUM, F(codec_query), 0, NULL, codec_lookup, 0},
    {"answer", JF_ENUM, F(codec_answer), 0, NULL, codec_lookup, 0},
    {"topk", JF_DOUBLE, F(codec_topk), 0, NULL, NULL, 0},
    {"level", JF_INT, F(codec_level), 0, NULL, NULL, 0},
    END};
/* the stop section's fields that are no stop rule's (job_fields_init) */
static const struct job_field stop_others[] = {
    {"gap", JF_NODE, F(gap_node), 0, NULL, NULL, 0},
    {"check_every", JF_INT64, F(check_every), 0, NULL, NULL, 0},
    {"diverge", JF_DOUBLE, F(diverge), 0, NULL, NULL, 0},
    END};
const struct job_field job_fields_output[] = {
    {"history", JF_TEXT, F(history), 0, NULL, NULL, 0},
    {"every", JF_INT64, F(every), 0, NULL, NULL, 0},
    {"answers", JF_TEXT, F(answers), 0, NULL, NULL, 0},
    {"workers", JF_TEXT, F(workers_csv), 0, NULL, NULL, 0},
    {"format", JF_ENUM, F(format), 0, format_out_names, NULL, 0},
    {"every_epochs", JF_INT64, F(every_epochs), 0, NULL, NULL, 0},
    {"iterates", JF_TEXT, F(iterates), 0, NULL, NULL, 0},
    {"final", JF_TEXT, F(final), 0, NULL, NULL, 0},
    {"checkpoint", JF_TEXT, F(checkpoint), 0, NULL, NULL, 0},
    {"checkpoint", JF_NODE, F(checkpoint_node), 0, NULL, NULL, 0},
    {"checkpoint_every", JF_INT64, F(checkpoint_every), 0, NULL, NULL, 0},
    {"checkpoint_seconds", JF_DOUBLE, F(checkpoint_seconds), 0, NULL, NULL, 0},
    END};
const struct job_field job_fields_limits[] = {
    {"memory", JF_TEXT, F(memory_text), 0, NULL, NULL, 0}, END};
const struct job_field job_fields_stragglers[] = {
    {"work_ms", JF_DOUBLE, ST(work), 0, NULL, NULL, 1e-3},
    {"link_mbps", JF_DOUBLE, ST(link_bps), 0, NULL, NULL, 1e6},
    END};
const struct job_field job_fields_fixed[] = {
    {"ranks", JF_INTS, ST(fixed), ST(nfixed), NULL, NULL, 0},
    {"ranks", JF_NODE, ST(fixed_node), 0, NULL, NULL, 0},
    {"delay_ms", JF_DOUBLES, ST(fixed_delay), ST(nfixed_delay), NULL, NULL, 0},
    END};
const struct job_field job_fields_random[] = {
    {"probability", JF_DOUBLE, ST(random_p), 0, NULL, NULL, 0},
    {"delay_ms", JF_DOUBLE, ST(random_delay), 0, NULL, NULL, 1e-3},
    END};
const struct job_field job_fields_markov[] = {
    {"ranks", JF_INTS, ST(markov_ranks), ST(nmarkov), NULL, NULL, 0},
    {"ranks", JF_NODE, ST(markov_node), 0, NULL, NULL, 0},
    {"p_slow", JF_DOUBLE, ST(p_slow), 0, NULL, NULL, 0},
    {"p_fast", JF_DOUBLE, ST(p_fast), 0, NULL, NULL, 0},
    {"delay_ms", JF_DOUBLE, ST(markov_delay), 0, NULL, NULL, 1e-3},
    END};
const struct job_field job_fields_hang[] = {
    {"ranks", JF_INTS, ST(hang), ST(nhang), NULL, NULL, 0},
    {"ranks", JF_NODE, ST(hang_node), 0, NULL, NULL, 0},
    {"after", JF_INT64, ST(hang_after), 0, NULL, NULL, 0},
    END};
const struct job_field job_fields_corrupt[] = {
    {"ranks", JF_INTS, ST(corrupt), ST(ncorrupt), NULL, NULL, 0},
    {"ranks", JF_NODE, ST(corrupt_node), 0, NULL, NULL, 0},
    {"after", JF_INT64, ST(corrupt_after), 0, NULL, NULL, 0},
    END};

/* Room for the stop section: the rules' keys and job_keys_stop's, and
 * their ends. */
#define STOP_MAX 32

struct aia_param job_fields_stop_keys[STOP_MAX];
struct job_field job_fields_stop[STOP_MAX];

int job_fields_init(void)
{
    static int done;
    size_t nk = 0, nf = 0;
    if (done)
        return 0;
    codec_choices_init();
    data_formats_init();
    for (const struct proto_stop_rule *r = proto_stop_rules; r->name; r++) {
        if (!r->key.type)
            continue;
        if (nk >= STOP_MAX - 1 || nf >= STOP_MAX - 1)
            return -1;
        job_fields_stop_keys[nk++] =
            (struct aia_param){r->name, r->key.type, r->key.def, r->key.help,
                               NULL,    r->key.min,  r->key.max};
        job_fields_stop[nf++] = (struct job_field){
            r->name, r->key.kind, r->key.off, 0, NULL, NULL, 0};
    }
    for (const struct aia_param *k = job_keys_stop; k->name; k++) {
        if (nk >= STOP_MAX - 1)
            return -1;
        job_fields_stop_keys[nk++] = *k;
    }
    for (const struct job_field *f = stop_others; f->key; f++) {
        if (nf >= STOP_MAX - 1)
            return -1;
        job_fields_stop[nf++] = *f;
    }
    done = 1;
    return 0;
}
