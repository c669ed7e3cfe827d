/* straggle.c - the seeded delay models of the stragglers section. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "session/straggle.h"
#include "tap.h"

int main(void)
{
    plan(0);
    struct job_stragglers st = {0};
    int64_t fixed[] = {2, 4};
    double fixed_ms[] = {50, 7};
    st.work = 0.001;
    st.fixed = fixed;
    st.nfixed = 2;
    st.fixed_delay = fixed_ms;
    st.nfixed_delay = 2;
    struct straggle s;
    straggle_init(&s, &st, 9, 2);
    is_double(straggle_next(&s), 0.051, 1e-15, "rank 2: work plus its delay");
    straggle_init(&s, &st, 9, 4);
    is_double(straggle_next(&s), 0.008, 1e-15, "rank 4: its own delay");
    straggle_init(&s, &st, 9, 3);
    is_double(straggle_next(&s), 0.001, 1e-15, "rank 3: work only");
    st.nfixed_delay = 1;
    straggle_init(&s, &st, 9, 4);
    is_double(straggle_next(&s), 0.051, 1e-15, "one delay for every rank");

    memset(&st, 0, sizeof st);
    st.random_p = 0.2;
    st.random_delay = 0.01;
    straggle_init(&s, &st, 9, 1);
    int hits = 0, n = 20000;
    for (int i = 0; i < n; i++)
        hits += straggle_next(&s) > 0;
    ok(fabs((double)hits / n - 0.2) < 0.015,
       "random: about p of the answers are delayed (%d of %d)", hits, n);

    memset(&st, 0, sizeof st);
    st.markov = 1;
    st.p_slow = 0.05;
    st.p_fast = 0.2;
    st.markov_delay = 0.03;
    straggle_init(&s, &st, 9, 1);
    int slow = 0, bursts = 0, prev = 0;
    n = 100000;
    for (int i = 0; i < n; i++) {
        int now = straggle_next(&s) > 0;
        slow += now;
        bursts += now && !prev;
        prev = now;
    }
    ok(fabs((double)slow / n - 0.2) < 0.02,
       "markov: the slow share is p_slow/(p_slow+p_fast) = 0.2 (%.3f)",
       (double)slow / n);
    ok(fabs((double)slow / bursts - 5) < 0.5,
       "markov: bursts last 1/p_fast = 5 answers on average (%.2f)",
       (double)slow / bursts);
    int64_t only[] = {3};
    st.markov_ranks = only;
    st.nmarkov = 1;
    straggle_init(&s, &st, 9, 1);
    double total = 0;
    for (int i = 0; i < 1000; i++)
        total += straggle_next(&s);
    is_double(total, 0, 0, "markov: ranks outside its list never slow down");

    memset(&st, 0, sizeof st);
    int64_t hang[] = {2};
    st.hang = hang;
    st.nhang = 1;
    st.hang_after = 3;
    straggle_init(&s, &st, 9, 2);
    int finite = 0;
    while (finite < 10 && isfinite(straggle_next(&s)))
        finite++;
    is_int(finite, 3, "hang: the worker answers 3 times, then never");

    memset(&st, 0, sizeof st);
    st.random_p = 0.5;
    st.random_delay = 0.01;
    struct straggle a, b, c;
    straggle_init(&a, &st, 9, 1);
    straggle_init(&b, &st, 9, 1);
    straggle_init(&c, &st, 9, 2);
    int same = 1, differ = 0;
    for (int i = 0; i < 100; i++) {
        double x = straggle_next(&a), y = straggle_next(&b),
               z = straggle_next(&c);
        same &= x == y;
        differ |= x != z;
    }
    ok(same, "the same seed and rank give the same delays");
    ok(differ, "another rank gets other delays");
    return done_testing();
}
