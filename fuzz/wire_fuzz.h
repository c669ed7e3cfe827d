/* wire_fuzz.h - the worker-message fuzz target, shared by libFuzzer's
 * build (make fuzz-wire) and the unit test (t/wire.c). */
#ifndef AIARUN_WIRE_FUZZ_H
#define AIARUN_WIRE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Check the message in data as the coordinator would (see wire_fuzz.c
 * for the input's layout): 1 when its header is refused with a reason, 0
 * when it passes (an answer's values then decoded and scanned, refused
 * with a reason or trusted), -1 when the input is too short or a refusal
 * came without a reason. */
int wire_fuzz_one(const uint8_t *data, size_t size);

#endif
