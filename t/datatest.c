/* datatest.c - the data readers' tests' temporary files and the reads
 * they check (datatest.h). */
#include <config.h>

#include "datatest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static char dir[] = "/tmp/aiarun-data.XXXXXX";
static char *made[64];
static int nmade;

void datatest_begin(void)
{
    if (!mkdtemp(dir))
        bail_out("mkdtemp failed");
}

void datatest_end(void)
{
    for (int i = 0; i < nmade; i++) {
        unlink(made[i]);
        free(made[i]);
    }
    rmdir(dir);
}

const char *put(const char *name, const void *bytes, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int i = 0;
    while (i < nmade && strcmp(made[i], path) != 0)
        i++;
    if (i == nmade) {
        if (nmade == 64 || !(made[i] = strdup(path)))
            bail_out("too many files");
        nmade++;
    }
    FILE *f = fopen(path, "wb");
    if (!len)
        len = strlen(bytes);
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0)
        bail_out("cannot write %s", path);
    return made[i];
}

struct data_opts opts(int format, const char *path)
{
    struct data_opts o;
    data_opts_init(&o);
    o.format = format;
    o.path = path;
    return o;
}

struct data_opts csv(const char *text)
{
    return opts(DATA_CSV, put("t.csv", text, 0));
}

void get(const struct data_opts *o, struct data_table *t)
{
    struct aia_error err;
    if (data_read(o, NULL, NULL, t, &err) < 0)
        bail_out("%s", err.text);
}

const char *refuse(const struct data_opts *o)
{
    static struct aia_error e1;
    struct aia_error e2;
    struct data_table t;
    size_t rows, cols;
    if (data_scan(o, &rows, &cols, &e1) == 0)
        return "(data_scan accepted it)";
    if (data_read(o, NULL, NULL, &t, &e2) == 0) {
        data_free(&t);
        return "(data_read accepted it)";
    }
    if (t.d.rows || t.x || t.y || t.source)
        return "(a refused read left the table filled)";
    if (strcmp(e1.text, e2.text) != 0)
        return "(data_scan and data_read differ)";
    return e1.text;
}

int same(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            diag("entry %zu: %.17g != %.17g", i, a[i], b[i]);
            return 0;
        }
    return 1;
}
