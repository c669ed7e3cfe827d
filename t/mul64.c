/* mul64.c - the public header's portable 64x64->128 multiply, and the two
 * functions built on it (aia_rng_below, and the runtime's
 * aia_partition_first, asked through the host as a plugin asks), give
 * bit for bit what the compiler's 128-bit integers gave: the same rows on
 * every rank and the same random numbers as before. */
#include <config.h>

#include <limits.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

#include "core/host.h"
#include "tap.h"

#ifndef __SIZEOF_INT128__
int main(void)
{
    skip_all("this compiler has no 128-bit integers to compare with");
}
#else

typedef unsigned __int128 u128;

/* The reference: what the header computed before it was portable. */
static uint64_t old_below(struct aia_rng *g, uint64_t n)
{
    u128 m = (u128)aia_rng_u64(g) * n;
    uint64_t l = (uint64_t)m;
    if (l < n) {
        uint64_t t = -n % n;
        while (l < t) {
            m = (u128)aia_rng_u64(g) * n;
            l = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

static size_t old_first(size_t m, int p, int count)
{
    if (p <= 0)
        return 0;
    if (p >= count)
        return m;
    return (size_t)(((u128)m * (unsigned)p) / (unsigned)count);
}

static int same_product(uint64_t a, uint64_t b)
{
    u128 want = (u128)a * b;
    uint64_t lo, hi = aia_mul64(a, b, &lo);
    return hi == (uint64_t)(want >> 64) && lo == (uint64_t)want;
}

static void products(void)
{
    static const uint64_t edge[] = {0,
                                    1,
                                    2,
                                    3,
                                    0xffffffffu,
                                    0x100000000ull,
                                    0x100000001ull,
                                    0x7fffffffffffffffull,
                                    0x8000000000000000ull,
                                    0xfffffffeffffffffull,
                                    0xffffffff00000000ull,
                                    0xfffffffffffffffeull,
                                    UINT64_MAX};
    size_t ne = sizeof edge / sizeof edge[0];
    int bad = 0;
    for (size_t i = 0; i < ne; i++)
        for (size_t j = 0; j < ne; j++)
            bad += !same_product(edge[i], edge[j]);
    is_int(bad, 0, "every pair of %zu edge values multiplies as u128 does", ne);

    struct aia_rng g;
    aia_rng_seed(&g, 17, 3);
    bad = 0;
    for (int i = 0; i < 1000000; i++) {
        uint64_t a = aia_rng_u64(&g), b = aia_rng_u64(&g);
        /* also short operands, where carries between halves are rare */
        bad += !same_product(a, b) + !same_product(a >> (i % 64), b) +
               !same_product(a, b >> (i % 61));
    }
    is_int(bad, 0, "3e6 random products are those of u128");

    uint64_t lo, hi = aia_mul64(UINT64_MAX, UINT64_MAX, &lo);
    ok(hi == 0xfffffffffffffffeull && lo == 1,
       "(2^64-1)^2 = 2^128 - 2^65 + 1: carries through every half");
}

static void below(void)
{
    static const uint64_t ns[] = {1,
                                  2,
                                  3,
                                  7,
                                  10,
                                  1000,
                                  0xffffffffu,
                                  0x100000001ull,
                                  0x8000000000000000ull,
                                  0x8000000000000001ull,
                                  0xaaaaaaaaaaaaaaabull,
                                  UINT64_MAX - 1,
                                  UINT64_MAX};
    int bad = 0, draws = 0;
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        struct aia_rng a, b;
        aia_rng_seed(&a, 1, k);
        aia_rng_seed(&b, 1, k);
        for (int i = 0; i < 20000; i++, draws++)
            bad += aia_rng_below(&a, ns[k]) != old_below(&b, ns[k]);
        /* the rejections consumed the same numbers */
        bad += aia_rng_u64(&a) != aia_rng_u64(&b);
    }
    is_int(bad, 0, "%d draws below edge bounds are the old ones", draws);

    struct aia_rng a, b, r;
    aia_rng_seed(&a, 99, 0);
    aia_rng_seed(&b, 99, 0);
    aia_rng_seed(&r, 5, 5);
    bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t n = aia_rng_u64(&r) >> (aia_rng_u64(&r) % 64);
        n += n == 0;
        bad += aia_rng_below(&a, n) != old_below(&b, n);
    }
    is_int(bad, 0, "2e5 draws below random bounds are the old ones");

    aia_rng_seed(&a, 3, 1);
    aia_rng_seed(&b, 3, 1);
    bad = 0;
    for (int i = 0; i < 100000; i++)
        bad +=
            aia_rng_uniform(&a) != (double)(aia_rng_u64(&b) >> 11) * 0x1.0p-53;
    is_int(bad, 0, "uniform draws are the old ones (2^-53 as a decimal)");
}

static void partitions(void)
{
    static const size_t ms[] = {0,
                                1,
                                2,
                                3,
                                7,
                                100,
                                60000,
                                1000003,
                                1u << 31,
                                0xffffffffu,
                                0x100000000ull,
                                (size_t)1 << 62,
                                SIZE_MAX / 2,
                                SIZE_MAX - 1,
                                SIZE_MAX};
    static const int counts[] = {1,    2,     3,       7,         64,
                                 1000, 65535, 1000000, 0x7fffffff};
    int bad = 0, cases = 0;
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++) {
            int c = counts[j];
            struct aia_partition part = {0, c, AIA_PART_BLOCK, 0, NULL};
            int ps[] = {-1, 0, 1, 2, c / 3, c / 2, c - 2, c - 1, c,
                        c < INT_MAX ? c + 1 : c};
            for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++, cases++)
                bad += aia_partition_first(host_get(), &part, ms[i],
                                           ps[k]) != old_first(ms[i], ps[k], c);
        }
    is_int(bad, 0, "%d block boundaries at edge sizes are the old ones", cases);

    struct aia_rng r;
    aia_rng_seed(&r, 8, 8);
    bad = 0;
    for (int i = 0; i < 300000; i++) {
        size_t m = (size_t)(aia_rng_u64(&r) >> (aia_rng_u64(&r) % 64));
        int c = 1 + (int)aia_rng_below(&r, i % 2 ? 100 : 0x7fffffff);
        int p = (int)aia_rng_below(&r, (uint64_t)c + 1);
        struct aia_partition part = {0, c, AIA_PART_BLOCK, 0, NULL};
        bad += aia_partition_first(host_get(), &part, m, p) != old_first(m, p, c);
    }
    is_int(bad, 0, "3e5 random block boundaries are the old ones");
}

int main(void)
{
    plan(0);
    products();
    below();
    partitions();
    return done_testing();
}
#endif
