/* datatest.h - what the tests of the data file readers (t/data.c,
 * t/data-formats.c) share: files written to a temporary folder, and
 * reads that bail out, or that must be refused alike by data_scan and
 * data_read. */
#ifndef AIARUN_DATATEST_H
#define AIARUN_DATATEST_H

#include <stddef.h>

#include "data/data.h"

/* Make the temporary folder (bails out on failure); remove it with every
 * file put there. */
void datatest_begin(void);
void datatest_end(void);

/* Write len bytes (len 0: strlen) to dir/name; returns the path. */
const char *put(const char *name, const void *bytes, size_t len);

/* The options of a file of this format at path, the rest the defaults. */
struct data_opts opts(int format, const char *path);

/* The options of a CSV file holding text. */
struct data_opts csv(const char *text);

/* Read every row, or stop the test run. */
void get(const struct data_opts *o, struct data_table *t);

/* The error of a file that data_scan and data_read must both refuse with
 * the same message. */
const char *refuse(const struct data_opts *o);

/* Whether a and b hold the same n values (a TAP comment on the first
 * that differs). */
int same(const double *a, const double *b, size_t n);

#endif
