// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The decoder's wakeup edges (tests/unit/decode_fixture.h): a wakee running,
 * staying asleep, switched in unseen or never resumed, and at the end of the
 * recording.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "decode/decode.h"
#include "model/session.h"
#include "decode_fixture.h"

static void wakeup(struct fix *f, uint16_t kind, uint32_t tid, uint32_t other, uint64_t ts)
{
	struct bp_rec_wakeup r = { 0 };

	r.h.type = BP_REC_WAKEUP;
	r.h.flags = kind;
	r.h.ts = T0 + ts;
	r.h.pid_tgid = (uint64_t)PID << 32 | tid;
	r.other = (uint64_t)PID << 32 | other;
	r.waking_ts = T0 + ts;
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
}

static const struct bp_edge *find_edge(struct fix *f, int nth)
{
	int i;

	for (i = 0; i < f->g.n; i++)
		if (f->g.ev[i].kind == BP_EV_EDGE && nth-- == 0)
			return &f->g.ev[i].edge;
	return NULL;
}

#define WAKEE (PID + 1)

/* Woken while switched out: the edge ends where the wakee is switched in. */
static void test_wakeup_running(void **state)
{
	struct fix *f = *state;
	const struct bp_edge *e;

	ENTER(f, PID, 1, 100, SP0);		/* the waker in a */
	ENTER(f, WAKEE, 2, 150, SP0);		/* the wakee blocks in b */
	wakeup(f, BP_WAKE_WAKING, PID, WAKEE, 200);
	assert_null(find_edge(f, 0));
	wakeup(f, BP_WAKE_RUNNING, WAKEE, PID, 250);
	e = find_edge(f, 0);
	assert_non_null(e);
	assert_int_equal(e->kind, BP_EDGE_WAKEUP);
	assert_int_equal(e->src_func, 1);
	assert_int_equal(e->dst_func, 2);
	assert_int_equal(e->dst_ts, 250);
	/* one wakeup, one edge: a second switch-in adds none */
	wakeup(f, BP_WAKE_RUNNING, WAKEE, PID, 260);
	assert_null(find_edge(f, 1));
}

/*
 * Woken while still on a CPU (BP_WAKE_STAYED, sent from the waker's CPU):
 * the wakee's calls reach the decoder later, and the edge ends in the call
 * it was in at the wakeup, not in the one it has entered since.
 */
static void test_wakeup_stayed_waits_for_the_wakees_calls(void **state)
{
	struct fix *f = *state;
	const struct bp_edge *e;

	ENTER(f, PID, 1, 100, SP0);
	wakeup(f, BP_WAKE_WAKING, PID, WAKEE, 200);
	wakeup(f, BP_WAKE_STAYED, WAKEE, PID, 210);
	assert_null(find_edge(f, 0));
	ENTER(f, WAKEE, 2, 150, SP0);		/* sent late, from the wakee's CPU */
	assert_null(find_edge(f, 0));
	ENTER(f, WAKEE, 3, 300, SP0 - 64);	/* after the wakeup: b was the call */
	e = find_edge(f, 0);
	assert_non_null(e);
	assert_int_equal(e->src_func, 1);
	assert_int_equal(e->dst_func, 2);
	assert_int_equal(e->dst_ts, 210);
	assert_int_equal(e->dst_tid, WAKEE);
	LEAVE(f, WAKEE, 3, 310, SP0 - 64);
	assert_null(find_edge(f, 1));
}

/*
 * The wakee's switch-in was not seen (no RUNNING), but it runs again: its
 * first event after the wakeup ends the edge, in the call it was in.
 */
static void test_wakeup_switch_in_unseen(void **state)
{
	struct fix *f = *state;
	const struct bp_edge *e;

	ENTER(f, PID, 1, 100, SP0);
	ENTER(f, WAKEE, 2, 150, SP0);		/* blocks in b */
	wakeup(f, BP_WAKE_WAKING, PID, WAKEE, 200);
	assert_null(find_edge(f, 0));
	LEAVE(f, WAKEE, 2, 300, SP0);		/* b returns: it ran again */
	e = find_edge(f, 0);
	assert_non_null(e);
	assert_int_equal(e->src_func, 1);
	assert_int_equal(e->dst_func, 2);
	assert_int_equal(e->dst_ts, 300);	/* at the latest then */
	wakeup(f, BP_WAKE_RUNNING, WAKEE, PID, 310);	/* a late RUNNING adds nothing */
	assert_null(find_edge(f, 1));
}

/* Woken, never ran again before the end: no edge is made up. */
static void test_wakeup_never_resumed(void **state)
{
	struct fix *f = *state;

	ENTER(f, PID, 1, 100, SP0);
	ENTER(f, WAKEE, 2, 150, SP0);
	wakeup(f, BP_WAKE_WAKING, PID, WAKEE, 200);
	assert_int_equal(decoder__finish(f->d), 0);
	assert_null(find_edge(f, 0));
}

/* A wakee that ends before any later event: its edge ends where it is. */
static void test_wakeup_stayed_at_the_end(void **state)
{
	struct fix *f = *state;
	const struct bp_edge *e;

	ENTER(f, PID, 1, 100, SP0);
	ENTER(f, WAKEE, 2, 150, SP0);
	wakeup(f, BP_WAKE_WAKING, PID, WAKEE, 200);
	wakeup(f, BP_WAKE_STAYED, WAKEE, PID, 210);
	assert_int_equal(decoder__finish(f->d), 0);
	e = find_edge(f, 0);
	assert_non_null(e);
	assert_int_equal(e->dst_func, 2);
	assert_null(find_edge(f, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wakeup_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_stayed_waits_for_the_wakees_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_stayed_at_the_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_switch_in_unseen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_never_resumed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
