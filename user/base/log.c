// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "status.h"

int verbose;
bool quiet;
__thread bool log_muted;

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	if (log_muted)
		return;
	status__hide();	/* a message of its own line, the status line drawn again below it */
	fprintf(stderr, "bpfprof: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	status__unhide();
}

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void p_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void p_info(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void p_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap);
	va_end(ap);
}

static void *oom(void)
{
	fputs("bpfprof: out of memory\n", stderr);
	exit(1);
}

void *xmalloc(unsigned long n)
{
	void *p = malloc(n ? n : 1);

	return p ? p : oom();
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *p = NULL;

	return vasprintf(&p, fmt, ap) < 0 ? oom() : p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void *xcalloc(unsigned long n, unsigned long sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	return p ? p : oom();
}

void *xrealloc(void *p, unsigned long n)
{
	p = realloc(p, n ? n : 1);
	return p ? p : oom();
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	return p ? p : oom();
}
