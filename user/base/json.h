/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small helpers for writing JSON text: string escaping and numbers. */
#ifndef BPFPROF_JSON_H
#define BPFPROF_JSON_H

#include <stdio.h>
#include <stdint.h>

/* Writes `s` as a JSON string literal with quotes; invalid UTF-8 bytes become U+FFFD. */
void json_str(FILE *f, const char *s);
/* Writes ns as microseconds with three decimals ("1234.567"), exact, no float rounding. */
void json_us(FILE *f, uint64_t ns);

#endif
