/* diverge.c - the divergence detector on constructed loss sequences and
 * query changes, and the one line it gives. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "core/diverge.h"
#include "tap.h"

static void losses(void)
{
    struct diverge d = {0};
    ok(!diverge_loss(&d, 1e6, 10), "the first loss only sets the bound");
    ok(!diverge_loss(&d, 1e6, 5e6), "a loss 5e5 times the first is not "
                                    "divergence at a factor 1e6");
    ok(diverge_loss(&d, 1e6, 1.0001e7), "one past 1e6 times the first is");
    ok(diverge_loss(&d, 1e6, INFINITY), "infinity is");
    ok(diverge_loss(&d, 1e6, NAN), "NaN is");
    ok(diverge_loss(&d, 1e6, -INFINITY), "and so is -infinity");
    ok(!diverge_loss(&d, 0, 1e300), "factor 0: any finite loss is accepted");
    ok(diverge_loss(&d, 0, NAN), "factor 0: a NaN is still divergence");

    struct diverge z = {0};
    ok(diverge_loss(&z, 1e6, NAN), "a NaN first loss is divergence");
    ok(!z.have, "and sets no bound");
    ok(!diverge_loss(&z, 1e6, 0), "a first loss of 0");
    ok(!diverge_loss(&z, 1e6, 1e100), "bounds nothing but finiteness");
}

static void changes(void)
{
    struct diverge d = {0};
    ok(!diverge_change(&d, 1e6, NAN), "no change yet: nothing to watch");
    ok(!diverge_change(&d, 1e6, 2), "the first change sets the watch");
    is_double(d.watch, 2000, 1e-9, "at sqrt(factor) times it");
    ok(!diverge_change(&d, 1e6, 1999), "a change below it asks nothing");
    ok(diverge_change(&d, 1e6, 2001), "one above it asks for the loss");
    is_double(d.watch, 4000, 1e-9, "and the watch doubles");
    ok(!diverge_change(&d, 1e6, 3000), "so a steady change asks once");
    ok(diverge_change(&d, 1e6, INFINITY), "a non-finite change asks");
    struct diverge off = {0};
    diverge_change(&off, 0, 1);
    ok(!diverge_change(&off, 0, 1e300), "factor 0 asks nothing");
}

static void message(void)
{
    struct diverge d = {0};
    char buf[640];
    diverge_loss(&d, 1e6, 2);
    diverge_message(buf, sizeof buf, 12, 0, 4e7, &d, 1e6, 0.5,
                    "given step; auto would be 0.05", 10);
    like(buf,
         "the method diverged at iteration 12: loss 4e+07 (2e+07 "
         "x the initial 2 > stop.diverge 1e+06)",
         "names the iteration, the loss and the bound crossed (%s)", buf);
    like(buf, "with step 0.5 (given step; auto would be 0.05)",
         "the step and why");
    like(buf, "stable bound of gradient descent is 2/L = 0.2:",
         "and the stable bound from L");
    ok(strchr(buf, '\n') == NULL, "on one line");
    like(buf, "2/L = 0.2: try a step below it, or step: auto",
         "a given step: the advice names step: auto");
    diverge_message(buf, sizeof buf, 175, 0, 4e7, &d, 1e6, 0.05,
                    "auto: 1/(2L)", 10);
    like(buf,
         "2/L = 0.2: stale answers made a step within it unstable: try a "
         "smaller one",
         "an auto step within 2/L: no advice to take step: auto (%s)", buf);
    diverge_message(buf, sizeof buf, 9, 0, 4e7, &d, 1e6, 0.1,
                    "given step", 10);
    like(buf,
         "2/L = 0.2, but stale or per-answer steps add up over a round "
         "trip: try a smaller step, or step: auto",
         "a given step within 2/L: not told to go below what it is (%s)",
         buf);
    ok(strstr(buf, "try a step below it") == NULL,
       "and not told to take a step below 2/L");
    diverge_message(buf, sizeof buf, 3, 4, NAN, &d, 1e6, NAN, NULL, 0);
    like(buf,
         "iteration 3: an answer of rank 4 is not finite; try a "
         "smaller step (the problem gives no L",
         "a non-finite answer, with no step and no L (%s)", buf);
}

static void answers(void)
{
    char buf[512];
    diverge_answer(buf, sizeof buf, 3, "sgd", 17, 5, NAN, 10);
    like(buf,
         "rank 3: algorithm 'sgd': answer to round 17 holds nan at index "
         "5: the method diverged, or the plugin is wrong; the stable bound "
         "of gradient descent is 2/L = 0.2: try a step below it",
         "an answer not finite: rank, round, index, value, 2/L (%s)", buf);
    diverge_answer(buf, sizeof buf, 1, "gd", 2, 0, -INFINITY, 0);
    like(buf,
         "holds -inf at index 0: the method diverged, or the plugin is "
         "wrong; try a smaller step (the problem gives no L",
         "an infinity, and no L (%s)", buf);
}

int main(void)
{
    plan(0);
    losses();
    changes();
    message();
    answers();
    return done_testing();
}
