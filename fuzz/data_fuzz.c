/* data_fuzz.c - libFuzzer target: data files read through the registry
 * of runtime/data.c (CSV, libsvm, binary, .npy, idx) as a job reads them:
 * data_scan over the whole file, then data_read of all its rows or of
 * every other one.  The file is an unlinked temporary file, named by its
 * /proc/self/fd path.  Any crash, leak, hang or read past a buffer is a
 * finding, and so are a refusal that does not name the file, a table
 * whose shape differs from the scan's and a value that is not finite.
 * HDF5 is left out: its parser is libhdf5's.
 *
 * An input is 4 bytes of options and the file:
 *   [0] the format (mod 5: csv, libsvm, binary, npy, idx)
 *   [1] flags: 1 sparse, 6 header (auto, no, yes), 0x18 the delimiter
 *       (detected, ',', ';', blanks), 0x20 a target column, 0x40 keep
 *       every other row, 0x80 a second file for the targets (npy, idx)
 *   [2] binary: columns (1 + [2] % 16); target column: [2] - 128 when it
 *       is set; libsvm: features ([2] % 4 == 0: from the file, else [2])
 *   [3] the second file: the input's last [3] bytes
 *
 *     make fuzz-data FUZZ_SECONDS=600
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "data_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];
    if (data_fuzz_one(data, size, why, sizeof why) == -2) {
        fprintf(stderr, "data_fuzz: %s\n", why);
        abort();
    }
    return 0;
}
