/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef BPFPROF_UTF8_H
#define BPFPROF_UTF8_H

/*
 * Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there
 * are not one: a stray continuation byte, a truncated sequence, an overlong
 * form, a UTF-16 surrogate or a code point above U+10FFFF.  Names come from
 * symbol tables and comm strings, which nothing forces to be UTF-8, and one bad
 * byte must not make the whole output unreadable to a strict JSON parser.
 */
int utf8_len(const unsigned char *p);

#endif
