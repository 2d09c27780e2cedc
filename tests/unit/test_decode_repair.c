// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The decoder's repairs of a thread's call stack (tests/unit/decode_fixture.h):
 * longjmp, exceptions, tail calls, fall-through entries, recursion, calls
 * beyond the return-probe depth, Python frames, lost records.
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

/* main -> a -> b, b longjmps back into main, main calls c and returns */
static void test_longjmp_repair(void **state)
{
	struct fix *f = *state;
	const struct bp_call *a, *b, *c;

	enter_main_a_b(f);
	/* longjmp: no returns; main calls c with an sp above a's and b's */
	ENTER(f, PID, 3, 500, SP0 - 64);
	LEAVE(f, PID, 3, 600, SP0 - 64);
	LEAVE(f, PID, 0, 700, SP0);
	a = find(f, 1, 0);
	b = find(f, 2, 0);
	c = find(f, 3, 0);
	assert_int_equal(b->flags, BP_CALL_UNWOUND);
	assert_int_equal(a->flags, BP_CALL_UNWOUND);
	assert_int_equal(b->end, 300);	/* the last record seen before the repair */
	assert_int_equal(c->depth, 1);	/* not nested under the dead frames */
	assert_int_equal(c->parent_id, find(f, 0, 0)->id);
	assert_int_equal(c->flags, 0);
	assert_int_equal(find(f, 0, 0)->flags, 0);
	assert_int_equal(f->s.nunwound, 2);
}

/* an exception thrown in b is caught in main: main's own return pops them */
static void test_exception_repair_on_return(void **state)
{
	struct fix *f = *state;

	enter_main_a_b(f);
	LEAVE(f, PID, 0, 700, SP0);
	assert_int_equal(f->g.n, 3);
	assert_int_equal(find(f, 2, 0)->flags, BP_CALL_UNWOUND);
	assert_int_equal(find(f, 1, 0)->flags, BP_CALL_UNWOUND);
	assert_int_equal(find(f, 0, 0)->flags, 0);
	assert_int_equal(find(f, 0, 0)->end, 700);
}

/* a tail-calls b: same entry sp; both return probes fire at the one ret */
static void test_tail_call(void **state)
{
	struct fix *f = *state;

	ENTER(f, PID, 1, 100, SP0);
	ENTER(f, PID, 2, 150, SP0);
	LEAVE(f, PID, 2, 200, SP0);
	LEAVE(f, PID, 1, 200, SP0);
	assert_int_equal(f->g.n, 2);
	assert_int_equal(find(f, 2, 0)->depth, 1);
	assert_int_equal(find(f, 2, 0)->flags, 0);
	assert_int_equal(find(f, 1, 0)->flags, 0);
}

/* recursion: the same function nested; each return closes the innermost */
/* A function jumping back to its own entry: entries at one sp, chained returns. */
static void test_self_tail_call(void **state)
{
	struct fix *f = *state;
	int i;

	ENTER(f, PID, 0, 100, SP0);
	for (i = 0; i < 3; i++)
		ENTER(f, PID, 1, 200 + 10 * i, SP0 - 64);
	for (i = 0; i < 3; i++)
		LEAVE(f, PID, 1, 300, SP0 - 64);
	LEAVE(f, PID, 0, 400, SP0);
	assert_int_equal(f->g.n, 4);
	for (i = 0; i < 3; i++) {
		const struct bp_call *c = find(f, 1, i);

		assert_int_equal(c->flags, 0);
		assert_int_equal(c->end, 300);
	}
	/* each entry inside the one before: depths 3, 2, 1 in emission order */
	assert_int_equal(find(f, 1, 0)->depth, 3);
	assert_int_equal(find(f, 1, 2)->depth, 1);
	assert_int_equal(find(f, 1, 2)->begin, 200);
	assert_int_equal(f->s.nunwound, 0);

	/* after a loss, the same entry again means a lost return instead */
	assert_int_equal(decoder__loss(f->d, 0, 1), 0);
	ENTER(f, PID, 0, 500, SP0);
	ENTER(f, PID, 1, 600, SP0 - 64);
	ENTER(f, PID, 1, 700, SP0 - 64);
	LEAVE(f, PID, 1, 800, SP0 - 64);
	LEAVE(f, PID, 0, 900, SP0);
	assert_int_equal(find(f, 1, 3)->flags, BP_CALL_UNWOUND);
	assert_int_equal(find(f, 1, 4)->depth, 1);
}

/* One function falling through into another's entry: one return for both. */
static void test_fall_through_entry(void **state)
{
	struct fix *f = *state;

	ENTER(f, PID, 0, 100, SP0);
	ENTER(f, PID, 1, 200, SP0 - 64);	/* memcpy */
	ENTER(f, PID, 2, 210, SP0 - 64);	/* runs into memmove's entry */
	LEAVE(f, PID, 1, 300, SP0 - 64);	/* only the first armed a return */
	LEAVE(f, PID, 0, 400, SP0);
	assert_int_equal(find(f, 2, 0)->flags, 0);
	assert_int_equal(find(f, 2, 0)->end, 300);
	assert_int_equal(find(f, 2, 0)->parent_id, find(f, 1, 0)->id);
	assert_int_equal(find(f, 1, 0)->end, 300);
	assert_int_equal(f->s.nunwound, 0);
}

static void test_recursion(void **state)
{
	struct fix *f = *state;
	int i;

	for (i = 0; i < 5; i++)
		ENTER(f, PID, 1, 100 + i, SP0 - 64 * i);
	for (i = 4; i >= 0; i--)
		LEAVE(f, PID, 1, 200 + (4 - i), SP0 - 64 * i);
	assert_int_equal(f->g.n, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(f->g.ev[i].call.depth, 4 - i);
		assert_int_equal(f->g.ev[i].call.flags, 0);
	}
}

/* deeper than the kernel's return-probe limit: no exits come for those frames */
static void test_beyond_retprobe_depth(void **state)
{
	struct fix *f = *state;
	const int depth = DECODER_URETPROBE_DEPTH + 3;
	int i, flagged = 0;

	for (i = 0; i < depth; i++)
		ENTER(f, PID, 1, 100 + i, SP0 - 64 * i);
	/* only the outermost DECODER_URETPROBE_DEPTH frames return */
	for (i = DECODER_URETPROBE_DEPTH - 1; i >= 0; i--)
		LEAVE(f, PID, 1, 1000 - i, SP0 - 64 * i);
	for (i = 0; i < f->g.n; i++) {
		assert_int_equal(f->g.ev[i].call.flags & BP_CALL_UNWOUND, 0);
		flagged += !!(f->g.ev[i].call.flags & BP_CALL_NO_RETPROBE);
	}
	assert_int_equal(f->g.n, depth);
	assert_int_equal(flagged, 3);
	assert_int_equal(f->s.nno_retprobe, 3);
}

static void py(struct fix *f, uint16_t kind, uint64_t frame, uint64_t previous, uint64_t ts,
	       uint64_t sp)
{
	struct bp_rec_py r = { 0 };

	r.h.type = BP_REC_PY;
	r.h.flags = kind;
	r.h.ts = T0 + ts;
	r.h.pid_tgid = (uint64_t)PID << 32 | 1;
	r.code = 0x5000;
	r.frame = frame;
	r.previous = previous;
	r.sp = sp;
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
}

/*
 * Python calls end by a USDT probe, not a kernel return probe: 100 of them
 * are exact, and the native calls under them count against the kernel's
 * limit on their own (only the native ones past it get no return).
 */
static void test_python_frames_take_no_retprobe(void **state)
{
	struct fix *f = *state;
	const int npy = 100, nnat = DECODER_URETPROBE_DEPTH + 6;
	int i, flagged = 0, pyflagged = 0;

	/* one interpreter loop (one sp) runs every Python frame, as in CPython 3.11 */
	for (i = 0; i < npy; i++)
		py(f, BP_PY_CALL, 0x9000 + 0x100 * i, i ? 0x9000 + 0x100 * (i - 1) : 0, 10 + i, SP0);
	for (i = 0; i < nnat; i++)
		ENTER(f, PID, 1, 1000 + i, SP0 - 256 - 64 * i);
	for (i = DECODER_URETPROBE_DEPTH - 1; i >= 0; i--)
		LEAVE(f, PID, 1, 5000 - i, SP0 - 256 - 64 * i);
	for (i = npy - 1; i >= 0; i--)
		py(f, BP_PY_RETURN, 0x9000 + 0x100 * i, 0, 6000 + (npy - i), SP0);
	assert_int_equal(f->g.n, npy + nnat);
	for (i = 0; i < f->g.n; i++) {
		const struct bp_call *c = &f->g.ev[i].call;

		assert_int_equal(c->flags & BP_CALL_UNWOUND, 0);
		if (c->func == 1)
			flagged += !!(c->flags & BP_CALL_NO_RETPROBE);
		else
			pyflagged += !!c->flags;
	}
	assert_int_equal(flagged, 6);
	assert_int_equal(pyflagged, 0);
	assert_int_equal(f->s.nno_retprobe, 6);
}

/* Resume edges of many generators suspended at once: what the sink saw. */
#define NGEN 4096
struct resumes {
	uint64_t first[NGEN];	/* generator i's first slice (emitted in order of i) */
	uint64_t nfirst, nedges, bad;
};

static int resume_sink(void *ctx, const struct bp_event *ev)
{
	struct resumes *r = ctx;

	if (ev->kind == BP_EV_CALL && !(ev->call.flags & BP_CALL_RESUMED) && r->nfirst < NGEN)
		r->first[r->nfirst++] = ev->call.id;
	if (ev->kind == BP_EV_EDGE && ev->edge.kind == BP_EDGE_RESUME) {
		/* the generators resume from the last one down: the k-th resumption is NGEN-1-k's */
		uint64_t k = r->nedges++;

		r->bad += k >= NGEN || ev->edge.src_call != r->first[NGEN - 1 - k];
	}
	return 0;
}

/*
 * NGEN generators suspended at once, resumed in reverse: every resumption
 * has its edge from that generator's own suspension (a table that loses a
 * suspension when two frames share a slot drops edges).
 */
static void test_python_resume_edges_of_many_generators(void **state)
{
	struct fix *f = *state;
	struct resumes *res = calloc(1, sizeof(*res));
	struct decoder *saved = f->d, *d;
	int i;

	assert_int_equal(decoder__new(&f->s, resume_sink, res, &d), 0);
	f->d = d;
	for (i = 0; i < NGEN; i++) {
		py(f, BP_PY_CALL, 0x7f0000000000 + 0x10000ull * i, 0, 10 + 2 * i, SP0);
		py(f, BP_PY_YIELD, 0x7f0000000000 + 0x10000ull * i, 0, 11 + 2 * i, SP0);
	}
	for (i = NGEN - 1; i >= 0; i--) {
		py(f, BP_PY_RESUME, 0x7f0000000000 + 0x10000ull * i, 0, 100000 + 2 * (NGEN - i), SP0);
		py(f, BP_PY_RETURN, 0x7f0000000000 + 0x10000ull * i, 0, 100001 + 2 * (NGEN - i), SP0);
	}
	assert_int_equal(res->nfirst, NGEN);
	assert_int_equal(res->nedges, NGEN);
	assert_int_equal(res->bad, 0);
	decoder__free(d);
	f->d = saved;
	free(res);
}

static void test_loss_marker_and_bad_records(void **state)
{
	struct fix *f = *state;
	struct bp_rec_call r = { 0 };

	ENTER(f, PID, 0, 100, SP0);
	assert_int_equal(decoder__loss(f->d, 1, 42), 0);
	assert_int_equal(f->g.ev[0].kind, BP_EV_LOSS);
	assert_int_equal(f->g.ev[0].loss.count, 42);
	assert_int_equal(f->g.ev[0].loss.cpu, 1);
	assert_int_equal(f->g.ev[0].loss.ts, 100);
	/* unknown type, short record, function id out of range */
	r.h.type = 999;
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), -EINVAL);
	assert_int_equal(decoder__feed(f->d, &r, 4), -EINVAL);
	r.h.type = BP_REC_ENTRY;
	r.func_id = 4;
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), -EINVAL);
}

/*
 * A call whose entry was lost (hottiny with a full ring buffer): main -> a
 * calls b in a loop; records are lost, then a return of b comes with no
 * entry.  It began after the thread's last record seen, not at its caller's
 * start: it must not enclose or overlap the b calls before it, nor be
 * flagged as begun before the recording.  Without a loss, the same return
 * keeps the attach reading (its caller's begin, began before the recording).
 */
static void test_lost_entry_is_bounded(void **state)
{
	struct fix *f = *state;
	const struct bp_call *lost, *a, *m, *prev;
	int i;

	ENTER(f, PID, 0, 100, SP0);
	ENTER(f, PID, 1, 200, SP0 - 64);
	for (i = 0; i < 3; i++) {
		ENTER(f, PID, 2, 300 + 20 * i, SP0 - 128);
		LEAVE(f, PID, 2, 310 + 20 * i, SP0 - 128);
	}
	assert_int_equal(decoder__loss(f->d, 0, 5), 0);
	LEAVE(f, PID, 2, 500, SP0 - 128);		/* its entry was among the 5 */
	ENTER(f, PID, 2, 510, SP0 - 128);
	LEAVE(f, PID, 2, 520, SP0 - 128);
	LEAVE(f, PID, 1, 600, SP0 - 64);
	LEAVE(f, PID, 0, 700, SP0);

	lost = find(f, 2, 3);
	prev = find(f, 2, 2);
	a = find(f, 1, 0);
	m = find(f, 0, 0);
	assert_int_equal(lost->flags, BP_CALL_ENTRY_LOST);
	assert_int_equal(lost->begin, prev->end);	/* 350: the thread's last record */
	assert_int_equal(lost->end, 500);
	assert_int_equal(lost->depth, 2);
	assert_int_equal(lost->parent_id, a->id);
	assert_true(lost->end - lost->begin < a->end - a->begin);
	assert_true(find(f, 2, 4)->begin >= lost->end);
	/* its caller's self time loses only what it covers */
	assert_int_equal(a->self, 400 - 3 * 10 - 150 - 10);
	assert_int_equal(a->flags, 0);
	assert_int_equal(m->flags, 0);
	assert_int_equal(f->s.nno_entry, 1);
}

/* After a loss, a return without entry at depth 0 begins at its thread's last record too. */
static void test_lost_entry_outermost(void **state)
{
	struct fix *f = *state;
	const struct bp_call *c;

	ENTER(f, PID, 1, 100, SP0 - 64);
	LEAVE(f, PID, 1, 200, SP0 - 64);
	assert_int_equal(decoder__loss(f->d, 1, 3), 0);
	LEAVE(f, PID, 2, 400, SP0 - 64);
	c = find(f, 2, 0);
	assert_int_equal(c->flags, BP_CALL_ENTRY_LOST);
	assert_int_equal(c->begin, 200);
	assert_int_equal(c->end, 400);
	assert_int_equal(c->depth, 0);
}

/* Without a loss, a return without entry under a caller is an attach artefact. */
static void test_no_entry_without_loss(void **state)
{
	struct fix *f = *state;
	const struct bp_call *c;

	ENTER(f, PID, 0, 100, SP0);
	ENTER(f, PID, 1, 200, SP0 - 64);
	LEAVE(f, PID, 1, 300, SP0 - 64);
	LEAVE(f, PID, 2, 400, SP0 - 64);
	c = find(f, 2, 0);
	assert_int_equal(c->flags, BP_CALL_NO_ENTRY);
	assert_int_equal(c->begin, 100);	/* its caller's */
}

/* A loss counted apart from the records, not yet looked at (decoder__set_loss_check). */
struct late_loss {
	struct decoder *d;
	uint64_t pending;
	int asked;
};

static int report_late_loss(void *ctx)
{
	struct late_loss *l = ctx;
	uint64_t n = l->pending;

	l->asked++;
	l->pending = 0;
	return n ? decoder__loss(l->d, 0, n) : 0;
}

/*
 * The return of a call whose entry was lost, read before the capture next
 * looked at the loss counters: the decoder asks for them first, so the call
 * is flagged lost and begins at its thread's last record, not at its caller's
 * begin as if it had run since before the recording.  Without a loss counted,
 * the same return keeps the attach reading.  Ordinary returns do not ask.
 */
static void test_loss_learned_at_orphan_return(void **state)
{
	struct fix *f = *state;
	struct late_loss l = { .d = f->d };
	const struct bp_call *c;

	decoder__set_loss_check(f->d, report_late_loss, &l);
	ENTER(f, PID, 0, 100, SP0);
	ENTER(f, PID, 1, 200, SP0 - 64);
	LEAVE(f, PID, 1, 300, SP0 - 64);
	assert_int_equal(l.asked, 0);
	LEAVE(f, PID, 2, 400, SP0 - 64);	/* no loss: began before the recording */
	assert_int_equal(l.asked, 1);
	c = find(f, 2, 0);
	assert_int_equal(c->flags, BP_CALL_NO_ENTRY);
	l.pending = 7;				/* its entry was among 7 lost records */
	LEAVE(f, PID, 2, 500, SP0 - 64);
	assert_int_equal(l.asked, 2);
	assert_int_equal(l.pending, 0);
	c = find(f, 2, 1);
	assert_int_equal(c->flags, BP_CALL_ENTRY_LOST);
	assert_int_equal(c->begin, 400);	/* the thread's last record */
	assert_int_equal(c->depth, 1);
	LEAVE(f, PID, 1, 600, SP0 - 64);	/* known lost now: not asked again */
	assert_int_equal(l.asked, 2);
	assert_int_equal(find(f, 1, 1)->flags, BP_CALL_ENTRY_LOST);
	LEAVE(f, PID, 0, 700, SP0);
	assert_int_equal(find(f, 0, 0)->flags, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_longjmp_repair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exception_repair_on_return, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tail_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recursion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_self_tail_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fall_through_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_beyond_retprobe_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_python_frames_take_no_retprobe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_python_resume_edges_of_many_generators, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_loss_marker_and_bad_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_entry_is_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_entry_outermost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_entry_without_loss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loss_learned_at_orphan_return, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
