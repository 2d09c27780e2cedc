// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* model/coro.c: coroutine spans joined from slices and resume edges. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "model/coro.h"

static struct bp_call call(uint64_t id, uint32_t func, uint64_t begin, uint64_t end, uint32_t flags)
{
	struct bp_call c;

	memset(&c, 0, sizeof(c));
	c.id = id;
	c.func = func;
	c.begin = begin;
	c.end = end;
	c.flags = flags;
	c.pid = c.tid = 7;
	return c;
}

static void edge(struct coro_joiner *j, uint64_t src, uint64_t dst)
{
	struct bp_edge e;

	memset(&e, 0, sizeof(e));
	e.kind = BP_EDGE_RESUME;
	e.src_call = src;
	e.dst_call = dst;
	coro__edge(j, &e);
}

static enum coro_slice feed(struct coro_joiner *j, const struct bp_session *s, uint64_t id,
			    uint32_t func, uint64_t b, uint64_t e, uint32_t flags,
			    struct coro_span *sp)
{
	struct bp_call c = call(id, func, b, e, flags);

	return coro__call(j, s, &c, sp);
}

#define SUSP BP_CALL_SUSPENDED
#define RES BP_CALL_RESUMED

/* Two coroutines taking turns: each span holds exactly its own slices. */
static void test_interleaved(void **state)
{
	struct coro_joiner *j = coro__new();
	struct coro_span sp;

	(void)state;
	assert_int_equal(feed(j, NULL, 1, 5, 0, 10, SUSP, &sp), CORO_SLICE);
	assert_int_equal(feed(j, NULL, 2, 6, 10, 15, SUSP, &sp), CORO_SLICE);
	edge(j, 1, 3);
	assert_int_equal(feed(j, NULL, 3, 5, 20, 40, SUSP | RES, &sp), CORO_SLICE);
	edge(j, 2, 4);
	assert_int_equal(feed(j, NULL, 4, 6, 50, 51, RES | BP_CALL_RAISED, &sp), CORO_LAST);
	assert_int_equal(sp.id, 2);
	assert_int_equal(sp.nslices, 2);
	assert_int_equal(sp.begin, 10);
	assert_int_equal(sp.end, 51);
	assert_int_equal(sp.exec, 6);
	assert_int_equal(sp.flags, CORO_RAISED);
	edge(j, 3, 5);
	assert_int_equal(feed(j, NULL, 5, 5, 60, 63, RES, &sp), CORO_LAST);
	assert_int_equal(sp.id, 1);
	assert_int_equal(sp.func, 5);
	assert_int_equal(sp.nslices, 3);
	assert_int_equal(sp.exec, 33);
	assert_int_equal(sp.max_slice, 20);
	assert_int_equal(sp.end - sp.begin, 63);
	assert_int_equal(sp.flags, 0);
	assert_int_equal(coro__held(j), 0);
	coro__free(j);
}

/* A plain call is no slice; a coroutine's call that never suspends is a span of one. */
static void test_plain_and_resumable(void **state)
{
	struct bp_func funcs[2];
	struct bp_session s;
	struct coro_joiner *j = coro__new();
	struct coro_span sp;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(funcs, 0, sizeof(funcs));
	funcs[1].flags = BP_FUNC_PYTHON | BP_FUNC_COROUTINE;
	s.funcs = funcs;
	s.nfuncs = 2;
	assert_int_equal(feed(j, &s, 1, 0, 0, 5, 0, &sp), CORO_NOT_SLICE);
	assert_int_equal(feed(j, &s, 2, 1, 0, 5, 0, &sp), CORO_LAST);
	assert_int_equal(sp.nslices, 1);
	assert_int_equal(sp.exec, 5);
	coro__free(j);
}

static int count_open(void *ctx, const struct coro_span *sp)
{
	assert_true(sp->flags & CORO_OPEN);
	(*(int *)ctx)++;
	return 0;
}

/* A resume without its edge starts a span flagged; spans never resumed are drained open. */
static void test_lost_edge_and_open(void **state)
{
	struct coro_joiner *j = coro__new();
	struct coro_span sp;
	int n = 0;

	(void)state;
	assert_int_equal(feed(j, NULL, 1, 3, 0, 1, SUSP, &sp), CORO_SLICE);
	assert_int_equal(feed(j, NULL, 9, 3, 5, 6, RES, &sp), CORO_LAST);
	assert_int_equal(sp.id, 9);
	assert_int_equal(sp.flags, CORO_NO_START);
	edge(j, 42, 43);	/* an edge from nothing held: ignored */
	assert_int_equal(feed(j, NULL, 10, 3, 7, 8, SUSP, &sp), CORO_SLICE);
	assert_int_equal(coro__held(j), 2);
	assert_int_equal(coro__drain(j, count_open, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(coro__held(j), 0);
	coro__free(j);
}

/* Many coroutines suspended at once, resumed in another order: every span whole. */
static void test_many(void **state)
{
	enum { N = 20000, ROUNDS = 3 };
	struct coro_joiner *j = coro__new();
	struct coro_span sp;
	uint64_t id = 1, *last = calloc(N, sizeof(*last));
	uint64_t i, r, ends = 0;

	(void)state;
	for (i = 0; i < N; i++) {
		last[i] = id;
		assert_int_equal(feed(j, NULL, id++, 1, i, i + 1, SUSP, &sp), CORO_SLICE);
	}
	for (r = 1; r <= ROUNDS; r++) {
		for (i = 0; i < N; i++) {
			uint64_t k = (i * 7919 + r) % N;	/* a permutation of 0..N-1 */
			bool final = r == ROUNDS;

			edge(j, last[k], id);
			last[k] = id;
			if (final) {
				assert_int_equal(feed(j, NULL, id++, 1, 0, 1, RES, &sp), CORO_LAST);
				assert_int_equal(sp.nslices, ROUNDS + 1);
				assert_int_equal(sp.id, k + 1);
				assert_int_equal(sp.flags, 0);
				ends++;
			} else {
				assert_int_equal(feed(j, NULL, id++, 1, 0, 1, SUSP | RES, &sp),
						 CORO_SLICE);
			}
		}
	}
	assert_int_equal(ends, N);
	assert_int_equal(coro__held(j), 0);
	free(last);
	coro__free(j);
}

/* A span keeps its first slice's task; the task's name lives until it is done. */
static void test_task(void **state)
{
	struct coro_joiner *j = coro__new();
	struct bp_annot a;
	struct bp_call c = call(10, 5, 0, 10, SUSP | BP_CALL_IN_TASK);
	struct bp_func funcs[7];
	struct bp_session s;
	struct coro_span sp;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(funcs, 0, sizeof(funcs));
	funcs[5].flags = funcs[6].flags = BP_FUNC_PYTHON | BP_FUNC_COROUTINE;
	s.funcs = funcs;
	s.nfuncs = 7;
	memset(&a, 0, sizeof(a));
	a.kind = BP_ANNOT_TASK;
	a.call = 10;
	strcpy(a.name, "worker-a");
	coro__task(j, &a);
	c.task = 10;
	assert_int_equal(coro__call(j, &s, &c, &sp), CORO_SLICE);
	c = call(11, 6, 2, 8, BP_CALL_IN_TASK);	/* awaited by it: a span of one slice */
	c.task = 10;
	assert_int_equal(coro__call(j, &s, &c, &sp), CORO_LAST);
	assert_int_equal(sp.task, 10);
	assert_int_equal(sp.id, 11);
	edge(j, 10, 12);
	c = call(12, 5, 20, 30, RES);	/* a later slice's task does not change the span's */
	assert_int_equal(coro__call(j, &s, &c, &sp), CORO_LAST);
	assert_int_equal(sp.task, 10);
	assert_int_equal(sp.id, 10);
	assert_int_equal(sp.nslices, 2);
	assert_string_equal(coro__task_name(j, 10), "worker-a");
	assert_string_equal(coro__task_name(j, 99), "");
	coro__task_done(j, 10);
	assert_string_equal(coro__task_name(j, 10), "");
	c = call(13, 6, 40, 50, 0);	/* a coroutine of no task */
	assert_int_equal(coro__call(j, &s, &c, &sp), CORO_LAST);
	assert_int_equal(sp.task, 0);
	coro__free(j);
}

/* A function's tally: sums, maxima, raised and open spans; merged tallies add up. */
static void test_tally(void **state)
{
	struct coro_span a = { .begin = 10, .end = 110, .exec = 30, .nslices = 3 };
	struct coro_span b = { .begin = 200, .end = 150, .exec = 40, .nslices = 1,
			       .flags = CORO_RAISED };
	struct coro_span c = { .begin = 300, .end = 350, .exec = 50, .nslices = 2,
			       .flags = CORO_OPEN };
	struct coro_tally t = { 0 }, u = { 0 };

	(void)state;
	coro_tally__add(&t, &a);
	coro_tally__add(&t, &b);	/* its clock went back: wall 0, not a wrap */
	assert_int_equal(t.calls, 2);
	assert_int_equal(t.slices, 4);
	assert_int_equal(t.exec, 70);
	assert_int_equal(t.wall, 100);
	assert_int_equal(t.max_exec, 40);
	assert_int_equal(t.max_wall, 100);
	assert_int_equal(t.raised, 1);
	assert_int_equal(t.open, 0);
	coro_tally__add(&u, &c);
	coro_tally__merge(&t, &u);
	assert_int_equal(t.calls, 3);
	assert_int_equal(t.slices, 6);
	assert_int_equal(t.exec, 120);
	assert_int_equal(t.wall, 150);
	assert_int_equal(t.max_exec, 50);
	assert_int_equal(t.max_wall, 100);
	assert_int_equal(t.raised, 1);
	assert_int_equal(t.open, 1);
}

static enum coro_slice feed_in(struct coro_joiner *j, uint64_t id, uint64_t parent, uint32_t func,
			       uint64_t b, uint64_t e, uint32_t flags, struct coro_span *sp)
{
	struct bp_call c = call(id, func, b, e, flags);

	c.parent_id = parent;
	return coro__call(j, NULL, &c, sp);
}

/*
 * P (func 1) awaits C (func 2), which suspends on a future: P's gap is in
 * its child's await, C's is not; then P suspends on its own (a bare
 * yield): that gap is not; a plain call between a child's suspension and
 * another caller's end breaks the link.
 */
static void test_await_child_or_other(void **state)
{
	struct coro_joiner *j = coro__new();
	struct coro_span sp;

	(void)state;
	/* P's slice 10 [0, 20) holds C's first slice 11 [5, 8), which suspends: so does P */
	assert_int_equal(feed_in(j, 11, 10, 2, 5, 8, SUSP, &sp), CORO_SLICE);
	assert_int_equal(feed_in(j, 10, 0, 1, 0, 20, SUSP, &sp), CORO_SLICE);
	/* P resumes at 50 (slice 12), sends into C (slice 13), which returns */
	edge(j, 10, 12);
	edge(j, 11, 13);
	assert_int_equal(feed_in(j, 13, 12, 2, 52, 55, RES, &sp), CORO_LAST);
	assert_int_equal(sp.id, 11);
	assert_int_equal(sp.await_child, 0);
	assert_int_equal(sp.await_other, 52 - 8);
	/* P then yields by itself (its last call, C, did not suspend) */
	assert_int_equal(feed_in(j, 12, 0, 1, 50, 60, SUSP | RES, &sp), CORO_SLICE);
	edge(j, 12, 14);
	/* a child suspends in a plain call 16, which returns: P's slice 14 suspends alone */
	assert_int_equal(feed_in(j, 15, 16, 2, 101, 102, SUSP, &sp), CORO_SLICE);
	assert_int_equal(feed_in(j, 16, 14, 3, 100, 103, 0, &sp), CORO_NOT_SLICE);
	assert_int_equal(feed_in(j, 14, 0, 1, 90, 110, SUSP | RES, &sp), CORO_SLICE);
	edge(j, 14, 17);
	assert_int_equal(feed_in(j, 17, 0, 1, 200, 201, RES, &sp), CORO_LAST);
	assert_int_equal(sp.id, 10);
	assert_int_equal(sp.await_child, 50 - 20);
	assert_int_equal(sp.await_other, (90 - 60) + (200 - 110));
	assert_int_equal(sp.exec + sp.await_child + sp.await_other, sp.end - sp.begin);
	assert_int_equal(sp.flags, 0);
	coro__free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_plain_and_resumable),
		cmocka_unit_test(test_lost_edge_and_open),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_task),
		cmocka_unit_test(test_tally),
		cmocka_unit_test(test_await_child_or_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
