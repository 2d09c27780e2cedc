// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The per-path aggregates the exporters share (exporters/pathagg.h) on known
 * events (tests/unit/formats_fixture.h): deep stacks cut, and cpu and
 * off-cpu sample counters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "exporters/exporter.h"
#include "base/escape.h"
#include "exporters/pathagg.h"
#include "exporters/protobuf.h"
#include "model/session.h"
#include "helpers.h"
#include "formats_fixture.h"

/* ------------------------------------------------------------ deep stacks */

struct collected {
	uint32_t n, ntrunc;
	uint64_t calls, trunc_calls, trunc_self;
	uint32_t trunc_path;
};

static int collect(void *ctx, const struct path_sample *ps)
{
	struct collected *c = ctx;

	c->n++;
	c->calls += ps->calls;
	if (ps->truncated) {
		c->ntrunc++;
		c->trunc_calls += ps->calls;
		c->trunc_self += ps->self;
		c->trunc_path = ps->path;
	}
	return 0;
}

/* Adds a recursion DEPTH deep (one call per level, self 1 ns); returns the paths. */
static uint32_t *deep(struct fixture *fx, struct path_agg *a, size_t depth)
{
	uint32_t *paths = calloc(depth + 1, sizeof(*paths));
	struct bp_event ev;
	size_t i;

	assert_non_null(paths);
	for (i = 1; i <= depth; i++)
		paths[i] = session__path(&fx->s, paths[i - 1], fx->f_run);
	for (i = depth; i >= 1; i--) {
		ev = call(i, i - 1, fx->f_run, paths[i], 100, i, 2 * depth - i, 1, i - 1);
		path_agg__event(a, &fx->s, &ev);
	}
	return paths;
}

static void test_deep_stacks_cut(void **state)
{
	struct fixture *fx = *state;
	struct path_agg a = { 0 };
	struct collected c = { 0 };
	uint32_t *paths = deep(fx, &a, PATH_MAX_STACK + 88);

	assert_int_equal(path_agg__for_each(&a, &fx->s, PATH_MAX_STACK, collect, &c), 0);
	/* every path up to the limit as is; the 88 below merged under the cut */
	assert_int_equal(c.n, PATH_MAX_STACK + 1);
	assert_int_equal(c.ntrunc, 1);
	assert_int_equal(c.calls, PATH_MAX_STACK + 88);
	assert_int_equal(c.trunc_calls, 88);
	assert_int_equal(c.trunc_self, 88);
	assert_int_equal(c.trunc_path, paths[PATH_MAX_STACK - 1]);
	free(paths);
	path_agg__free(&a);
}

static void test_deep_folded(void **state)
{
	struct fixture *fx = *state;
	size_t depth = PATH_MAX_STACK + 10, i;
	struct bp_event *ev = calloc(depth, sizeof(*ev));
	uint32_t *paths = calloc(depth + 1, sizeof(*paths));
	char *out, *last;

	assert_non_null(ev);
	assert_non_null(paths);
	for (i = 1; i <= depth; i++)
		paths[i] = session__path(&fx->s, paths[i - 1], fx->f_run);
	for (i = depth; i >= 1; i--)
		ev[depth - i] = call(i, i - 1, fx->f_run, paths[i], 100, i, 2 * depth - i, 1, i - 1);
	write_out(fx, &folded_exporter, "d.folded", ev, depth);
	out = unit__slurp(fx->path, NULL);
	last = strstr(out, ";" PATH_TRUNCATED_NAME " 10\n");
	assert_non_null(last);
	/* PATH_MAX_STACK - 1 frames kept above the marker */
	for (i = 0; last > out && last[-1] != '\n'; last--)
		i += *last == ';';
	assert_int_equal(i, PATH_MAX_STACK - 1);
	free(out);
	free(paths);
	free(ev);
}

/* ------------------------------------------------------------ sample counters */

struct seen {
	uint32_t path[8];
	struct path_sample ps[8];
	size_t n;
};

static int remember(void *ctx, const struct path_sample *ps)
{
	struct seen *v = ctx;

	assert_true(v->n < 8);
	v->path[v->n] = ps->path;
	v->ps[v->n++] = *ps;
	return 0;
}

static const struct path_sample *seen_path(const struct seen *v, uint32_t path)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (v->path[i] == path)
			return &v->ps[i];
	fail_msg("path %u not visited", path);
	return NULL;
}

static void test_path_agg_samples(void **state)
{
	struct fixture *fx = *state;
	struct path_agg a = { 0 };
	struct seen v = { 0 };
	struct bp_event ev[32];
	const struct path_sample *ps;
	struct stacks st;
	int n, i;

	make_stacks(fx, &st);
	n = sample_events(fx, &st, ev);
	ev[n++] = sample(700, 1000, 100, 0, 0);			/* no stack */
	ev[n++] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 800, 800, 0);
	for (i = 0; i < n; i++)
		path_agg__event(&a, &fx->s, &ev[i]);
	assert_int_equal(a.ncalls, 1);
	assert_int_equal(a.nsamples, 6);
	assert_int_equal(a.cpu_ns, 6000);
	assert_int_equal(a.noffcpu, 2);
	assert_int_equal(a.offcpu_ns, 5700);
	assert_int_equal(a.nopath, 1);
	assert_int_equal(a.end, 500 + 5000);	/* the end of the longest off-cpu interval */

	/* paths with calls or samples, nothing else (not U, nor U>main>run) */
	assert_int_equal(path_agg__for_each(&a, &fx->s, PATH_MAX_STACK, remember, &v), 0);
	assert_int_equal(v.n, 4);
	ps = seen_path(&v, fx->p_main);
	assert_int_equal(ps->calls, 1);
	assert_int_equal(ps->self, 800);
	assert_int_equal(ps->cpu_samples + ps->offcpu, 0);
	ps = seen_path(&v, st.s_malloc);
	assert_int_equal(ps->calls, 0);
	assert_int_equal(ps->cpu_samples, 4);
	assert_int_equal(ps->cpu_ns, 4000);
	assert_int_equal(ps->offcpu, 1);
	assert_int_equal(ps->offcpu_ns, 700);
	ps = seen_path(&v, st.s_main);
	assert_int_equal(ps->cpu_samples, 1);
	assert_int_equal(ps->offcpu, 0);
	ps = seen_path(&v, st.s_sleep);
	assert_int_equal(ps->cpu_samples, 0);
	assert_int_equal(ps->offcpu_ns, 5000);
	assert_false(ps->truncated);
	path_agg__free(&a);
}

/* Sample stacks deeper than the cut are merged like calls, counters and all. */
static void test_path_agg_samples_cut(void **state)
{
	struct fixture *fx = *state;
	struct path_agg a = { 0 };
	struct collected c = { 0 };
	struct seen v = { 0 };
	uint32_t p = 0, anchor = 0;
	struct bp_event ev;
	size_t i;

	for (i = 1; i <= 6; i++) {
		p = session__path(&fx->s, p, fx->f_run);
		if (i == 3)
			anchor = p;
		if (i >= 4) {	/* depths 4, 5, 6: below a cut at 4 frames */
			ev = sample(i, 10 * i, 100, p, i == 6 ? BP_SAMPLE_F_OFFCPU : 0);
			path_agg__event(&a, &fx->s, &ev);
		}
	}
	assert_int_equal(path_agg__for_each(&a, &fx->s, 4, collect, &c), 0);
	assert_int_equal(c.calls, 0);
	assert_int_equal(path_agg__for_each(&a, &fx->s, 4, remember, &v), 0);
	/* depth 4 as is; 5 and 6 under the marker below the first 3 frames */
	assert_int_equal(v.n, 2);
	assert_false(v.ps[0].truncated);
	assert_int_equal(v.ps[0].cpu_ns, 40);
	assert_true(v.ps[1].truncated);
	assert_int_equal(v.path[1], anchor);
	assert_int_equal(v.ps[1].cpu_samples, 1);
	assert_int_equal(v.ps[1].cpu_ns, 50);
	assert_int_equal(v.ps[1].offcpu, 1);
	assert_int_equal(v.ps[1].offcpu_ns, 60);
	path_agg__free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_deep_stacks_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_agg_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_agg_samples_cut, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
