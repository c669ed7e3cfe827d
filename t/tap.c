/* tap.c - Test Anything Protocol output. */
#include "tap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int planned, run, failed;

void plan(int n)
{
    planned = n;
    if (n > 0)
        printf("1..%d\n", n);
    fflush(stdout);
}

void skip_all(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("1..0 # SKIP ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    exit(0);
}

void bail_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("Bail out! ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    exit(255);
}

static int vreport(int pass, const char *fmt, va_list ap)
{
    run++;
    if (!pass)
        failed++;
    printf("%s %d - ", pass ? "ok" : "not ok", run);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    return pass;
}

int ok(int pass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(pass, fmt, ap);
    va_end(ap);
    return pass;
}

int is_int(long long got, long long want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int pass = vreport(got == want, fmt, ap);
    va_end(ap);
    if (!pass)
        diag("     got: %lld\n    want: %lld", got, want);
    return pass;
}

int is_double(double got, double want, double tol, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int pass = vreport(fabs(got - want) <= tol, fmt, ap);
    va_end(ap);
    if (!pass)
        diag("     got: %.17g\n    want: %.17g (within %g)", got, want, tol);
    return pass;
}

int is_string(const char *got, const char *want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int pass = vreport(got && want && strcmp(got, want) == 0, fmt, ap);
    va_end(ap);
    if (!pass)
        diag("     got: '%s'\n    want: '%s'", got ? got : "(null)",
             want ? want : "(null)");
    return pass;
}

int like(const char *got, const char *want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int pass = vreport(got && strstr(got, want) != NULL, fmt, ap);
    va_end(ap);
    if (!pass)
        diag("     got: '%s'\n    want it to contain: '%s'",
             got ? got : "(null)", want);
    return pass;
}

void diag(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fflush(stdout);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
        printf("# %s\n", line);
    fflush(stdout);
}

int done_testing(void)
{
    if (planned == 0)
        printf("1..%d\n", run);
    else if (planned != run)
        diag("planned %d tests but ran %d", planned, run);
    fflush(stdout);
    return failed || (planned && planned != run) ? 1 : 0;
}

double tap_worst(double worst, double e)
{
    return isnan(worst) || isnan(e) ? NAN : fmax(worst, e);
}
