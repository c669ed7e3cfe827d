/* job_fuzz.h - the job-file fuzz target, shared by libFuzzer's build
 * (make fuzz) and the regression test (t/fuzz-regress.c).
 *
 * An input is the bytes of a job file.  Its comment lines of the form
 * "#o KEY=VALUE" (at most JOB_FUZZ_MAX_OVERRIDES, printable ASCII) are
 * also passed as command-line overrides, so that one input exercises
 * both; they are YAML comments, so the file reads the same without them.
 */
#ifndef AIARUN_JOB_FUZZ_H
#define AIARUN_JOB_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

#define JOB_FUZZ_MAX_OVERRIDES 4
#define JOB_FUZZ_PATH "fuzz.yaml"

/* Read the job in data (size bytes) as aiarun would, without MPI and
 * without dlopen: job_load (YAML, overrides, the runtime's sections),
 * then the plugin names checked (loader_spec_check) and the plugin
 * sections bound against copies of the tables of the shipped plugins
 * (job_fuzz_tables; the built-in standard wait), the standard wait
 * created for a pool of 4 workers, and the stragglers checked against
 * that pool.  Returns 0 when the job is
 * accepted, -1 with err filled when it is refused.  *overrides (may be
 * NULL) gets the number of overrides found in the input. */
int job_fuzz_one(const uint8_t *data, size_t size, struct aia_error *err,
                 int *overrides);

/* The tables the target binds plugin sections against, copies of the
 * shipped plugins' (help texts left out), ended by a NULL name; the first
 * of each kind also serves names it does not know. */
struct job_fuzz_table {
    const char *name;
    int kind;
    const struct aia_param *params;
    uint32_t pflags;
};
extern const struct job_fuzz_table job_fuzz_tables[];

/* NULL when text is a clear refusal of the input: not empty, starting
 * with the file name (or the command line's "-o" / "command line (-o)"
 * when the input carried overrides), not cut short by the error buffer,
 * and free of control characters; otherwise what is wrong with it. */
const char *job_fuzz_unclear(const char *text, int overrides);

#endif
