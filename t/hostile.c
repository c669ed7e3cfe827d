/* hostile.c - job files written to hurt: deep, huge, binary, empty,
 * duplicated, mistyped, alias bombs, long keys, NUL bytes, bad UTF-8,
 * tabs, several documents.  Each is read as aiarun would (job_fuzz_one:
 * the YAML, the runtime's sections, the plugins' tables) and must be
 * refused in bounded time with one clear line naming the file, and the
 * line and key where there is one. */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job_fuzz.h"
#include "conf/manifest.h"
#include "tap.h"
#include "core/util.h"

/* Seconds any input may take; the quadratic cases this guards against
 * took minutes.  Looser under valgrind (t0190 sets AIA_VALGRIND) and the
 * sanitizers (.ci/run sets AIA_SANITIZED). */
#define BOUNDED                                                                \
    (getenv("AIA_VALGRIND") || getenv("AIA_SANITIZED") ? 60.0 : 10.0)

/* Under the sanitizers CI asks for a full stack unwind on every malloc
 * (for Open MPI's leak suppressions), some 50 times the cost of a node:
 * the inputs of many nodes are cut tenfold there, where memory safety,
 * not time, is what is checked. */
static int many(int n)
{
    return getenv("AIA_SANITIZED") ? n / 10 : n;
}

static const char head[] = "algorithm: {plugin: sgd}\n"
                           "problem: {plugin: lrmse}\n"
                           "stop: {iterations: 1}\n";

/* A growing buffer of bytes. */
struct buf {
    char *p;
    size_t n, room;
};

static void put(struct buf *b, const void *data, size_t n)
{
    if (b->n + n + 1 > b->room) {
        size_t room = 2 * (b->n + n + 1);
        char *p = realloc(b->p, room);
        if (!p)
            bail_out("out of memory");
        b->p = p;
        b->room = room;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void putf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void putf(struct buf *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    put(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void putn(struct buf *b, const char *s, size_t times)
{
    for (size_t i = 0; i < times; i++)
        puts_(b, s);
}

static double took;

/* The verdict on len bytes: "(accepted)" or the error text, which is
 * checked for clarity (job_fuzz_unclear) as the fuzzer checks it. */
static const char *verdict(const char *data, size_t len)
{
    static struct aia_error err;
    int overrides;
    double t = util_now();
    int rc = job_fuzz_one((const uint8_t *)data, len, &err, &overrides);
    took = util_now() - t;
    if (rc == 0)
        return "(accepted)";
    const char *why = job_fuzz_unclear(err.text, overrides);
    if (why)
        diag("unclear: %s: %s", why, err.text);
    return why ? "(unclear)" : err.text;
}

/* data must be refused with an error containing want, quickly. */
static void refused(const char *data, size_t len, const char *want,
                    const char *what)
{
    like(verdict(data, len), want, "%s", what);
    ok(took < BOUNDED, "%s: in %.3f s", what, took);
}

static void refused_s(const char *text, const char *want, const char *what)
{
    refused(text, strlen(text), want, what);
}

static void accepted(const char *data, size_t len, const char *what)
{
    is_string(verdict(data, len), "(accepted)", "%s", what);
    ok(took < BOUNDED, "%s: in %.3f s", what, took);
}

static void nesting(void)
{
    struct buf b = {0};
    puts_(&b, "algorithm: ");
    putn(&b, "[", 100000);
    putn(&b, "]", 100000);
    refused(b.p, b.n, "fuzz.yaml:1:44: nested too deeply",
            "100000 nested flow lists");
    b.n = 0;
    for (int i = 0; i < 5000; i++)
        putf(&b, "%*sk%d:\n", i, "", i);
    refused(b.p, b.n, "fuzz.yaml:33:33: nested too deeply",
            "5000 nested block mappings");
    b.n = 0;
    puts_(&b, "a: ");
    putn(&b, "{a: ", 50000);
    refused(b.p, b.n, "nested too deeply", "50000 unclosed flow mappings");
    free(b.p);
}

static void sizes(void)
{
    /* above the cap: refused when read, before any parsing */
    char path[] = "/tmp/aiarun-hostile.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        bail_out("mkstemp failed");
    FILE *f = fdopen(fd, "w");
    char block[65536];
    memset(block, '#', sizeof block);
    for (int i = 0; i < 257; i++)
        fwrite(block, 1, sizeof block, f);
    fclose(f);
    struct aia_error err;
    double t = util_now();
    ok(manifest_load(path, &err) == NULL, "a job file of 16 MiB + 64 KiB");
    like(err.text, "larger than 16777216 bytes", "is refused by its size");
    ok(util_now() - t < BOUNDED, "at once");
    unlink(path);

    /* below the cap: parsed in bounded time */
    struct buf b = {0};
    puts_(&b, head);
    putn(&b, "# a comment line that says nothing at all, again and again\n",
         250000);
    accepted(b.p, b.n, "a valid job padded to 15 MB with comments");
    b.n = 0;
    puts_(&b, "algorithm: {plugin: sgd, step: ");
    putn(&b, "7777777777", 1500000);
    puts_(&b, "}\nproblem: {plugin: lrmse}\nstop: {iterations: 1}\n");
    refused(b.p, b.n,
            "fuzz.yaml:1:32: algorithm.step: expected a finite number, got "
            "'7777",
            "a 15 MB number");
    b.n = 0;
    puts_(&b, head);
    puts_(&b, "output: {history: \"");
    putn(&b, "h", 1000000);
    puts_(&b, "\"}\n");
    accepted(b.p, b.n, "a 1 MB string value binds (it is a file name)");

    /* many nodes: refused at the limit, or bound in linear time */
    b.n = 0;
    if (getenv("AIA_SANITIZED")) {
        ok(1, "150000 top-level keys # SKIP too slow under the sanitizers");
    } else {
        for (int i = 0; i < 150000; i++)
            putf(&b, "k%d: %d\n", i, i);
        refused(b.p, b.n, "fuzz.yaml:100000:9: too many nodes",
                "150000 top-level keys");
    }
    b.n = 0;
    puts_(&b, head);
    puts_(&b, "pool: {workers: [1");
    for (int i = 2; i <= many(199000); i++)
        putf(&b, ", %d", i);
    puts_(&b, "]}\n");
    /* ranks past the world's are its business: refused at run time; a
     * rank listed twice is refused when read, in bounded time */
    accepted(b.p, b.n, "a list of 199000 items binds");
    b.n = 0;
    puts_(&b, head);
    puts_(&b, "pool: {workers: [");
    for (int i = 1; i <= many(199000); i++)
        putf(&b, "%d, ", i);
    puts_(&b, "7]}\n");
    refused(b.p, b.n, "pool.workers: rank 7 is listed twice",
            "199001 ranks, one twice at the end");
    b.n = 0;
    puts_(&b, "problem: {plugin: lrmse}\nstop: {iterations: 1}\n"
              "algorithm:\n  plugin: sgd\n");
    for (int i = 0; i < many(90000); i++)
        putf(&b, "  k%d: 1\n", i);
    refused(b.p, b.n,
            "fuzz.yaml:5:3: algorithm.k0: unknown key for plugin 'sgd'",
            "a plugin section of 90000 keys");
    b.n = 0;
    for (int i = 0; i < many(90000); i++)
        putf(&b, "k%d: 1\n", i);
    puts_(&b, "k0: 2\n");
    char want[80];
    snprintf(want, sizeof want,
             "fuzz.yaml:%d:1: k0: duplicate key (first at line 1)",
             many(90000) + 1);
    refused(b.p, b.n, want, "a duplicate after 90000 keys");
    free(b.p);
}

static void garbage(void)
{
    struct aia_rng rng;
    aia_rng_seed(&rng, 7, 0);
    char data[4096];
    int clear = 0;
    double slowest = 0;
    for (int k = 0; k < 200; k++) {
        size_t len = 1 + aia_rng_below(&rng, sizeof data);
        for (size_t i = 0; i < len; i++)
            data[i] = (char)aia_rng_below(&rng, 256);
        const char *v = verdict(data, len);
        clear += strncmp(v, "fuzz.yaml:", 10) == 0;
        slowest = took > slowest ? took : slowest;
    }
    is_int(clear, 200, "200 buffers of random bytes: refused clearly");
    ok(slowest < BOUNDED, "each in bounded time (slowest %.3f s)", slowest);
    refused("\x7f"
            "ELF\x02\x01\x01",
            7,
            "fuzz.yaml:1:1: control characters "
            "are not allowed (byte 0x7f)",
            "an ELF header");
}

static void empty(void)
{
    refused("", 0, "fuzz.yaml:1:1: the job file is empty", "an empty file");
    refused_s("# nothing\n# at all\n", "fuzz.yaml:1:1: the job file is empty",
              "a file of comments");
    refused_s("\n\n   \n\n", "fuzz.yaml:1:1: the job file is empty",
              "a file of blanks");
    refused_s("---\n", "fuzz.yaml:2:1: the job file must be a mapping",
              "a document with nothing in it");
    refused_s("---\n...\n---\n...\n",
              "fuzz.yaml:2:1: the job file must be a mapping",
              "two empty documents");
    refused_s("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"
              "stop: {iterations: 1}\npool:\n",
              "fuzz.yaml:4:6: pool: expected a mapping of keys, got an "
              "empty value",
              "an empty section");
}

static void duplicates(void)
{
    refused_s("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"
              "algorithm: {plugin: gd}\n",
              "fuzz.yaml:3:1: algorithm: duplicate key (first at line 1)",
              "a section given twice");
    refused_s("algorithm:\n  plugin: sgd\n  step: 1\n  step: 2\n",
              "fuzz.yaml:4:3: step: duplicate key (first at line 3)",
              "a key given twice");
    refused_s("algorithm: {plugin: sgd, plugin: gd}\n",
              "fuzz.yaml:1:26: plugin: duplicate key (first at line 1)",
              "a key given twice in a flow mapping");
    refused_s("a: 1\n\"a\": 2\n", "fuzz.yaml:2:1: a: duplicate key",
              "a key given again, quoted");
}

static void types(void)
{
    refused_s("algorithm: [sgd]\nproblem: {plugin: lrmse}\n"
              "stop: {iterations: 1}\n",
              "fuzz.yaml:1:12: algorithm: expected a mapping of keys, got "
              "a list",
              "a section that is a list");
    refused_s("algorithm: sgd\n",
              "fuzz.yaml:1:12: algorithm: expected a mapping of keys, got "
              "'sgd'",
              "a section that is a word");
    refused_s("algorithm: {plugin: [sgd]}\n",
              "fuzz.yaml:1:21: algorithm.plugin: expected a single value, "
              "got a list or mapping",
              "a plugin that is a list");
    refused_s("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"
              "stop: {iterations: ten}\n",
              "fuzz.yaml:3:20: stop.iterations: expected an integer, got "
              "'ten'",
              "a word for a number");
    refused_s("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"
              "stop: {iterations: !!int 10}\n",
              "got '10' (quoted or tagged, so text)",
              "a tagged number says why it is refused");
    refused_s("algorithm: {plugin: sgd, step: {a: 1}}\n"
              "problem: {plugin: lrmse}\nstop: {iterations: 1}\n",
              "fuzz.yaml:1:32: algorithm.step: expected a number, got a list "
              "or mapping",
              "a mapping for a number");
    refused_s("seed: -1\n", "fuzz.yaml:1:7: seed: must be between 0 and",
              "a negative seed");
    refused_s("? [a, b]\n: 1\n", "fuzz.yaml:1:3: a key must be a plain name",
              "a list as a key");
    refused_s("- algorithm\n- problem\n",
              "fuzz.yaml:1:1: the job file must be a mapping of sections",
              "a job that is a list");
    refused_s("stop: !!set {iterations: 1}\n",
              "fuzz.yaml:1:7: tags (!!set, !name) on a mapping or list are "
              "not supported",
              "a tag on a mapping");
}

static void aliases(void)
{
    /* the billion laughs: 10^9 "lol" if aliases were expanded */
    struct buf b = {0};
    puts_(&b, "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (char c = 'b'; c <= 'j'; c++)
        putf(&b, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n",
             c, c, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1,
             c - 1, c - 1);
    refused(b.p, b.n, "fuzz.yaml:2:8: aliases (*name) are not supported",
            "the billion laughs");
    ok(took < 0.5, "refused at the first alias, not expanded (%.3f s)", took);
    b.n = 0;
    puts_(&b, "x: &x ");
    putn(&b, "[", 30);
    putn(&b, "]", 30);
    puts_(&b, "\ny: [");
    putn(&b, "*x, ", 100000);
    puts_(&b, "*x]\n");
    refused(b.p, b.n, "fuzz.yaml:2:5: aliases",
            "100000 aliases of a deep "
            "list");
    refused_s("algorithm: &a {plugin: sgd, <<: *a}\n",
              "fuzz.yaml:1:33: "
              "aliases",
              "a merge key that refers to itself");
    free(b.p);
}

static void long_text(void)
{
    struct buf b = {0};
    puts_(&b, head);
    puts_(&b, "\"");
    putn(&b, "k", 1000000);
    puts_(&b, "\": 1\n");
    refused(b.p, b.n,
            "fuzz.yaml:4:1: YAML syntax error: a key of more than 1024 "
            "characters",
            "a 1 MB key");
    b.n = 0;
    puts_(&b, "algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"
              "stop: {iterations: 1, ");
    putn(&b, "k", 1000);
    puts_(&b, ": 1}\n");
    refused(b.p, b.n,
            "fuzz.yaml:3:23: stop.kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
            "kkkkkkkkkkkkkkkkkkkkkkkkk...: unknown key; known keys: "
            "iterations, time",
            "a 1000-character unknown key is shown cut short, with what is "
            "wrong");
    b.n = 0;
    puts_(&b, "algorithm: {plugin: ");
    putn(&b, "p", 1000000);
    puts_(&b, "}\nproblem: {plugin: lrmse}\nstop: {iterations: 1}\n");
    refused(b.p, b.n, "fuzz.yaml:1:1: algorithm: pppppppppp",
            "a 1 MB plugin name");
    like(verdict(b.p, b.n), "...: not a plugin name", "says it is not a name");
    refused_s("algorithm: {plugin: \"sgd\\nrm\"}\n"
              "problem: {plugin: lrmse}\nstop: {iterations: 1}\n",
              "fuzz.yaml:1:1: algorithm: sgd\\nrm: not a plugin name",
              "a plugin name with a newline is shown escaped");
    refused_s("algorithm: {plugin: \"sgd\\nrm -rf /\"}\n"
              "problem: {plugin: lrmse}\nstop: {iterations: 1}\n",
              "fuzz.yaml:1:1: algorithm: sgd\\nrm -rf /: a plugin path with "
              "control characters",
              "so is a plugin path with a newline");
    refused_s("algorithm: {plugin: \"./a\\x01.so\"}\n"
              "problem: {plugin: lrmse}\nstop: {iterations: 1}\n",
              "fuzz.yaml:1:1: algorithm: ./a\\x01.so: a plugin path with "
              "control characters",
              "a plugin path with a control character");
    free(b.p);
}

static void bytes(void)
{
    static const char nul[] = "algorithm: {plugin: sgd\0}\n";
    refused(nul, sizeof nul - 1,
            "fuzz.yaml:1:24: control characters are not allowed (byte 0x00)",
            "a NUL byte names its line and column");
    refused("\0", 1, "fuzz.yaml:1:1: control characters", "a lone NUL");
    static const char nulc[] = "# a comment \0 with a NUL\nseed: 1\n";
    refused(nulc, sizeof nulc - 1, "fuzz.yaml:1:13: control characters",
            "a NUL in a comment");
    refused_s("algorithm: {plugin: \"sg\\0d\"}\n",
              "fuzz.yaml:1:21: a value holds a NUL byte",
              "an escaped NUL in a value");
    refused_s("\"a\\0b\": 1\n", "fuzz.yaml:1:1: a value holds a NUL byte",
              "an escaped NUL in a key");
    refused_s("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"
              "stop:\n  iterations: 1\n  \"\\e[31m\": 1\n",
              "fuzz.yaml:5:3: stop.\\x1b[31m: unknown key",
              "a terminal escape in a key is shown escaped");
    refused_s("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"
              "stop: {iterations: 1}\noutput: {every: \"\\e[2J\\a\"}\n",
              "fuzz.yaml:4:17: output.every: expected an integer, got "
              "'\\x1b[2J\\x07' (quoted or tagged, so text)",
              "so is one in a value");
    refused_s("algorithm: {plugin: s\xff\xfegd}\n",
              "fuzz.yaml:1:22: invalid leading UTF-8 octet (byte 0xff)",
              "an invalid UTF-8 byte names its line and column");
    refused_s("a: 1\nb: \xc3\n", "fuzz.yaml:2:5: invalid trailing UTF-8 octet",
              "a cut UTF-8 sequence");
    refused_s("a: \xc0\xaf\n",
              "fuzz.yaml:1:4: invalid length of a UTF-8 "
              "sequence",
              "an overlong UTF-8 encoding");
    refused_s("a: \xed\xa0\x80\n", "fuzz.yaml:1:4: invalid Unicode character",
              "a UTF-8 encoded surrogate");
    refused_s("a: \xef\xbf\xbe\n", "fuzz.yaml:1:4: control characters",
              "a non-character");
    static const char utf16[] = "\xff\xfe"
                                "a\0:\0 \0\x01\0\n\0";
    refused(utf16, sizeof utf16 - 1,
            "fuzz.yaml: byte 8: control characters are not allowed",
            "UTF-16 with a control character: its byte offset");
}

static void layout(void)
{
    refused_s("algorithm:\n\tplugin: sgd\n",
              "fuzz.yaml:2:1: YAML syntax error: found character that cannot "
              "start any token",
              "a tab as indentation");
    refused_s("algorithm:\n  plugin: sgd\n    step: 1\n",
              "fuzz.yaml:3:9: YAML syntax error: mapping values are not "
              "allowed",
              "a bad indentation");
    refused_s("algorithm:\n  plugin: sgd\n  oops\nproblem: {}\n",
              "fuzz.yaml:4:1: YAML syntax error: could not find expected ':'",
              "a key without a value");
    char two[512];
    snprintf(two, sizeof two, "%s---\n%s", head, head);
    refused_s(two,
              "fuzz.yaml:4:1: a job file holds one YAML document, "
              "found a second",
              "a second document");
    snprintf(two, sizeof two, "%s...\nseed: 2\n", head);
    refused_s(two,
              "fuzz.yaml:5:1: YAML syntax error: did not find expected "
              "<document start>",
              "text after an end marker");

    /* unusual, valid */
    char job[512];
    snprintf(job, sizeof job, "\xef\xbb\xbf%s", head);
    accepted(job, strlen(job), "a UTF-8 byte order mark");
    accepted("algorithm: {plugin: sgd}\r\nproblem: {plugin: lrmse}\r\n"
             "stop: {iterations: 1}\r\n",
             75, "CRLF line ends");
    accepted("algorithm: {plugin: sgd}\rproblem: {plugin: lrmse}\r"
             "stop: {iterations: 1}\r",
             72, "CR line ends");
    static const char u16[] = "\xff\xfe"
                              "s\0t\0o\0p\0:\0 \0{\0i\0t\0e\0r\0a\0t\0i\0o\0"
                              "n\0s\0:\0 \0\x31\0}\0\n\0"
                              "a\0l\0g\0o\0r\0i\0t\0h\0m\0:\0 \0{\0p\0l\0u\0"
                              "g\0i\0n\0:\0 \0s\0g\0d\0}\0\n\0"
                              "p\0r\0o\0b\0l\0e\0m\0:\0 \0{\0p\0l\0u\0g\0i\0"
                              "n\0:\0 \0l\0r\0m\0s\0e\0}\0\n\0";
    accepted(u16, sizeof u16 - 1, "UTF-16 with a byte order mark");
}

/* util_shown: how file text appears in messages. */
static void shown(void)
{
    char buf[80];
    is_string(util_shown(buf, sizeof buf, "plain", 60), "plain",
              "short text is shown as is");
    is_string(util_shown(buf, sizeof buf, "a\tb\nc\rd\x1b\x7f", 60),
              "a\\tb\\nc\\rd\\x1b\\x7f", "control characters are escaped");
    is_string(util_shown(buf, sizeof buf, "abcdefgh", 4), "abcd...",
              "long text is cut, with dots");
    is_string(util_shown(buf, sizeof buf, "ab\xc3\xa9\xc3\xa9", 3),
              "ab\xc3\xa9...", "a cut ends on a whole character");
    is_string(util_shown(buf, 8, "abcdefghijkl", 60), "abcd...",
              "and fits the buffer");
    is_string(util_shown(buf, 8, "abc\xc3\xa9\xc3\xa9xyz", 60), "abc...",
              "without half a character before the dots");
    is_string(util_shown(buf, 3, "abcdef", 60), "", "a buffer too small");
    is_int((long long)strlen(util_shown(buf, sizeof buf,
                                        "\x01\x01\x01\x01\x01\x01\x01\x01"
                                        "\x01\x01\x01\x01\x01\x01\x01\x01"
                                        "\x01\x01\x01\x01\x01\x01\x01\x01",
                                        60)),
           79, "escapes are cut to the buffer too");
}

int main(void)
{
    plan(0);
    shown();
    nesting();
    sizes();
    garbage();
    empty();
    duplicates();
    types();
    aliases();
    long_text();
    bytes();
    layout();
    return done_testing();
}
