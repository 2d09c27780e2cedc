// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decoder unit tests: records are built by hand exactly as the BPF programs
 * write them, and the emitted calls are checked field by field.
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

#define T0 1000000000ull
#define PID 100
#define SP0 0x7ffff000ull	/* sp at entry of the outermost call */

struct got {
	struct bp_event ev[256];
	int n;
};

static int sink(void *ctx, const struct bp_event *ev)
{
	struct got *g = ctx;

	assert_true(g->n < 256);
	g->ev[g->n++] = *ev;
	return 0;
}

struct fix {
	struct bp_session s;
	struct decoder *d;
	struct got g;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct bp_func fn = { 0 };
	const char *names[] = { "main", "a", "b", "c" };
	size_t i;

	session__init(&f->s);
	f->s.t0 = T0;
	fn.module = session__add_module(&f->s, "/bin/x");
	for (i = 0; i < 4; i++) {
		fn.name = (char *)names[i];
		session__add_func(&f->s, &fn);
	}
	assert_int_equal(decoder__new(&f->s, sink, &f->g, &f->d), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	decoder__free(f->d);
	session__free(&f->s);
	free(f);
	return 0;
}

static void call(struct fix *f, uint16_t type, uint32_t tid, uint32_t func, uint64_t ts, uint64_t sp)
{
	struct bp_rec_call r = { 0 };

	r.h.type = type;
	r.h.ts = T0 + ts;
	r.h.pid_tgid = (uint64_t)PID << 32 | tid;
	r.func_id = func;
	r.sp = sp;
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
}

/* entry at sp S, exit at S + 8, as the probes see them */
#define ENTER(f, tid, fn, ts, sp) call(f, BP_REC_ENTRY, tid, fn, ts, sp)
#define LEAVE(f, tid, fn, ts, sp) call(f, BP_REC_EXIT, tid, fn, ts, (sp) + 8)

/* main (0) -> a (1) -> b (2) entered at 100, 200, 300, each frame 64 bytes below its caller's. */
static void enter_main_a_b(struct fix *f)
{
	ENTER(f, PID, 0, 100, SP0);
	ENTER(f, PID, 1, 200, SP0 - 64);
	ENTER(f, PID, 2, 300, SP0 - 128);
}

static const struct bp_call *find(struct fix *f, uint32_t func, int nth)
{
	int i;

	for (i = 0; i < f->g.n; i++)
		if (f->g.ev[i].kind == BP_EV_CALL && f->g.ev[i].call.func == func && nth-- == 0)
			return &f->g.ev[i].call;
	fail_msg("call of func %u #%d not emitted", func, nth);
	return NULL;
}

static void test_nesting(void **state)
{
	struct fix *f = *state;
	const struct bp_call *m, *a, *b;

	enter_main_a_b(f);
	LEAVE(f, PID, 2, 400, SP0 - 128);
	LEAVE(f, PID, 1, 500, SP0 - 64);
	ENTER(f, PID, 2, 600, SP0 - 64);
	LEAVE(f, PID, 2, 650, SP0 - 64);
	LEAVE(f, PID, 0, 1000, SP0);
	assert_int_equal(f->g.n, 4);
	/* children are emitted before their parents */
	assert_int_equal(f->g.ev[0].call.func, 2);
	assert_int_equal(f->g.ev[3].call.func, 0);
	m = find(f, 0, 0);
	a = find(f, 1, 0);
	b = find(f, 2, 0);
	assert_int_equal(m->begin, 100);
	assert_int_equal(m->end, 1000);
	assert_int_equal(m->depth, 0);
	assert_int_equal(m->parent_id, 0);
	assert_int_equal(m->self, 900 - 300 - 50);
	assert_int_equal(a->depth, 1);
	assert_int_equal(a->parent_id, m->id);
	assert_int_equal(a->self, 300 - 100);
	assert_int_equal(b->depth, 2);
	assert_int_equal(b->parent_id, a->id);
	assert_int_equal(b->flags, 0);
	assert_int_equal(find(f, 2, 1)->depth, 1);
	/* ids follow entry order */
	assert_true(m->id < a->id && a->id < b->id && b->id < find(f, 2, 1)->id);
	/* call paths: main>a>b and main>b are distinct, main>a>b expands right */
	{
		uint32_t fx[8];
		size_t n = session__path_funcs(&f->s, b->path, fx, 8);

		assert_int_equal(n, 3);
		assert_int_equal(fx[0], 0);
		assert_int_equal(fx[1], 1);
		assert_int_equal(fx[2], 2);
		assert_int_not_equal(b->path, find(f, 2, 1)->path);
	}
	assert_int_equal(f->s.ncalls, 4);
}

static void test_threads_are_separate(void **state)
{
	struct fix *f = *state;

	ENTER(f, PID, 0, 100, SP0);
	ENTER(f, PID + 1, 1, 110, SP0 + 0x100000);
	ENTER(f, PID, 2, 120, SP0 - 64);
	LEAVE(f, PID + 1, 1, 130, SP0 + 0x100000);
	LEAVE(f, PID, 2, 140, SP0 - 64);
	LEAVE(f, PID, 0, 150, SP0);
	assert_int_equal(f->g.n, 3);
	assert_int_equal(find(f, 1, 0)->tid, PID + 1);
	assert_int_equal(find(f, 1, 0)->depth, 0);
	assert_int_equal(find(f, 2, 0)->depth, 1);
	assert_int_equal(find(f, 2, 0)->pid, PID);
}

static void test_exit_without_entry(void **state)
{
	struct fix *f = *state;
	const struct bp_call *m;

	/* attach mid-call: a child completes, then the caller returns */
	ENTER(f, PID, 1, 200, SP0 - 64);
	LEAVE(f, PID, 1, 300, SP0 - 64);
	LEAVE(f, PID, 0, 500, SP0);
	m = find(f, 0, 0);
	assert_int_equal(m->flags, BP_CALL_NO_ENTRY);
	assert_int_equal(m->begin, 0);	/* the start of the recording */
	assert_int_equal(m->end, 500);
	assert_int_equal(m->self, 500 - 100);
	assert_int_equal(f->s.nno_entry, 1);
}

/*
 * Calls entered while the probes were going in (return link first) return
 * without an entry, one after the other at the same level: the second began
 * after the first ended, not at the start of the recording.  One further
 * out (a higher sp) is their caller and encloses them.
 */
static void test_exits_without_entry_in_sequence(void **state)
{
	struct fix *f = *state;

	LEAVE(f, PID, 1, 300, SP0 - 64);
	LEAVE(f, PID, 2, 400, SP0 - 64);
	LEAVE(f, PID, 3, 450, SP0 - 128);	/* deeper: also after */
	LEAVE(f, PID, 0, 500, SP0);		/* the caller of them all */
	assert_int_equal(find(f, 1, 0)->begin, 0);
	assert_int_equal(find(f, 2, 0)->begin, 300);
	assert_int_equal(find(f, 3, 0)->begin, 400);
	assert_int_equal(find(f, 0, 0)->begin, 0);
	assert_int_equal(find(f, 0, 0)->self, 500 - 300 - 100 - 50);
	assert_int_equal(f->s.nno_entry, 4);
}

static void test_thread_exit_closes_calls(void **state)
{
	struct fix *f = *state;
	struct bp_rec_task r = { 0 };

	ENTER(f, PID + 1, 0, 100, SP0);
	ENTER(f, PID + 1, 1, 200, SP0 - 64);
	r.h.type = BP_REC_TASK_EXIT;
	r.h.ts = T0 + 900;
	r.h.pid_tgid = (uint64_t)PID << 32 | (PID + 1);
	strcpy(r.comm, "worker");
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
	assert_int_equal(f->g.n, 2);
	assert_int_equal(find(f, 1, 0)->flags, BP_CALL_UNFINISHED);
	assert_int_equal(find(f, 1, 0)->end, 900);
	assert_int_equal(find(f, 0, 0)->flags, BP_CALL_UNFINISHED);
	assert_int_equal(find(f, 0, 0)->end, 900);
	assert_string_equal(session__find_thread(&f->s, PID + 1)->name, "worker");
	assert_int_equal(f->s.nunfinished, 2);
}

/*
 * Exited threads are forgotten (a long serve), and forgetting some does not
 * disturb the others sharing their hash neighbourhood.
 */
static void test_exited_threads_forgotten(void **state)
{
	struct fix *f = *state;
	struct bp_rec_task r = { 0 };
	uint32_t i;

	for (i = 1; i <= 200; i++)
		ENTER(f, PID + i, 1, 100 + i, SP0);
	assert_int_equal(decoder__nthreads(f->d), 200);
	r.h.type = BP_REC_TASK_EXIT;
	strcpy(r.comm, "worker");
	for (i = 2; i <= 200; i += 2) {
		r.h.ts = T0 + 1000 + i;
		r.h.pid_tgid = (uint64_t)PID << 32 | (PID + i);
		assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
	}
	assert_int_equal(decoder__nthreads(f->d), 100);
	assert_int_equal(f->g.n, 100);	/* the exited threads' calls, unfinished */
	for (i = 1; i <= 200; i += 2)
		LEAVE(f, PID + i, 1, 2000 + i, SP0);
	assert_int_equal(f->g.n, 200);
	for (i = 100; i < 200; i++) {
		const struct bp_call *c = &f->g.ev[i].call;
		uint32_t k = c->tid - PID;

		assert_true(k % 2 == 1);
		assert_int_equal(c->begin, 100 + k);	/* each thread's own frame */
		assert_int_equal(c->end, 2000 + k);
		assert_int_equal(c->flags, 0);
	}
	/* the session keeps them until pruned */
	assert_non_null(session__find_thread(&f->s, PID + 2));
	assert_int_equal(session__prune_threads(&f->s, 1100), 49);	/* exited before 1100 */
	assert_null(session__find_thread(&f->s, PID + 2));
	assert_non_null(session__find_thread(&f->s, PID + 200));
	assert_non_null(session__find_thread(&f->s, PID + 1));
	assert_int_equal(session__prune_threads(&f->s, 5000), 51);
	assert_non_null(session__find_thread(&f->s, PID + 199));
}

/* Threads "gone" for the test: odd tids. */
static bool odd_gone(uint32_t tid, uint32_t pid, void *ctx)
{
	(*(int *)ctx)++;
	return tid % 2 == 1;
}

static bool only_pid_alive(uint32_t pid, void *ctx)
{
	return pid == PID;
}

/*
 * A lost exit record: the thread's state would stay forever in a long serve.
 * decoder__reap closes the calls of silent threads that are gone, as an exit
 * would, and forgets them; then the session forgets them and their process.
 */
static void test_lost_exits_reaped(void **state)
{
	struct fix *f = *state;
	struct bp_process *p;
	size_t n = 0;
	uint32_t i;
	int asked = 0;

	for (i = 1; i <= 100; i++)
		ENTER(f, PID + i, 1, 100 + i, SP0);
	/* threads 51..100 were heard from later */
	for (i = 51; i <= 100; i++)
		ENTER(f, PID + i, 2, 5000 + i, SP0 - 64);
	assert_int_equal(decoder__nthreads(f->d), 100);
	/* silent since before 1000: 1..50, of which the odd ones are gone */
	assert_int_equal(decoder__reap(f->d, 1000, odd_gone, &asked, &n), 0);
	assert_int_equal(n, 25);
	assert_int_equal(asked, 50);	/* only the silent ones are looked at */
	assert_int_equal(decoder__nthreads(f->d), 75);
	assert_int_equal(f->g.n, 25);
	for (i = 0; i < 25; i++) {
		const struct bp_call *c = &f->g.ev[i].call;

		assert_true((c->tid - PID) % 2 == 1 && c->tid - PID <= 50);
		assert_int_equal(c->flags & BP_CALL_UNFINISHED, BP_CALL_UNFINISHED);
		assert_int_equal(c->end, 100 + (c->tid - PID));	/* closed at its last time */
	}
	assert_int_equal(session__find_thread(&f->s, PID + 1)->exited, 1);
	assert_int_equal(session__find_thread(&f->s, PID + 2)->exited, 0);
	assert_int_equal(session__prune_threads(&f->s, 1000), 25);
	/* the survivors still decode on their own stacks */
	LEAVE(f, PID + 2, 1, 6000, SP0);
	assert_int_equal(find(f, 1, 25)->tid, PID + 2);

	/* processes: forgotten when dead and no thread of the table is theirs */
	session__set_process_name(&f->s, PID, "x");
	session__set_process_name(&f->s, PID + 7000, "gone");
	session__process(&f->s, PID + 7001);
	assert_int_equal(session__prune_procs(&f->s, only_pid_alive, NULL), 2);
	p = session__process(&f->s, PID);
	assert_string_equal(p->name, "x");
	assert_int_equal(f->s.nprocs, 1);
}

static void test_finish_closes_at_last_time(void **state)
{
	struct fix *f = *state;

	ENTER(f, PID, 0, 100, SP0);
	ENTER(f, PID, 1, 200, SP0 - 64);
	LEAVE(f, PID, 1, 300, SP0 - 64);
	assert_int_equal(decoder__finish(f->d), 0);
	assert_int_equal(f->g.n, 2);
	assert_int_equal(find(f, 0, 0)->flags, BP_CALL_UNFINISHED);
	assert_int_equal(find(f, 0, 0)->end, 300);
}

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

/* A CPU's batch of calls (bp_rec_batch) decodes like the same records one by one. */
static void test_batch(void **state)
{
	struct fix *f = *state;
	struct bp_rec_batch *b = calloc(1, sizeof(*b));
	size_t head = offsetof(struct bp_rec_batch, r);
	const struct bp_call *m, *a;
	uint32_t i;

	b->h.type = BP_REC_BATCH;
	b->n = 4;
	for (i = 0; i < 4; i++) {
		b->r[i].h.type = i < 2 ? BP_REC_ENTRY : BP_REC_EXIT;
		b->r[i].h.ts = T0 + 100 * (i + 1);
		b->r[i].h.pid_tgid = (uint64_t)PID << 32 | PID;
		b->r[i].func_id = i == 0 || i == 3 ? 0 : 1;
		b->r[i].sp = i == 0 ? SP0 : i == 1 ? SP0 - 64 : i == 2 ? SP0 - 56 : SP0 + 8;
	}
	/* only the records it holds are sent: the size says so */
	assert_int_equal(decoder__feed(f->d, b, head + 4 * sizeof(b->r[0])), 0);
	assert_int_equal(f->g.n, 2);
	a = find(f, 1, 0);
	m = find(f, 0, 0);
	assert_int_equal(a->begin, 200);
	assert_int_equal(a->end, 300);
	assert_int_equal(a->parent_id, m->id);
	assert_int_equal(m->begin, 100);
	assert_int_equal(m->end, 400);
	assert_int_equal(f->s.nrecords, 4);	/* the records, not the batch */

	/* hostile: more records than fit, a size short of n, a foreign kind inside */
	b->n = BP_BATCH_RECS + 1;
	assert_int_equal(decoder__feed(f->d, b, sizeof(*b)), -EINVAL);
	b->n = 4;
	assert_int_equal(decoder__feed(f->d, b, head + 3 * sizeof(b->r[0])), -EINVAL);
	assert_int_equal(decoder__feed(f->d, b, head - 1), -EINVAL);
	b->r[0].h.type = BP_REC_BATCH;
	assert_int_equal(decoder__feed(f->d, b, head + 4 * sizeof(b->r[0])), -EINVAL);
	free(b);
}

static void test_exec_closes_old_image(void **state)
{
	struct fix *f = *state;
	struct bp_rec_exec r = { 0 };

	ENTER(f, PID, 0, 100, SP0);
	r.h.type = BP_REC_EXEC;
	r.h.ts = T0 + 400;
	r.h.pid_tgid = (uint64_t)PID << 32 | PID;
	r.old_tid = PID;
	strcpy(r.filename, "/usr/bin/newprog");
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
	assert_int_equal(find(f, 0, 0)->flags, BP_CALL_UNFINISHED);
	assert_int_equal(find(f, 0, 0)->end, 400);
	assert_string_equal(session__process(&f->s, PID)->name, "newprog");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads_are_separate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_without_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exits_without_entry_in_sequence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_exit_closes_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exited_threads_forgotten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_exits_reaped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_closes_at_last_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_longjmp_repair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exception_repair_on_return, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tail_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recursion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_self_tail_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fall_through_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_beyond_retprobe_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_python_frames_take_no_retprobe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loss_marker_and_bad_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_closes_old_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_entry_is_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_entry_outermost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_entry_without_loss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_stayed_waits_for_the_wakees_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_stayed_at_the_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_switch_in_unseen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wakeup_never_resumed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
