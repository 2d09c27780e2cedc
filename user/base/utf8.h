/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef BPFPROF_UTF8_H
#define BPFPROF_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there
 * are not one: a stray continuation byte, a truncated sequence, an overlong
 * form, a UTF-16 surrogate or a code point above U+10FFFF.  Names come from
 * symbol tables and comm strings, which nothing forces to be UTF-8, and one bad
 * byte must not make the whole output unreadable to a strict JSON parser.
 */
int utf8_len(const unsigned char *p);

/*
 * Code units of `kind` bytes each (1, 2 or 4, little-endian: a CPython str's
 * characters; another kind reads as 1) from raw[0..len) to UTF-8 in out
 * (always terminated; cap >= 1): NUL becomes '?', a surrogate or a value
 * past U+10FFFF U+FFFD; what does not fit is cut.
 */
void utf8_from_units(const char *raw, uint32_t len, uint32_t kind, char *out, size_t cap);

#endif
