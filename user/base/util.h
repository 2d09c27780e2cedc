/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Parsing and formatting of command-line values. */
#ifndef BPFPROF_UTIL_H
#define BPFPROF_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "safeopen.h"	/* open_binary(), file_has_magic() */

/* "10s", "250ms", "2m", "1.5s", "500us", "100ns"; a bare number is seconds.  0 or -EINVAL. */
int parse_duration(const char *s, uint64_t *ns);
/* "64M", "1G", "512k", bytes; 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *bytes);
/* --buffer-size: parse_size() within 4k..2G; 0, or -EINVAL with a message. */
int parse_buffer_size(const char *arg, uint64_t *bytes);
/* "12.3 ms" style, 3 significant digits; returns buf. */
char *fmt_duration(uint64_t ns, char *buf, size_t len);
uint64_t now_ns(int clock);
/* "123,456" appended to *pids; 0, or -EINVAL with a message. */
int parse_pids(const char *arg, pid_t **pids, size_t *n);
/* The same, with `what` naming the value in the message ("--tid"). */
int parse_ids(const char *what, const char *arg, pid_t **pids, size_t *n);
/* A whole number in [min, max] for option `opt`; 0, or -EINVAL with a message. */
int parse_count(const char *opt, const char *arg, unsigned long min, unsigned long max,
		unsigned long *out);
/* Appends s (not copied) to the vector *arr of *n strings. */
void strv_push(char ***arr, size_t *n, const char *s);
/* Removes dir and the files in it (a private temporary directory; "" is nothing). */
void remove_tmpdir(const char *dir);
/* Standard input, output and error on /dev/null (a process that outlives its caller's terminal). */
void stdio_to_null(void);
/*
 * This process's descriptor limit raised as far as allowed: the soft limit
 * to the hard one, and both to `want` (at most fs.nr_open) where it may
 * (CAP_SYS_RESOURCE; this VM refuses it).  Not for a process whose children
 * are the user's programs: they would inherit it.  The new soft limit.
 */
unsigned long fd_limit_raise(unsigned long want);

/*
 * A device number as the kernel keeps it (a super block's s_dev, what BPF
 * programs read: 12 bits of major above 20 of minor) and as stat() and
 * /proc/PID/maps give it (glibc's dev_t): they differ when the major is not
 * 0 (a disk, not tmpfs or overlayfs), so compare only after converting.
 */
uint32_t kdev_of(dev_t dev);
dev_t dev_of_kdev(uint32_t kdev);

/*
 * Binary search, written once: the number of leading elements of a sorted
 * [0, n) for which BELOW (an expression of the index `at`) holds, i.e. the
 * first index where it fails.  lower_bound(n, v[at].key < k) finds the first
 * key >= k; with `<=`, the first key > k (the one before it is the last <= k).
 */
#define lower_bound(n, BELOW) ({					\
	size_t lo_ = 0, hi_ = (n);					\
	while (lo_ < hi_) {						\
		size_t at = lo_ + (hi_ - lo_) / 2;			\
		if (BELOW)						\
			lo_ = at + 1;					\
		else							\
			hi_ = at;					\
	}								\
	lo_;								\
})

#endif
