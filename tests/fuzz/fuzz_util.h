/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every libFuzzer target here needs around the code it tests: the
 * input as a file (the readers take paths), stdio's stderr silenced, and an
 * input cut into the parts a target needs (an ELF, registers, a stack...).
 */
#ifndef BPFPROF_FUZZ_UTIL_H
#define BPFPROF_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * data as an anonymous file; path (>= 32 bytes) gets its /proc/self/fd/N
 * name.  Returns the descriptor, for the caller to close; aborts on failure.
 */
int fuzz__memfd(const void *data, size_t size, char *path, size_t len);

/*
 * The one-line errors of the code under test go to stdio's stderr: point it
 * at /dev/null around each input; the sanitizers still report on fd 2.
 */
void fuzz__quiet(void);
void fuzz__loud(void);

/*
 * An input holding several parts: each is a 4-byte little-endian length
 * then that many bytes (a length past the end takes what is left).  Returns
 * how many parts were found (at most max); missing ones are empty.
 */
struct fuzz_part {
	const uint8_t *p;
	size_t len;
};
size_t fuzz__split(const uint8_t *data, size_t size, struct fuzz_part *parts, size_t max);

#endif
