/* tap.h - Test Anything Protocol output for aiarun's C tests. */
#ifndef AIARUN_TAP_H
#define AIARUN_TAP_H

#define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Announce n tests; with n == 0 the plan is printed by done_testing. */
void plan(int n);
/* Print "1..0 # SKIP why" and exit 0. */
void skip_all(const char *fmt, ...) TAP_PRINTF(1, 2) __attribute__((noreturn));
/* Stop the whole test run. */
void bail_out(const char *fmt, ...) TAP_PRINTF(1, 2) __attribute__((noreturn));

int ok(int pass, const char *fmt, ...) TAP_PRINTF(2, 3);
int is_int(long long got, long long want, const char *fmt, ...)
    TAP_PRINTF(3, 4);
/* |got - want| <= tol */
int is_double(double got, double want, double tol, const char *fmt, ...)
    TAP_PRINTF(4, 5);
int is_string(const char *got, const char *want, const char *fmt, ...)
    TAP_PRINTF(3, 4);
/* got contains want */
int like(const char *got, const char *want, const char *fmt, ...)
    TAP_PRINTF(3, 4);
void diag(const char *fmt, ...) TAP_PRINTF(1, 2);

/* The larger of the worst difference so far and e, NaN once either is:
 * fmax drops a NaN, and a check of the worst difference passed over
 * it. */
double tap_worst(double worst, double e);

/* Print the plan if it was lazy; exit status: 0 when all passed. */
int done_testing(void);

#endif
