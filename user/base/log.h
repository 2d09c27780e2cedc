/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One logging path for the whole program: errors, warnings, verbose info. */
#ifndef BPFPROF_LOG_H
#define BPFPROF_LOG_H

#include <stdarg.h>
#include <stdbool.h>

extern int verbose;	/* -v count */
/*
 * Set in a thread whose work another thread repeats and reports (view's
 * timeline made beside the report): its messages would say the same twice.
 */
extern __thread bool log_muted;
extern bool quiet;	/* -q: no progress or summary */

void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* unless -q */
void p_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* with -v */

/* Allocation that cannot fail: exits with a message on ENOMEM. */
void *xmalloc(unsigned long n);
void *xcalloc(unsigned long n, unsigned long sz);
void *xrealloc(void *p, unsigned long n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
