/* data_fuzz.h - the body of the data files' fuzz target (data_fuzz.c,
 * data_fuzz_one.c), shared with t/fuzz-regress.c, which replays
 * fuzz/regressions-data and fuzz/corpus-data through it in the ordinary
 * build. */
#ifndef AIARUN_DATA_FUZZ_H
#define AIARUN_DATA_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* One input: 4 bytes of options (format, flags, a number, where a second
 * file starts) and the file's bytes; see data_fuzz.c.  Returns 0 when the
 * file was read and its table is consistent with data_scan's count, 1
 * when it was refused clearly (the message names the file), -1 when
 * nothing could be tried (no temporary file), and -2 on a defect: a
 * refusal that names no file, a table that disagrees with the scan, a
 * value that is not finite.  why (size n) holds the refusal (1) or says
 * what the defect is (-2). */
int data_fuzz_one(const uint8_t *data, size_t size, char *why, size_t n);

#endif
