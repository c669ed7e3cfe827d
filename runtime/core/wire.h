/* wire.h - the messages between coordinator and workers.
 *
 * Every message is one contiguous buffer: a 64-byte header followed by its
 * payload (doubles for queries and answers, text for errors), sent as
 * MPI_BYTE.  Tags separate the directions and the control channel:
 *
 *   coordinator -> worker   TAG_QUERY  QUERY (round, query)
 *                           TAG_CTRL   STOP  (status; seq = queries sent)
 *                                      FINISH (after the goodbyes: flags
 *                                      say whether every rank is there to
 *                                      call MPI_Finalize)
 *   worker -> coordinator   TAG_ANSWER ANSWER (round, answer, compute time)
 *                                      ERROR  (text)
 *                                      BYE    (seq = answers sent)
 *
 * With a data file the loss is the workers' (eval.c): the coordinator
 * sends EVAL (seq: its number; the model as doubles, never encoded) on
 * TAG_QUERY, counted among the queries a STOP names, and the worker
 * answers EVALANS (seq: the EVAL's number; EVAL_LEN doubles, see eval.h)
 * on TAG_ANSWER, counted apart from its answers.
 *
 * A worker's ANSWERs and its BYE share one tag, so MPI's ordering delivers
 * every answer before the BYE: when the BYE arrives, nothing is in flight.
 * MPI_Finalize waits for every rank; when one is dead or hung, FINISH
 * tells the others to leave without it.
 *
 * In tree mode (tree.c) queries go down a tree of workers and answers come
 * up it, each the rows-weighted mean of a subtree's answers: a worker
 * receives QUERY (and, at the end, STOP) on TAG_QUERY from its parent and
 * ANSWER and BYE on TAG_ANSWER from its children; FINISH still comes from
 * rank 0 on TAG_CTRL.  A worker that distrusts a child, or hears an
 * ERROR from one, sends its parent an ERROR in place of its answer.
 */
#ifndef AIARUN_WIRE_H
#define AIARUN_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <aiarun/aiarun.h>

#define WIRE_MAGIC 0x31414941u /* "AIA1" */

/* The most bytes of a failure text a worker sends (its payload). */
#define WIRE_ERROR_TEXT 1024

/* pool.shards: rank 0 tells a shard rank on TAG_SHARD what to do (shard.h),
 * a shard rank exchanges its slices with workers on TAG_SLICE, and tells
 * rank 0 on TAG_SHARD_FAIL that its part of the run failed. */
enum wire_tag { TAG_QUERY = 101, TAG_CTRL = 102, TAG_ANSWER = 103,
                TAG_SHARD = 104, TAG_SLICE = 105, TAG_SHARD_FAIL = 106 };

enum wire_kind {
    WIRE_QUERY = 1,
    WIRE_ANSWER = 2,
    WIRE_STOP = 3,
    WIRE_ERROR = 4,
    WIRE_BYE = 5,
    WIRE_FINISH = 6,
    WIRE_EVAL = 7,
    WIRE_EVALANS = 8,
    /* coordinator -> idle worker, control tag: still here (taken and
     * ignored; counted nowhere) */
    WIRE_ALIVE = 9,
};

/* Doubles of an EVALANS: loss sum, metric sum, rows; the same for the
 * test rows (eval.h). */
#define EVAL_LEN 6

/* FINISH flags; on a STOP, WIRE_NO_FINALIZE says a shard rank is lost:
 * the worker takes no more query slices and waits on no answer part. */
#define WIRE_NO_FINALIZE 0x1u
/* EVAL: the training figures over the worker's sample of its rows
 * (output.history_sample), when it holds one */
#define WIRE_EVAL_SAMPLE 0x1u

struct wire_hdr {
    uint32_t magic;
    uint16_t kind;
    uint16_t status;  /* STOP: the job's exit status */
    uint64_t round;   /* QUERY: its round; ANSWER: round of the query */
    uint64_t len;     /* payload: doubles (QUERY, ANSWER), bytes (ERROR) */
    uint64_t seq;     /* ANSWER: its number; BYE: answers sent; STOP:
                         queries sent to this worker */
    double compute_s; /* ANSWER: seconds spent computing it */
    double delay_s;   /* ANSWER: seconds of injected delay */
    uint32_t codec;   /* QUERY, ANSWER: how the payload is encoded (enum
                         codec_id; len still counts the doubles) */
    union {
        uint32_t flags; /* FINISH: WIRE_NO_FINALIZE; EVAL:
                           WIRE_EVAL_SAMPLE */
        uint32_t bytes; /* QUERY, ANSWER: bytes of the encoded payload */
    };
    uint64_t rows;    /* ANSWER in tree mode: rows of the answers combined */
};

_Static_assert(sizeof(struct wire_hdr) == 64, "wire header is 64 bytes");

#define WIRE_PAYLOAD(buf) ((double *)((char *)(buf) + sizeof(struct wire_hdr)))

/* Bytes of a message with n doubles of payload. */
#define WIRE_BYTES(n) (sizeof(struct wire_hdr) + (n) * sizeof(double))

/* What an answer of this job must be. */
struct wire_expect {
    uint64_t answer_len; /* doubles */
    uint32_t codec;      /* enum codec_id */
    uint64_t eval_len;   /* doubles of an evaluation's answer; 0: none
                            asked for */
};

/* Why the bytes received from a worker, bytes long, cannot be trusted as
 * a message of this job (more than max_bytes, too short, not aiarun's,
 * of an unknown kind, or an answer whose codec, lengths or times are
 * wrong), or NULL when they can.  The text is static or written into why
 * (whylen bytes).  The payload is not looked at: a codec's bytes are
 * checked by decoding them (wire_answer_values). */
const char *wire_check(const void *buf, size_t bytes, size_t max_bytes,
                       const struct wire_expect *e, char *why, size_t whylen);

/* The index of the first value of x[0..n) that is NaN or infinite, or n
 * when all are finite. */
size_t wire_nonfinite(const double *x, size_t n);

struct codec;

/* The doubles of answer h (its header passed wire_check; its buffer
 * aligned for doubles): its payload, or with codec c (NULL: none) the
 * payload decoded into out (h->len doubles).  NULL when they do not
 * decode, with why (whylen bytes) saying why.  *bad is the index of the
 * first value that is NaN or infinite, h->len when all are finite: the
 * one pass over the values that finds it is the decoder's own where the
 * codec refuses such values (codec_decodes_finite), else wire_nonfinite
 * after it.  A well-formed answer holding one is not a malformed message
 * but a method that diverged (or a plugin that is wrong): the caller
 * says so and stops the run. */
const double *wire_answer_values(struct codec *c, const struct wire_hdr *h,
                                 double *out, size_t *bad, char *why,
                                 size_t whylen);

/* The text of ERROR message buf (bytes long, at least a header, in a
 * buffer of at least a header and WIRE_ERROR_TEXT bytes), ended within
 * the message: a worker's text is not trusted to end. */
const char *wire_error_text(char *buf, size_t bytes);

/* What rank 0 tells a shard rank on TAG_SHARD (pool.shards, mpi/shard.h);
 * the simulator counts its bytes too. */
enum shard_cmd {
    SHARD_ABSORB = 1, /* w's next answer slice, with info */
    SHARD_DROP,       /* w's next answer slice, not absorbed */
    SHARD_NEXT,       /* the algorithm's next query */
    SHARD_SEND,       /* the current query slice to w */
    SHARD_MODEL,      /* this slice of the model to rank 0 */
    SHARD_CHANGE,     /* the squared change of the query slice to rank 0 */
    SHARD_SAVE,       /* the state and the query slice to rank 0 */
    SHARD_LOAD,       /* the state and the query slice from rank 0 */
    SHARD_BYTES,      /* the bytes received and sent to rank 0 */
    SHARD_END,        /* the run is over: stop */
    SHARD_PING,       /* a word back to rank 0 (8 bytes): it is there */
};

struct shard_msg {
    uint32_t magic; /* WIRE_MAGIC */
    uint32_t cmd;   /* enum shard_cmd */
    int32_t w;      /* pool index */
    uint32_t pad;
    struct aia_answer_info info; /* SHARD_ABSORB */
};

/* A shard rank to rank 0, once, on TAG_SHARD_FAIL: an answer slice held
 * a value that is not finite (the method diverged) or the algorithm
 * failed on the slice; rank 0 stops the run with the text. */
struct shard_fail {
    uint32_t magic; /* WIRE_MAGIC */
    uint32_t pad;
    char text[WIRE_ERROR_TEXT];
};

#endif
