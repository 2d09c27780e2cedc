// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decoder unit tests (tests/unit/decode_fixture.h): records are built by hand
 * exactly as the BPF programs write them, and the emitted calls are checked
 * field by field: nesting, threads, exits without entries, threads that
 * exit or are reaped, the end of the recording, batches, exec.  Repairs of
 * the call stack: test_decode_repair.c; wakeup edges: test_decode_wakeup.c.
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

static void args_rec(struct fix *f, uint16_t type, uint32_t func, uint64_t ts, uint64_t sp)
{
	struct bp_rec_call_args r = { 0 };

	rec_head(&r.h, type, PID, ts);
	r.func_id = func;
	r.sp = sp;
	r.str_slot[0] = r.str_slot[1] = 0xff;
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
}

static void xval(struct fix *f, uint32_t func, uint8_t slot, uint64_t v, uint64_t ts)
{
	struct bp_rec_xval r = { 0 };

	rec_head(&r.h, BP_REC_XVAL, PID, ts);
	r.func_id = func;
	r.slot = slot;
	r.ok = 1;
	r.value = v;
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
}

/*
 * Floats read inside a call (BP_REC_XVAL) go to the innermost open call of
 * their function: a parameter keeps its first value (a loop passing the
 * place again), the return value its last; one of another function, or a
 * failed read, is dropped.
 */
static void test_xvals_go_to_their_call(void **state)
{
	struct fix *f = *state;
	const struct bp_call *a, *b;

	args_rec(f, BP_REC_ENTRY_ARGS, 1, 100, SP0);
	xval(f, 1, 0, 11, 110);
	xval(f, 1, 0, 12, 120);		/* the place passed again: not the argument */
	xval(f, 2, 1, 99, 125);		/* b is not open */
	args_rec(f, BP_REC_ENTRY_ARGS, 2, 130, SP0 - 64);
	xval(f, 2, 1, 21, 140);
	xval(f, 2, BP_XVAL_RET, 22, 150);
	args_rec(f, BP_REC_EXIT_RET, 2, 160, SP0 - 56);
	xval(f, 1, BP_XVAL_RET, 13, 170);
	{
		struct bp_rec_xval r = { .h = { .type = BP_REC_XVAL, .ts = T0 + 175,
						.pid_tgid = (uint64_t)PID << 32 | PID },
					 .func_id = 1, .slot = 2, .ok = 0 };

		assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
	}
	args_rec(f, BP_REC_EXIT_RET, 1, 180, SP0 + 8);
	a = find(f, 1, 0);
	b = find(f, 2, 0);
	assert_true(a->flags & BP_CALL_HAS_XMM);
	assert_int_equal(a->x.xmm_mask, 1u << 0 | 1u << BP_ARGX_XRET);
	assert_int_equal(a->x.xmm[0], 11);
	assert_int_equal(a->x.xmm[BP_ARGX_XRET], 13);
	assert_int_equal(b->x.xmm_mask, 1u << 1 | 1u << BP_ARGX_XRET);
	assert_int_equal(b->x.xmm[1], 21);
	assert_int_equal(b->x.xmm[BP_ARGX_XRET], 22);
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
		cmocka_unit_test_setup_teardown(test_exec_closes_old_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xvals_go_to_their_call, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
