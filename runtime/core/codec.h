/* codec.h - how the doubles of a query or an answer travel.
 *
 * A codec turns a message's n doubles into bytes and back.  Each one
 * states what decode(encode(x)) gives:
 *
 *   none      the doubles themselves (8 n bytes)
 *   float32   x rounded to nearest float: |d - x| <= 2^-24 |x|, or 2^-150
 *             below float's normal range; |x| beyond float's largest
 *             (3.4e38) is refused (4 n bytes)
 *   float16   IEEE half: |d - x| <= 2^-11 |x|, or 2^-25 below 2^-14;
 *             |x| that rounds above 65504 is refused, never saturated
 *             (2 n bytes)
 *   bfloat16  float's range with 8 significant bits: |d - x| <=
 *             (2^-8 + 2^-24) |x|, or 2^-134 below 2^-126; |x| beyond
 *             bfloat16's largest (3.39e38) is refused (2 n bytes)
 *   topk      the k entries of largest magnitude of x + r, exactly, and 0
 *             elsewhere, where r is the residual: what earlier encodings
 *             left out (error feedback); r then holds what this one left
 *             out (12 k bytes: k 32-bit indices, then k doubles)
 *   zstd      the doubles themselves, compressed by zstd (at most
 *             ZSTD_compressBound(8 n) bytes)
 *
 * Non-finite values are refused by every encoder but none and zstd, and
 * every decoder refuses bytes that are not an encoding of n doubles: a
 * wrong byte count, an index out of order or out of range, an infinity or
 * NaN bit pattern, a damaged, truncated or foreign zstd frame.
 */
#ifndef AIARUN_CODEC_H
#define AIARUN_CODEC_H

#include <stddef.h>

#include <aiarun/aiarun.h>

enum codec_id {
    CODEC_NONE = 0,
    CODEC_FLOAT32 = 1,
    CODEC_FLOAT16 = 2,
    CODEC_BFLOAT16 = 3,
    CODEC_TOPK = 4,
    CODEC_ZSTD = 5,
    CODEC_COUNT
};

/* The pool.codec section of a job file (the configuration binds its keys
 * here): how queries and answers travel. */
struct codec_conf {
    int query, answer; /* enum codec_id */
    double topk;       /* topk: a fraction of the answer (< 1) or a count */
    int level;         /* zstd's compression level */
};

struct codec {
    int id;
    size_t n;         /* doubles per message */
    size_t k;         /* topk: entries sent */
    int level;        /* zstd: compression level */
    double *residual; /* topk: mass not sent yet, n doubles */
    size_t *idx;      /* topk: scratch, n */
    void *zc, *zd;    /* zstd: compression and decompression contexts */
};

/* The codec's name ("float16"), or "?" for an unknown id. */
const char *codec_name(int id);

/* The id of the codec named name, or -1. */
int codec_lookup(const char *name);

/* The job file's choices of pool.codec.query and pool.codec.answer
 * ("none|float32|..."), in id order, from the codecs' table: filled by
 * codec_choices_init (job_sections_init calls it). */
#define CODEC_CHOICES_LEN 256
extern char codec_query_choices[CODEC_CHOICES_LEN];
extern char codec_answer_choices[CODEC_CHOICES_LEN];
void codec_choices_init(void);

/* Whether this build has codec id (zstd needs libzstd). */
int codec_available(int id);

/* Entries top-k keeps of n for the job's value t: a fraction of n when
 * t < 1 (at least one entry), else a count (at most n). */
size_t codec_topk_count(double t, size_t n);

/* Set c up for messages of n doubles.  0, or -1 with err (out of memory,
 * or a codec this build lacks).  c is then ready for codec_free either
 * way. */
int codec_init(struct codec *c, int id, size_t n, size_t k, int level,
               struct aia_error *err);

void codec_free(struct codec *c);

/* The most bytes an encoding of n doubles takes. */
size_t codec_bound(const struct codec *c);

/* Encode the n doubles of x into out (codec_bound bytes), setting *bytes.
 * topk adds the residual to x and keeps what it leaves out.  0, or -1
 * with err naming the value it cannot encode (nothing is changed then). */
int codec_encode(struct codec *c, const double *x, void *out, size_t *bytes,
                 struct aia_error *err);

/* Decode the bytes at in into the n doubles of x.  0, or -1 with err
 * saying why the bytes are not an encoding of n doubles. */
int codec_decode(struct codec *c, const void *in, size_t bytes, double *x,
                 struct aia_error *err);

/* 1 when codec_decode refuses every value that is not finite (float32,
 * float16, bfloat16 and topk look at each value they write), so that a
 * value it decoded need not be looked at again; 0 for none and zstd. */
int codec_decodes_finite(const struct codec *c);

#endif
