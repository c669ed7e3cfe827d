/* history.c - the history's columns (output.history): which a run
 * writes, their names (the problem's metric's among them) and their
 * values from a sample of the loss. */
#include <config.h>

#include "history.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A column of the history: its name ("%m" stands for the problem's metric
 * name, and such a column is written only for a problem that has one),
 * how it is written, its value, and when it is written (NULL: always).
 * Adding a column is one entry here plus its value function. */
struct history_column {
    const char *name;
    enum output_kind kind;
    double (*value)(const struct recorder *r, const struct sample *h);
    int (*shown)(const struct recorder *r);
};

static double h_iteration(const struct recorder *r, const struct sample *h)
{
    (void)r;
    return h->iteration;
}

static double h_epoch(const struct recorder *r, const struct sample *h)
{
    (void)r;
    return h->epoch;
}

static double h_time(const struct recorder *r, const struct sample *h)
{
    (void)r;
    return h->time;
}

static double h_loss(const struct recorder *r, const struct sample *h)
{
    (void)r;
    return h->loss;
}

static double h_suboptimality(const struct recorder *r, const struct sample *h)
{
    return r->opt_known ? h->loss - r->fopt : NAN;
}

static double h_change(const struct recorder *r, const struct sample *h)
{
    (void)r;
    return h->change;
}

static double h_metric(const struct recorder *r, const struct sample *h)
{
    (void)r;
    return h->metric;
}

static double h_test_loss(const struct recorder *r, const struct sample *h)
{
    (void)r;
    return h->test_loss;
}

static double h_test_metric(const struct recorder *r, const struct sample *h)
{
    (void)r;
    return h->test_metric;
}

static int with_test(const struct recorder *r)
{
    return r->job->test.path != NULL;
}

static double h_rows(const struct recorder *r, const struct sample *h)
{
    (void)r;
    return h->rows;
}

static int with_sample(const struct recorder *r)
{
    return r->sampling;
}

static const struct history_column history_columns[] = {
    {"iteration", OUT_INT, h_iteration, NULL},
    {"epoch", OUT_INT, h_epoch, NULL},
    {"time", OUT_TIME, h_time, NULL},
    {"loss", OUT_REAL, h_loss, NULL},
    {"suboptimality", OUT_REAL, h_suboptimality, NULL},
    {"change", OUT_REAL, h_change, NULL},
    {"%m", OUT_REAL, h_metric, NULL},
    {"test_loss", OUT_REAL, h_test_loss, with_test},
    {"test_%m", OUT_REAL, h_test_metric, with_test},
    {"loss_rows", OUT_INT, h_rows, with_sample},
};

#define NHISTORY (sizeof history_columns / sizeof history_columns[0])

/* Whether column c is in this run's history. */
static int history_shown(const struct recorder *r,
                         const struct history_column *c)
{
    if (strstr(c->name, "%m") && !r->s->metric_name)
        return 0;
    return !c->shown || c->shown(r);
}

/* The history's columns for this run into cols (names in names, which
 * must outlive the file).  Returns their count. */
static int header(const struct recorder *r, struct output_column *cols,
                  char (*names)[64])
{
    const char *mname = r->s->metric_name;
    int n = 0;
    for (size_t i = 0; i < NHISTORY; i++) {
        const struct history_column *c = &history_columns[i];
        if (!history_shown(r, c))
            continue;
        const char *m = strstr(c->name, "%m");
        if (m)
            snprintf(names[n], 64, "%.*s%s%s", (int)(m - c->name), c->name,
                     mname, m + 2);
        else
            snprintf(names[n], 64, "%s", c->name);
        cols[n] = (struct output_column){names[n], c->kind};
        n++;
    }
    return n;
}

int history_write(const struct recorder *r, const struct sample *h,
                  struct aia_error *err)
{
    double row[NHISTORY];
    int n = 0;
    for (size_t i = 0; i < NHISTORY; i++)
        if (history_shown(r, &history_columns[i]))
            row[n++] = history_columns[i].value(r, h);
    return output_row(r->hist, row, err);
}

struct output *history_open(const struct recorder *r, long long keep,
                            struct aia_error *err)
{
    static struct output_column cols[NHISTORY];
    static char names[NHISTORY][64];
    int n = header(r, cols, names);
    return output_open(r->job->output.history, r->job->output.format, cols, n,
                       keep, err);
}

int history_check_layout(const struct recorder *r, long long keep,
                         struct aia_error *err)
{
    struct output_column cols[NHISTORY];
    char names[NHISTORY][64];
    int n = header(r, cols, names);
    return output_check_layout("output.history", r->job->output.history, keep,
                               r->job->output.format, cols, n, err);
}
