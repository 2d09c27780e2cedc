/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small helpers for JSON text: writing strings and numbers, telling it at a file's start. */
#ifndef BPFPROF_JSON_H
#define BPFPROF_JSON_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* Writes `s` as a JSON string literal with quotes; invalid UTF-8 bytes become U+FFFD. */
void json_str(FILE *f, const char *s);
/* Writes ns as microseconds with three decimals ("1234.567"), exact, no float rounding. */
void json_us(FILE *f, uint64_t ns);
/* The first byte of buf[0, n) past JSON's white space ('[' or '{' for a JSON document); 0: none. */
char json_first(const void *buf, size_t n);

#endif
