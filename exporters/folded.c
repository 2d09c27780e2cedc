// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Folded stacks (Brendan Gregg's FlameGraph input, also read by speedscope,
 * inferno and many others): one line per distinct call path,
 *
 *   main;run;compute;leaf_add 1234
 *
 * outermost frame first.  The value depends on what was recorded:
 *
 *  - calls only (function tracing): the call path's SELF time in ns, so
 *    that a flame graph's widths are inclusive time and its tips self time;
 *  - stack samples (--sample, --offcpu, with or without calls): the sampled
 *    stacks' weight in ns, a CPU flame graph: an on-cpu stack's value is its
 *    samples times the sampling period, and an off-cpu stack's is the time
 *    blocked, with a last frame "[off-cpu]" so that the two never merge
 *    (filter on it to see one kind alone).  Calls are then left out: their
 *    exact times and the sampled ones would count the same time twice.
 *
 * Lines are sorted, so two recordings diff well.
 *
 * Stacks hold functions only: the process and thread are not frames, so the
 * calls of every thread and process with the same path are summed (record
 * one process, or use the Chrome/speedscope output, for a per-thread view).
 * The format has no comments: lost records are not in the file (the summary
 * on stderr and the Chrome trace have them).  A function name's `;` is
 * written as `:`.  A function the overhead governor stopped tracing
 * (--max-overhead) has BP_DROPPED_SUFFIX after its name.  Stacks deeper than PATH_MAX_STACK are cut (pathagg.h).
 *
 * Paths are aggregated as events arrive; the lines are built and sorted at
 * end(): memory is bounded by the distinct paths and their depth.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/escape.h"
#include "exporter.h"
#include "base/log.h"
#include "pathagg.h"

struct folded_priv {
	struct path_agg agg;
};

struct line {
	size_t off;		/* into the text of all lines */
	uint64_t value;
};

#define OFFCPU_FRAME	"[off-cpu]"

struct lines {
	const struct bp_session *s;
	bool samples;		/* values are sample weights, not self time */
	FILE *mem;		/* every stack, NUL-separated */
	struct line *v;
	size_t n, cap;
	uint32_t *funcs;	/* PATH_MAX_STACK scratch */
};

static int folded_event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	struct folded_priv *p = e->priv;

	path_agg__event(&p->agg, s, ev);
	return 0;
}

/* One line: the stack of ps, then `last` as its innermost frame if not NULL. */
static int add_line(struct lines *l, const struct path_sample *ps, const char *last,
		    uint64_t value)
{
	size_t n, i;
	long off;

	off = ftell(l->mem);
	if (off < 0)
		return -errno;
	n = session__path_funcs(l->s, ps->path, l->funcs, PATH_MAX_STACK);
	for (i = 0; i < n; i++) {
		if (i)
			putc(';', l->mem);
		folded_str(l->mem, session__func_name(l->s, l->funcs[i]));
		if (l->funcs[i] < l->s->nfuncs && l->s->funcs[l->funcs[i]].flags & BP_FUNC_DROPPED)
			fputs(BP_DROPPED_SUFFIX, l->mem);
	}
	if (ps->truncated)
		fputs(";" PATH_TRUNCATED_NAME, l->mem);
	if (last)
		fprintf(l->mem, ";%s", last);
	putc('\0', l->mem);
	if (ferror(l->mem))
		return -ENOMEM;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n].off = (size_t)off;
	l->v[l->n].value = value;
	l->n++;
	return 0;
}

static int add_path(void *ctx, const struct path_sample *ps)
{
	struct lines *l = ctx;
	int err = 0;

	if (!l->samples)
		return ps->calls ? add_line(l, ps, NULL, ps->self) : 0;
	if (ps->cpu_samples)
		err = add_line(l, ps, NULL, ps->cpu_ns);
	if (!err && ps->offcpu)
		err = add_line(l, ps, OFFCPU_FRAME, ps->offcpu_ns);
	return err;
}

static int cmp_line(const void *a, const void *b, void *text)
{
	const struct line *x = a, *y = b;

	return strcmp((const char *)text + x->off, (const char *)text + y->off);
}

static int folded_end(struct exporter *e, const struct bp_session *s)
{
	struct folded_priv *p = e->priv;
	struct lines l = { .s = s, .samples = p->agg.nsamples || p->agg.noffcpu };
	char *text = NULL;
	size_t size = 0, i, j;
	int err;

	l.funcs = xcalloc(PATH_MAX_STACK, sizeof(*l.funcs));
	l.mem = open_memstream(&text, &size);
	if (!l.mem) {
		err = -errno;
		goto cleanup;
	}
	err = path_agg__for_each(&p->agg, s, PATH_MAX_STACK, add_path, &l);
	if (fclose(l.mem) && !err)
		err = -ENOMEM;
	l.mem = NULL;
	if (err)
		goto cleanup;

	if (l.n)
		qsort_r(l.v, l.n, sizeof(*l.v), cmp_line, text);
	/* Two paths can print alike (same name in two modules): one line, summed. */
	for (i = 0; i < l.n; i = j) {
		uint64_t sum = 0;

		for (j = i; j < l.n && strcmp(text + l.v[i].off, text + l.v[j].off) == 0; j++)
			sum += l.v[j].value;
		fprintf(e->out, "%s %" PRIu64 "\n", text + l.v[i].off, sum);
	}
	err = 0;
cleanup:
	free(text);
	free(l.v);
	free(l.funcs);
	return err;
}

static void folded_free(struct exporter *e)
{
	struct folded_priv *p = e->priv;

	if (p)
		path_agg__free(&p->agg);
}

const struct exporter_ops folded_exporter = {
	.name = "folded",
	.suffix = ".folded",
	.help = "folded stacks: sampled ns per stack, or self ns per call path (flamegraph.pl, "
		"speedscope, inferno)",
	.priv_size = sizeof(struct folded_priv),
	.event = folded_event,
	.end = folded_end,
	.free = folded_free,
};
