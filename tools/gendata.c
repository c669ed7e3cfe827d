/* gendata.c - write the example data files of etc/data.
 *
 *     gendata DIR
 *
 * writes DIR/lr.csv, DIR/lr.svm, DIR/lr.bin and DIR/logreg.csv.  Every
 * random number comes from aia_rng (one stream per row), and every value
 * is rounded to 4 decimals before it is written, so the files are the same
 * on every machine and the three lr files hold exactly the same doubles:
 * a 4-decimal number printed and read back with strtod is the double
 * computed here.  etc/data/README describes the files.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

#define SEED 20240601u

#define LR_ROWS 2000
#define LR_COLS 8
#define LR_ZEROS 0.3 /* share of feature values that are exactly 0 */
#define LR_NOISE 0.1

#define LOG_ROWS 1000
#define LOG_COLS 5
#define LOG_MARGIN 0.25 /* |w.x + b| of every row is at least this */

static const double lr_x[LR_COLS] = {1.5, -2, 0.5, 3, -1, 0.25, 2, -0.75};
static const double log_w[LOG_COLS] = {1, -1, 0.5, 2, -0.5};
static const double log_b = 0.25;

static double round4(double v)
{
    double r = round(v * 1e4) / 1e4;
    return r == 0 ? 0.0 : r; /* never "-0" */
}

/* v (a round4 value) in at most 4 decimals, without trailing zeros. */
static const char *num(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%.4f", v);
    char *end = buf + strlen(buf);
    while (end[-1] == '0')
        *--end = '\0';
    if (end[-1] == '.')
        end[-1] = '\0';
    return buf;
}

struct out {
    FILE *f;
    char *path;
};

static int open_out(struct out *o, const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    o->path = malloc(len);
    if (!o->path)
        return -1;
    snprintf(o->path, len, "%s/%s", dir, name);
    o->f = fopen(o->path, "wb");
    if (!o->f) {
        fprintf(stderr, "gendata: %s: %s\n", o->path, strerror(errno));
        free(o->path);
        return -1;
    }
    return 0;
}

static int close_out(struct out *o)
{
    int bad = ferror(o->f);
    if (fclose(o->f) != 0 || bad) {
        fprintf(stderr, "gendata: %s: write error\n", o->path);
        free(o->path);
        return -1;
    }
    free(o->path);
    return 0;
}

static void put_le(FILE *f, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    for (int i = 0; i < 8; i++)
        fputc((int)((u >> (8 * i)) & 0xff), f);
}

/* Row i of the least-squares data: features a, target *y. */
static void lr_row(size_t i, double *a, double *y)
{
    struct aia_rng g;
    aia_rng_seed(&g, SEED, i);
    double dot = 0;
    for (int j = 0; j < LR_COLS; j++) {
        int zero = aia_rng_uniform(&g) < LR_ZEROS;
        double v = aia_rng_normal(&g);
        a[j] = zero ? 0.0 : round4(v);
        dot += a[j] * lr_x[j];
    }
    *y = round4(dot + LR_NOISE * aia_rng_normal(&g));
}

static int write_lr(const char *dir)
{
    struct out csv, svm, bin;
    if (open_out(&csv, dir, "lr.csv") < 0)
        return -1;
    if (open_out(&svm, dir, "lr.svm") < 0) {
        close_out(&csv);
        return -1;
    }
    if (open_out(&bin, dir, "lr.bin") < 0) {
        close_out(&csv);
        close_out(&svm);
        return -1;
    }
    for (int j = 0; j < LR_COLS; j++)
        fprintf(csv.f, "x%d,", j + 1);
    fprintf(csv.f, "y\n");
    for (size_t i = 0; i < LR_ROWS; i++) {
        double a[LR_COLS], y;
        char buf[64];
        lr_row(i, a, &y);
        fprintf(svm.f, "%s", num(y, buf, sizeof buf));
        for (int j = 0; j < LR_COLS; j++) {
            fprintf(csv.f, "%s,", num(a[j], buf, sizeof buf));
            if (a[j] != 0)
                fprintf(svm.f, " %d:%s", j + 1, num(a[j], buf, sizeof buf));
            put_le(bin.f, a[j]);
        }
        fprintf(csv.f, "%s\n", num(y, buf, sizeof buf));
        fprintf(svm.f, "\n");
        put_le(bin.f, y);
    }
    int rc = close_out(&csv);
    rc |= close_out(&svm);
    rc |= close_out(&bin);
    return rc;
}

/* Binary classification: points drawn until their score w.x + b is at
 * least the margin away from 0; the label is the score's sign. */
static int write_logreg(const char *dir)
{
    struct out csv;
    if (open_out(&csv, dir, "logreg.csv") < 0)
        return -1;
    for (int j = 0; j < LOG_COLS; j++)
        fprintf(csv.f, "x%d,", j + 1);
    fprintf(csv.f, "label\n");
    for (size_t i = 0; i < LOG_ROWS; i++) {
        struct aia_rng g;
        aia_rng_seed(&g, SEED + 1, i);
        double x[LOG_COLS], s;
        do {
            s = log_b;
            for (int j = 0; j < LOG_COLS; j++) {
                x[j] = round4(aia_rng_normal(&g));
                s += log_w[j] * x[j];
            }
        } while (fabs(s) < LOG_MARGIN);
        char buf[64];
        for (int j = 0; j < LOG_COLS; j++)
            fprintf(csv.f, "%s,", num(x[j], buf, sizeof buf));
        fprintf(csv.f, "%d\n", s > 0);
    }
    return close_out(&csv);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gendata DIR\n");
        return 2;
    }
    if (write_lr(argv[1]) < 0 || write_logreg(argv[1]) < 0)
        return 1;
    return 0;
}
