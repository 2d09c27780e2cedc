// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "stats.h"
#include "util.h"

void stats__init(struct stats *st)
{
	memset(st, 0, sizeof(*st));
}

void stats__free(struct stats *st)
{
	free(st->f);
	memset(st, 0, sizeof(*st));
}

void stats__add(struct stats *st, const struct bp_call *c)
{
	uint64_t dur = c->end - c->begin;
	struct func_stats *f;

	if (c->func >= st->n) {
		size_t n = st->n ? st->n : 64;

		while (n <= c->func)
			n *= 2;
		st->f = xrealloc(st->f, n * sizeof(*st->f));
		memset(st->f + st->n, 0, (n - st->n) * sizeof(*st->f));
		st->n = n;
	}
	f = &st->f[c->func];
	if (!f->calls || dur < f->min)
		f->min = dur;
	if (dur > f->max)
		f->max = dur;
	f->calls++;
	f->total += dur;
	f->self += c->self;
}

static const struct stats *sort_st;

static int by_total(const void *a, const void *b)
{
	const struct func_stats *x = &sort_st->f[*(const uint32_t *)a];
	const struct func_stats *y = &sort_st->f[*(const uint32_t *)b];

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void stats__print_top(const struct stats *st, const struct bp_session *s, FILE *out, size_t top)
{
	uint32_t *idx = xcalloc(st->n, sizeof(*idx));
	size_t i, n = 0;
	char a[32], b[32], c[32];

	for (i = 0; i < st->n; i++)
		if (st->f[i].calls)
			idx[n++] = i;
	sort_st = st;
	qsort(idx, n, sizeof(*idx), by_total);
	if (n)
		fprintf(out, "  %12s  %10s  %10s  %10s  %s\n", "calls", "total", "self", "avg",
			"function");
	for (i = 0; i < n && i < top; i++) {
		const struct func_stats *f = &st->f[idx[i]];

		fprintf(out, "  %12llu  %10s  %10s  %10s  %s\n", (unsigned long long)f->calls,
			fmt_duration(f->total, a, sizeof(a)), fmt_duration(f->self, b, sizeof(b)),
			fmt_duration(f->total / f->calls, c, sizeof(c)), session__func_name(s, idx[i]));
	}
	if (n > top)
		fprintf(out, "  ... %zu more functions\n", n - top);
	free(idx);
}
