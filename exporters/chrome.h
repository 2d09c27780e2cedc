/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The Chrome JSON exporter's state and line writer, shared by chrome.c (calls,
 * samples, edges, annotations) and chrome_coro.c (coroutine spans).
 * Exporter-private.
 */
#ifndef BPFPROF_CHROME_H
#define BPFPROF_CHROME_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "exporter.h"

/*
 * The per-call path is the hot loop of an export (millions of events): each
 * function's escaped name and module are formatted once and cached, numbers
 * are written by hand into a line buffer, and the line goes out with one
 * fwrite -- about 5x faster than fprintf per field.
 */
struct chrome_priv {
	bool need_comma;	/* an event has been written: JSON forbids a trailing comma */
	char **head;		/* per function: {"name":"...","cat":"call","ph":"X","ts": */
	char **tail;		/* per function: ,"module":"..." or "" */
	size_t nhead;
	uint64_t nflows;	/* flow ids */
	uint64_t nevents;	/* written, for the size warning at the end */
	struct coro_joiner *coro;	/* coroutine spans (model/coro.h), NULL until a slice */
};

/* Appends the decimal digits of v; returns the new end. */
static inline char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* ns as microseconds with three decimals, like json_us(). */
static inline char *put_us(char *p, uint64_t ns)
{
	uint64_t frac = ns % 1000;

	p = put_u64(p, ns / 1000);
	*p++ = '.';
	*p++ = '0' + frac / 100;
	*p++ = '0' + frac / 10 % 10;
	*p++ = '0' + frac % 10;
	return p;
}

static inline char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* ,"pid":PID,"tid":TID */
static inline char *put_pid_tid(char *p, uint32_t pid, uint32_t tid)
{
	p = put_str(p, ",\"pid\":");
	p = put_u64(p, pid);
	p = put_str(p, ",\"tid\":");
	return put_u64(p, tid);
}

/* chrome.c: starts an array element (the comma, the count); caches func's head and tail */
void chrome_sep(struct exporter *e);
int chrome_cache_func(struct chrome_priv *p, const struct bp_session *s, uint32_t func);
/* chrome_coro.c: a call that may be a coroutine's slice; the spans left open at the end */
int chrome_coro_call(struct exporter *e, const struct bp_session *s, const struct bp_call *c);
void chrome_coro_end(struct exporter *e, const struct bp_session *s);
/* A BP_ANNOT_TASK: the task's name for its track. */
void chrome_coro_annot(struct exporter *e, const struct bp_annot *a);

#endif
