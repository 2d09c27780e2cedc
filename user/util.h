/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Parsing and formatting of command-line values. */
#ifndef BPFPROF_UTIL_H
#define BPFPROF_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* "10s", "250ms", "2m", "1.5s", "500us", "100ns"; a bare number is seconds.  0 or -EINVAL. */
int parse_duration(const char *s, uint64_t *ns);
/* "64M", "1G", "512k", bytes; 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *bytes);
/* "12.3 ms" style, 3 significant digits; returns buf. */
char *fmt_duration(uint64_t ns, char *buf, size_t len);
uint64_t now_ns(int clock);

#endif
