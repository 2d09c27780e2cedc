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

/* A session of two functions and its decoder (two_funcs). */
struct two {
	struct bp_session s;
	struct decoder *d;
};

/*
 * A session of two functions, parent (0) and child (1, with child_flags),
 * and its decoder into sink_fn, compensating with cc.
 */
static struct decoder *two_funcs(struct two *tw, const struct comp_costs *cc,
				 uint32_t child_flags, decoder_sink_fn sink_fn)
{
	struct bp_session *s = &tw->s;
	struct bp_func parent = { .name = "parent", .nparams = -1 };
	struct bp_func child = { .name = "child", .flags = child_flags, .nparams = -1 };
	struct decoder *d = NULL;

	session__init(s);
	s->t0 = 0;
	session__add_module(s, "/x");
	session__add_func(s, &parent);
	session__add_func(s, &child);
	ngot = 0;
	assert_int_equal(decoder__new(s, sink_fn, NULL, &d), 0);
	decoder__compensate(d, cc);
	tw->d = d;
	return d;
}

static void two_free(struct two *tw)
{
	decoder__free(tw->d);
	session__free(&tw->s);
}

/* A parent call (func 0) [t0, t3] around one child call (func 1) [t1, t2]. */
static void nested(struct decoder *d, uint64_t t0, uint64_t t1, uint64_t t2, uint64_t t3)
{
	feed(d, BP_REC_ENTRY, 0, t0, 0x1000);
	feed(d, BP_REC_ENTRY, 1, t1, 0xf00);
	feed(d, BP_REC_EXIT, 1, t2, 0xf00);
	feed(d, BP_REC_EXIT, 0, t3, 0x1000);
}

static void test_parent_and_children(void **state)
{
	/* path 0: 1000 ns a call, 400 inside; path 1: 3000, 1000 inside */
	struct comp_costs cc = { .total_ns = { 1000, 3000 }, .inside_ns = { 400, 1000 }, .path = path_of };
	struct two tw;
	struct decoder *d;
	uint64_t t = 1000000;

	d = two_funcs(&tw, &cc, 1, sink);
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
	two_free(&tw);
}

/*
 * The return probe apart: a parent whose last child returns right before it
 * does (a tail: exit -> exit, the return probe's whole cost T apart).  With
 * T calibrated at 600 of a 3000 ns call, the tail of 650 ns is 50 ns of the
 * parent's code; as halves of the total (the model before T), 1500 ns would
 * be taken there and the parent's exit held at its child's + 10 ns.
 */
static void test_return_probe_apart(void **state)
{
	struct comp_costs cc = { .total_ns = { 3000, 3000 }, .inside_ns = { 1000, 1000 },
				 .exit_ns = 600, .path = path_of };
	struct two tw;
	struct decoder *d;
	uint64_t t = 1000000;

	d = two_funcs(&tw, &cc, 0, sink);
	/* parent: entry; 5000 of work and the child's entry (2000: G); child 1000 + 300 of work */
	nested(d, t, t + 7000, t + 8300, t + 8950);
	assert_int_equal(decoder__finish(d), 0);
	assert_int_equal(ngot, 2);
	assert_int_equal(got[0].end - got[0].begin, 300);
	/* 8950 - its inside 1000 - the child's 3000 */
	assert_int_equal(got[1].end - got[1].begin, 4950);
	/* the tail is the parent's 50 ns of code, not the 10 ns floor */
	assert_int_equal(got[1].end - got[0].end, 50);
	two_free(&tw);
}

/* One parent (func 0) with `n` empty children (func 1) at the probes' L, G, T, then `rest` ns to the next. */
static uint64_t empty_family(struct decoder *d, uint64_t t, int n, uint64_t l, uint64_t g, uint64_t x,
			     uint64_t rest)
{
	int i;

	feed(d, BP_REC_ENTRY, 0, t, 0x1000);
	t += 5000;
	for (i = 0; i < n; i++) {
		feed(d, BP_REC_ENTRY, 1, t, 0xf00);
		t += l + (uint64_t)(i % 3);	/* a few ns of noise */
		feed(d, BP_REC_EXIT, 1, t, 0xf00);
		t += i + 1 < n ? g : x;
	}
	feed(d, BP_REC_EXIT, 0, t, 0x1000);
	return t + rest;
}

/*
 * two_funcs() with cc, then twenty parents of two empty children at the
 * probes' L, G, T (empty_family): the time after them.
 */
static uint64_t twenty_families(struct two *tw, const struct comp_costs *cc, uint64_t l,
				uint64_t g, uint64_t x)
{
	uint64_t t = 1000000;
	int i;

	two_funcs(tw, cc, 0, sink);
	for (i = 0; i < 20; i++)
		t = empty_family(tw->d, t, 2, l, g, x, 10000);
	return t;
}

/*
 * Measured in the recording: a process whose probes cost L 2000, G 1200,
 * T 800 (total 3200, inside 2000) where the calibration said 1500 / 1000 /
 * 600.  Twenty parents of two empty children each give it enough intervals
 * of every kind; a parent whose child works is then timed with them.
 */
static void test_adapt(void **state)
{
	struct comp_costs cc = { .total_ns = { 2500, 2500 }, .inside_ns = { 1500, 1500 },
				 .exit_ns = 600, .path = path_of, .adapt = true };
	struct comp_costs in;
	struct two tw;
	uint64_t t = twenty_families(&tw, &cc, 2000, 1200, 800);
	struct decoder *d = tw.d;
	uint32_t pid;
	unsigned mask;

	/* the parent: 300 ns of its own, its entry and the child's (H = L + G - T), 700 in the child, 40 after */
	ngot = 0;
	nested(d, t, t + 300 + 2400, t + 2700 + 2700, t + 5400 + 840);
	assert_int_equal(decoder__finish(d), 0);
	assert_int_equal(ngot, 2);
	assert_true(got[0].end - got[0].begin >= 698 && got[0].end - got[0].begin <= 700);
	/* raw 6240 - its inside 2000 - the child's 3200 */
	assert_true(got[1].end - got[1].begin >= 1038 && got[1].end - got[1].begin <= 1040);
	assert_true(decoder__comp_in_use(d, &in, &pid, &mask));
	assert_int_equal(pid, TID);
	assert_int_equal(mask, 1u | 8u);	/* path 0 and the return probe */
	assert_true(in.inside_ns[0] >= 2000 && in.inside_ns[0] <= 2002);
	assert_true(in.total_ns[0] >= 3200 && in.total_ns[0] <= 3202);
	assert_true(in.exit_ns > 799 && in.exit_ns < 801);
	two_free(&tw);
}

/*
 * A program without near-empty spans: its intervals are the probe cost plus
 * work; the figures taken from them stop at COMP_ADAPT_CAP x the calibration.
 */
static void test_adapt_cap(void **state)
{
	struct comp_costs cc = { .total_ns = { 2000, 2000 }, .inside_ns = { 1000, 1000 },
				 .exit_ns = 500, .path = path_of, .adapt = true };
	struct comp_costs in;
	struct two tw;
	struct decoder *d;
	uint32_t pid;
	unsigned mask;

	twenty_families(&tw, &cc, 9000, 9000, 9000);
	d = tw.d;
	assert_int_equal(decoder__finish(d), 0);
	assert_true(decoder__comp_in_use(d, &in, &pid, &mask));
	assert_true(in.inside_ns[0] > 1499 && in.inside_ns[0] < 1501);
	assert_true(in.total_ns[0] > 2999 && in.total_ns[0] < 3001);
	assert_true(in.exit_ns > 749 && in.exit_ns < 751);
	/* 9000 ns over 1500 everywhere: long bodies, never taken for stalls */
	assert_int_equal(in.stalls, 0);
	two_free(&tw);
}

/* A parent (func 0) around one child (func 1) of entry -> exit l ns: their durations. */
static void one_child(struct decoder *d, uint64_t *t, uint64_t l, uint64_t *child, uint64_t *parent)
{
	ngot = 0;
	nested(d, *t, *t + 7400, *t + 7400 + l, *t + 7400 + l + 600);
	*t += 7400 + l + 600 + 10000;
	assert_int_equal(ngot, 2);
	*child = got[0].end - got[0].begin;
	*parent = got[1].end - got[1].begin;
}

/*
 * Stalls in the probes: once the child's body is known short (forty empty
 * calls at L 1000), a call of it whose entry -> exit reads 30000 ns more
 * lost the CPU in its probes: it reads like its siblings and so does its
 * parent.  A body that then stays long is its own after a few such calls.
 */
static void test_stall(void **state)
{
	struct comp_costs cc = { .total_ns = { 3000, 3000 }, .inside_ns = { 1000, 1000 },
				 .exit_ns = 600, .path = path_of, .adapt = true };
	struct comp_costs in;
	struct two tw;
	uint64_t t = twenty_families(&tw, &cc, 1000, 2000, 600), c0, p0, c1, p1;
	uint32_t pid;
	unsigned mask;
	int i;

	one_child(tw.d, &t, 1000, &c0, &p0);
	one_child(tw.d, &t, 1000 + 30000, &c1, &p1);
	assert_true(c0 <= 12 && c1 <= 12);
	assert_true(p1 + 2 >= p0 && p1 <= p0 + 2);
	assert_true(decoder__comp_in_use(tw.d, &in, &pid, &mask));
	assert_int_equal(in.stalls, 1);
	assert_true(in.stall_ns > 29990 && in.stall_ns <= 30000);
	/*
	 * the same 30000 ns, ten times in a row: four more taken out (a
	 * score of 33 loses 8 at each, known from 8), then the body's own (less the L
	 * figure, which follows 8 such intervals up to its cap, 1500)
	 */
	for (i = 0; i < 10; i++) {
		one_child(tw.d, &t, 1000 + 30000, &c1, &p1);
		assert_true(i < 4 ? c1 <= 12 : c1 >= 29500);
	}
	assert_true(decoder__comp_in_use(tw.d, &in, &pid, &mask));
	assert_int_equal(in.stalls, 5);
	assert_int_equal(decoder__finish(tw.d), 0);
	two_free(&tw);
}

/* The parents' (func 0) compensated durations, in order. */
static uint64_t pdur[64];
static size_t npdur;

static int parent_sink(void *ctx, const struct bp_event *ev)
{
	if (ev->kind == BP_EV_CALL && ev->call.func == 0 && npdur < 64)
		pdur[npdur++] = ev->call.end - ev->call.begin;
	return 0;
}

/*
 * The machine's state moves the probes' cost for a while: after twenty
 * parents at G 2000, parents of ten empty children at G 2600.  The figure
 * follows within COMP_WINDOW intervals: from the second such parent on,
 * each reads its work with nothing of the shift left (with the figure of
 * the last 64 intervals it read 9 x 600 ns more).
 */
static void test_state_shift(void **state)
{
	struct comp_costs cc = { .total_ns = { 3000, 3000 }, .inside_ns = { 1000, 1000 },
				 .exit_ns = 600, .path = path_of, .adapt = true };
	struct two tw;
	uint64_t t = 1000000;
	size_t i;

	npdur = 0;
	two_funcs(&tw, &cc, 0, parent_sink);
	for (i = 0; i < 20; i++)
		t = empty_family(tw.d, t, 10, 1000, 2000, 600, 10000);
	for (i = 0; i < 4; i++)
		t = empty_family(tw.d, t, 10, 1000, 2600, 600, 10000);
	assert_int_equal(decoder__finish(tw.d), 0);
	assert_int_equal(npdur, 24);
	/*
	 * empty_family's 5000 ns from the parent's entry to its first child's
	 * hold the child's entry probe, 600 ns dearer now: 600 less of work
	 */
	for (i = 21; i < 24; i++)
		assert_true(pdur[i] + 600 + 30 >= pdur[19] && pdur[i] + 600 <= pdur[19] + 30);
	two_free(&tw);
}

/*
 * A calibration dearer than the process (L 1500, G 2500 for its L 1000,
 * G 2000): before 16 intervals of a kind its figure is the calibration's,
 * held to the process's own intervals of that kind so far (each is the
 * probe cost and some code, never less).  The second parent of ten empty
 * children, with 9 G and 10 L intervals seen, reads like the twentieth
 * (with the calibration alone: 9.5 us less, at the floor).
 */
static void test_prior_held(void **state)
{
	struct comp_costs cc = { .total_ns = { 4000, 4000 }, .inside_ns = { 1500, 1500 },
				 .exit_ns = 600, .path = path_of, .adapt = true };
	struct two tw;
	uint64_t t = 1000000;
	size_t i;

	npdur = 0;
	two_funcs(&tw, &cc, 0, parent_sink);
	for (i = 0; i < 20; i++)
		t = empty_family(tw.d, t, 10, 1000, 2000, 600, 10000);
	assert_int_equal(decoder__finish(tw.d), 0);
	assert_int_equal(npdur, 20);
	/* 5000 - (L + G - T), and 19 intervals at the 10 ns floor */
	assert_true(pdur[19] >= 2790 && pdur[19] <= 2810);
	for (i = 1; i < 20; i++)
		assert_true(pdur[i] + 30 >= pdur[19] && pdur[i] <= pdur[19] + 30);
	two_free(&tw);
}

/* Raw time on, with a stall of STALL_NS in the interval reaching each STALL_EVERY ns of the rest. */
#define STALL_EVERY	15000
#define STALL_NS	8000
static uint64_t next_stall;

static bool adv(uint64_t *t, uint64_t d)
{
	*t += d;
	if (*t < next_stall)
		return false;
	*t += STALL_NS;
	next_stall = *t + STALL_EVERY;
	return true;
}

/*
 * Stalls at a rate in time (8 us every 15 us of the rest, as this VM under
 * load: 8-11 us every ~45 us, with dearer probes) land in the caller's code
 * between two children (G 2000 ns: one interval in 7.5) more often than the
 * one in nine a place may be long and be known short; the rate seen at the
 * places known short (the children's bodies) says that many are stalls.
 * Forty parents of ten empty children: from the twentieth on, every parent
 * whose own code before its first child held no stall reads its work
 * (before: 8 us more for each stall between its children).
 */
static void test_stall_rate(void **state)
{
	struct comp_costs cc = { .total_ns = { 3000, 3000 }, .inside_ns = { 1000, 1000 },
				 .exit_ns = 600, .path = path_of, .adapt = true };
	bool head[40];
	struct two tw;
	uint64_t t = 1000000;
	size_t i, n = 0;
	int c;

	npdur = 0;
	next_stall = t + STALL_EVERY;
	two_funcs(&tw, &cc, 0, parent_sink);
	for (i = 0; i < 40; i++) {
		feed(tw.d, BP_REC_ENTRY, 0, t, 0x1000);
		head[i] = adv(&t, 5000);
		for (c = 0; c < 10; c++) {
			feed(tw.d, BP_REC_ENTRY, 1, t, 0xf00);
			adv(&t, 1000);
			feed(tw.d, BP_REC_EXIT, 1, t, 0xf00);
			adv(&t, c < 9 ? 2000 : 600);
		}
		feed(tw.d, BP_REC_EXIT, 0, t, 0x1000);
		adv(&t, 10000);
	}
	assert_int_equal(decoder__finish(tw.d), 0);
	assert_int_equal(npdur, 40);
	for (i = 20; i < 40; i++) {
		if (head[i])
			continue;
		n++;
		/* 5000 - (L + G - T), 19 intervals at the 10 ns floor */
		assert_true(pdur[i] >= 2780 && pdur[i] <= 2820);
	}
	assert_true(n >= 10);
	two_free(&tw);
}

/*
 * Batch flushes: the hit of a full batch's last record also sends the
 * batch, 500 ns after its timestamp here.  Forty parents of 10 empty
 * children (22 records each) come in full batches of 64 as the BPF side
 * sends them; every other hit costs exactly the calibration (L 1000, G 2000,
 * T 600).  Once 4 flushes were measured, a parent whose calls hold one
 * reads its 3000 ns of work like the others.
 */
static void test_batch_flush(void **state)
{
	struct comp_costs cc = { .total_ns = { 3000, 3000 }, .inside_ns = { 1000, 1000 },
				 .exit_ns = 600, .path = path_of, .adapt = true };
	static struct bp_rec_batch b;
	struct comp_costs in;
	struct two tw;
	struct decoder *d;
	uint64_t t = 1000000, ival[22];
	uint16_t type[22];
	uint32_t func[22], pid;
	unsigned mask;
	size_t nrec = 0, i;
	int fam, k;

	/* one family: the intervals before each record (parent's entry: after main's 5000 of work) */
	type[0] = BP_REC_ENTRY, func[0] = 0, ival[0] = 2000 + 5000;
	for (k = 0; k < 10; k++) {
		type[1 + 2 * k] = BP_REC_ENTRY, func[1 + 2 * k] = 1;
		ival[1 + 2 * k] = k ? 2000 : 1000 + 2000 - 600 + 3000;	/* G, or H + the parent's work */
		type[2 + 2 * k] = BP_REC_EXIT, func[2 + 2 * k] = 1, ival[2 + 2 * k] = 1000;
	}
	type[21] = BP_REC_EXIT, func[21] = 0, ival[21] = 600;
	npdur = 0;
	d = two_funcs(&tw, &cc, 0, parent_sink);
	memset(&b, 0, sizeof(b));
	b.h.type = BP_REC_BATCH;
	for (fam = 0; fam < 40; fam++) {
		for (k = 0; k < 22; k++, nrec++) {
			struct bp_rec_call *r = &b.r[b.n++];

			t += ival[k] + (nrec && nrec % BP_BATCH_RECS == 0 ? 500 : 0);
			*r = (struct bp_rec_call){ .h = { .type = type[k], .ts = t,
							  .pid_tgid = (uint64_t)TID << 32 | TID },
						   .func_id = func[k], .sp = func[k] ? 0xf00 : 0x1000 };
			if (b.n == BP_BATCH_RECS) {
				b.h.ts = t;
				assert_int_equal(decoder__feed(d, &b, sizeof(b)), 0);
				b.n = 0;
			}
		}
	}
	b.h.ts = t;
	assert_int_equal(decoder__feed(d, &b, sizeof(b)), 0);	/* a partial batch: no flush of its hit */
	assert_int_equal(decoder__finish(d), 0);
	assert_int_equal(npdur, 40);
	assert_true(decoder__comp_in_use(d, &in, &pid, &mask));
	assert_true(mask & COMP_IN_USE_FLUSH);
	assert_true(in.flush_ns > 499 && in.flush_ns < 501);
	/*
	 * Every parent reads the same (its 3000 ns of work, and 10 ns per
	 * event of its empty children: the floor) once the flushes are
	 * charged: 880 records, 13 flushes, the first 4 (records 63, 127,
	 * 191, 255: parents 2, 5, 8, 11) measured, from the 5th (record 319,
	 * parent 14) on charged.
	 */
	assert_true(pdur[0] >= 3000 && pdur[0] <= 3000 + 22 * 10);
	for (i = 12; i < 40; i++)
		assert_int_equal(pdur[i], pdur[0]);
	/* before, the parents that held a flush read more */
	for (i = 0; i < 12; i++)
		assert_true(i % 3 == 2 ? pdur[i] > pdur[0] + 250 : pdur[i] == pdur[0]);
	two_free(&tw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parent_and_children),
		cmocka_unit_test(test_return_probe_apart),
		cmocka_unit_test(test_adapt),
		cmocka_unit_test(test_adapt_cap),
		cmocka_unit_test(test_stall),
		cmocka_unit_test(test_batch_flush),
		cmocka_unit_test(test_state_shift),
		cmocka_unit_test(test_prior_held),
		cmocka_unit_test(test_stall_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
