// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report --args FUNC:PARAM: the calls of the functions matching FUNC (a
 * glob on the name without a C++ parameter list) grouped by the value of
 * their parameter PARAM ("return": the return value), as --args recorded
 * and typed it (model/argsig.h): which file names open was called with,
 * which n was slowest.  One row per distinct value: calls, total, avg, max.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "base/escape.h"
#include "base/json.h"
#include "base/log.h"
#include "base/util.h"
#include "model/argsig.h"

struct arg_row {
	char *value;
	uint64_t calls, total, max;
};

struct report_args {
	char *func, *param;
	int8_t *match;		/* per function: -1 unknown, 0 no, 1 yes */
	size_t nmatch;
	struct arg_row *rows;
	size_t nrows, cap;
	uint64_t ncalls, nmissing;	/* matched calls; those without the value */
};

int report_args__new(const char *spec, struct report_args **out)
{
	const char *colon = strrchr(spec, ':');
	struct report_args *a;

	*out = NULL;
	if (!colon || colon == spec || !colon[1]) {
		p_err("--args wants FUNC:PARAM (a parameter's name, or return), got '%s'", spec);
		return -EINVAL;
	}
	a = xcalloc(1, sizeof(*a));
	a->func = xstrdup(spec);
	a->func[colon - spec] = 0;
	a->param = xstrdup(colon + 1);
	*out = a;
	return 0;
}

void report_args__free(struct report_args *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nrows; i++)
		free(a->rows[i].value);
	free(a->rows);
	free(a->match);
	free(a->func);
	free(a->param);
	free(a);
}

static bool matches(struct report_args *a, const struct bp_session *s, uint32_t func)
{
	if (func >= a->nmatch) {
		a->match = xrealloc(a->match, s->nfuncs ? s->nfuncs : 1);
		memset(a->match + a->nmatch, -1, s->nfuncs - a->nmatch);
		a->nmatch = s->nfuncs;
	}
	if (a->match[func] < 0) {
		char *name = xstrdup(s->funcs[func].name);
		char *paren = strchr(name, '(');

		if (paren && paren != name)
			*paren = 0;
		a->match[func] = fnmatch(a->func, name, 0) == 0;
		free(name);
	}
	return a->match[func] == 1;
}

void report_args__add(struct report_args *a, const struct bp_session *s, const struct bp_call *c)
{
	static struct argvals av;
	const struct argval *v = NULL;
	const char *text;
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;
	size_t i;

	if (c->func >= s->nfuncs || !matches(a, s, c->func))
		return;
	a->ncalls++;
	argsig__values(s, c, &av);
	if (!strcmp(a->param, "return")) {
		v = av.has_ret ? &av.ret : NULL;
	} else {
		for (int k = 0; k < av.n && !v; k++)
			if (!strcmp(av.v[k].name, a->param))
				v = &av.v[k];
	}
	if (!v) {
		a->nmissing++;
		return;
	}
	text = v->text;
	for (i = 0; i < a->nrows && strcmp(a->rows[i].value, text); i++)
		;
	if (i == a->nrows) {
		if (a->nrows == a->cap) {
			a->cap = a->cap ? a->cap * 2 : 64;
			a->rows = xrealloc(a->rows, a->cap * sizeof(*a->rows));
		}
		a->rows[i] = (struct arg_row){ .value = xstrdup(text) };
		a->nrows++;
	}
	a->rows[i].calls++;
	a->rows[i].total += dur;
	if (dur > a->rows[i].max)
		a->rows[i].max = dur;
}

static int by_total(const void *x, const void *y)
{
	const struct arg_row *a = x, *b = y;

	return a->total < b->total ? 1 : a->total > b->total ? -1 : strcmp(a->value, b->value);
}

static void print_csv(const struct report_args *a, FILE *f)
{
	fputs("value,calls,total_ns,avg_ns,max_ns\r\n", f);
	for (size_t i = 0; i < a->nrows; i++) {
		csv_str(f, a->rows[i].value);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\r\n", a->rows[i].calls,
			a->rows[i].total, a->rows[i].total / a->rows[i].calls, a->rows[i].max);
	}
}

static void print_json(const struct report_args *a, FILE *f)
{
	fputs("{\"function\":", f);
	json_str(f, a->func);
	fputs(",\"param\":", f);
	json_str(f, a->param);
	fprintf(f, ",\"calls\":%" PRIu64 ",\"without\":%" PRIu64 ",\"values\":[", a->ncalls,
		a->nmissing);
	for (size_t i = 0; i < a->nrows; i++) {
		fputs(i ? ",\n{\"value\":" : "\n{\"value\":", f);
		json_str(f, a->rows[i].value);
		fprintf(f, ",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"avg_ns\":%" PRIu64
			",\"max_ns\":%" PRIu64 "}", a->rows[i].calls, a->rows[i].total,
			a->rows[i].total / a->rows[i].calls, a->rows[i].max);
	}
	fputs("]}", f);
}

void report_args__print(struct report_args *a, enum report_format fmt, FILE *f)
{
	qsort(a->rows, a->nrows, sizeof(*a->rows), by_total);
	if (fmt == REPORT_CSV) {
		print_csv(a, f);
		return;
	}
	if (fmt == REPORT_JSON) {
		print_json(a, f);
		return;
	}
	fprintf(f, "\ncalls of %s by %s (%" PRIu64 " calls", a->func, a->param, a->ncalls);
	if (a->nmissing)
		fprintf(f, ", %" PRIu64 " without it: no --args, or no such parameter", a->nmissing);
	fprintf(f, ")\n%12s %14s %14s %14s  %s\n", "calls", "total_ns", "avg_ns", "max_ns",
		a->param);
	for (size_t i = 0; i < a->nrows; i++)
		fprintf(f, "%12" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64 "  %s\n",
			a->rows[i].calls, a->rows[i].total, a->rows[i].total / a->rows[i].calls,
			a->rows[i].max, a->rows[i].value);
}
