/* host.h - the services table handed to plugins, and the runtime's own
 * diagnostics: every line on stderr is prefixed "aiarun[rank]: ". */
#ifndef AIARUN_HOST_H
#define AIARUN_HOST_H

#include <aiarun/aiarun.h>

/* Verbosity: AIA_LOG_WARN by default, -q lowers, -v raises. */
void host_setup(int rank, int verbosity);

/* The table to hand to plugins (static storage). */
const struct aia_host *host_get(void);

/* A diagnostic line at level (printed when level <= verbosity). */
void host_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* An error line, always printed. */
void host_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int host_verbosity(void);

/* The step an algorithm noted (aia_note_step) and why; NaN when none. */
double host_step(const char **why);

/* The i-th report line a plugin noted (aia_note) and its key in *key;
 * NULL past the last. */
const char *host_note(int i, const char **key);
int host_rank(void);

/* How progress is shown: HOST_PROGRESS_AUTO (a line rewritten in place
 * when stderr is a terminal, else periodic lines), _LINES, _TTY, _OFF. */
enum { HOST_PROGRESS_AUTO, HOST_PROGRESS_LINES, HOST_PROGRESS_TTY,
       HOST_PROGRESS_OFF };
void host_set_progress(int mode);
int host_progress(void);

#endif
