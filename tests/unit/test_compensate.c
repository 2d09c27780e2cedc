// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Compensation unit tests: records with known timestamps through a decoder
 * whose clocks lose a known probe cost; the decoded calls must lose exactly
 * their own inside bias and their traced children's totals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <linux/types.h>

#include "bpf/events.h"
#include "decode/compensate.h"
#include "decode/decode.h"
#include "model/session.h"

#define TID	42
#define NCALLS	8

static struct bp_call got[NCALLS];
static size_t ngot;

static int sink(void *ctx, const struct bp_event *ev)
{
	if (ev->kind == BP_EV_CALL && ngot < NCALLS)
		got[ngot++] = ev->call;
	return 0;
}

static unsigned path_of(const struct bp_func *f)
{
	return f->flags & 1;	/* func 1 (flags 1): the second path */
}

static void feed(struct decoder *d, uint16_t type, uint32_t func, uint64_t ts, uint64_t sp)
{
	struct bp_rec_call r = { .h = { .type = type, .ts = ts, .pid_tgid = (uint64_t)TID << 32 | TID },
				 .func_id = func, .sp = sp };

	assert_int_equal(decoder__feed(d, &r, sizeof(r)), 0);
}

static void test_parent_and_children(void **state)
{
	/* path 0: 1000 ns a call, 400 inside; path 1: 3000, 1000 inside */
	struct comp_costs cc = { .total_ns = { 1000, 3000 }, .inside_ns = { 400, 1000 }, .path = path_of };
	struct bp_func parent = { .name = "parent", .nparams = -1 };
	struct bp_func child = { .name = "child", .flags = 1, .nparams = -1 };
	struct bp_session s;
	struct decoder *d = NULL;
	uint64_t t = 1000000;

	session__init(&s);
	s.t0 = 0;
	session__add_module(&s, "/x");
	session__add_func(&s, &parent);
	session__add_func(&s, &child);
	ngot = 0;
	assert_int_equal(decoder__new(&s, sink, NULL, &d), 0);
	decoder__compensate(d, &cc);
	/*
	 * parent: raw 20000 ns with two children of 3500 raw each (1000 of
	 * inside bias + 2500 of work); so its real time is 20000 - its 400 of
	 * inside bias - 2 x 3000 of the children's probes = 13600, of which
	 * 8600 its own.
	 */
	feed(d, BP_REC_ENTRY, 0, t, 0x1000);
	feed(d, BP_REC_ENTRY, 1, t + 2000, 0xf00);
	feed(d, BP_REC_EXIT, 1, t + 5500, 0xf00);
	feed(d, BP_REC_ENTRY, 1, t + 8000, 0xf00);
	feed(d, BP_REC_EXIT, 1, t + 11500, 0xf00);
	/* an empty call: its raw duration is all inside bias: 10 ns are left (COMP_MIN_STEP) */
	feed(d, BP_REC_ENTRY, 1, t + 14000, 0xf00);
	feed(d, BP_REC_EXIT, 1, t + 15000, 0xf00);
	feed(d, BP_REC_EXIT, 0, t + 20000 + 3000, 0x1000);
	assert_int_equal(decoder__finish(d), 0);
	assert_int_equal(ngot, 4);
	assert_int_equal(got[0].end - got[0].begin, 2500);
	assert_int_equal(got[1].end - got[1].begin, 2500);
	assert_int_equal(got[2].end - got[2].begin, 10);
	assert_int_equal(got[3].func, 0);
	/* the third child's probes (3000) came on top of the 20000: taken out too */
	assert_int_equal(got[3].end - got[3].begin, 13600);
	/* the empty child's 10 ns come out of the parent's own time */
	assert_int_equal(got[3].self, 8600 - 10);
	/* order and nesting: children inside the parent, one after the other */
	assert_true(got[0].begin > got[3].begin && got[0].end < got[1].begin);
	assert_true(got[1].end < got[2].begin && got[2].end < got[3].end);
	/* the debt: four calls' totals (3 x 3000 + 1000) */
	assert_true(decoder__compensated_ns(d) > 9999.0 && decoder__compensated_ns(d) < 10001.0);
	decoder__free(d);
	session__free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parent_and_children),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
