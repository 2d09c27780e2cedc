/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the decoder tests share (test_decode.c, test_decode_repair.c,
 * test_decode_wakeup.c): a decoder over a session whose events are kept,
 * records built by hand as the BPF programs write them, and the emitted
 * calls found again.  Include after <cmocka.h>.
 */
#ifndef BPFPROF_DECODE_FIXTURE_H
#define BPFPROF_DECODE_FIXTURE_H

#define T0 1000000000ull
#define PID 100
#define SP0 0x7ffff000ull	/* sp at entry of the outermost call */

struct got {
	struct bp_event ev[256];
	int n;
};

static inline int sink(void *ctx, const struct bp_event *ev)
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

static inline int setup(void **state)
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

static inline int teardown(void **state)
{
	struct fix *f = *state;

	decoder__free(f->d);
	session__free(&f->s);
	free(f);
	return 0;
}

/* A record header as the BPF programs stamp it: thread tid of PID, at T0 + ts. */
static inline void rec_head(struct bp_rec_hdr *h, uint16_t type, uint32_t tid, uint64_t ts)
{
	h->type = type;
	h->ts = T0 + ts;
	h->pid_tgid = (uint64_t)PID << 32 | tid;
}

static inline void call(struct fix *f, uint16_t type, uint32_t tid, uint32_t func,
			uint64_t ts, uint64_t sp)
{
	struct bp_rec_call r = { 0 };

	rec_head(&r.h, type, tid, ts);
	r.func_id = func;
	r.sp = sp;
	assert_int_equal(decoder__feed(f->d, &r, sizeof(r)), 0);
}

/* entry at sp S, exit at S + 8, as the probes see them */
#define ENTER(f, tid, fn, ts, sp) call(f, BP_REC_ENTRY, tid, fn, ts, sp)
#define LEAVE(f, tid, fn, ts, sp) call(f, BP_REC_EXIT, tid, fn, ts, (sp) + 8)

/* main (0) -> a (1) -> b (2) entered at 100, 200, 300, each frame 64 bytes below its caller's. */
static inline void enter_main_a_b(struct fix *f)
{
	ENTER(f, PID, 0, 100, SP0);
	ENTER(f, PID, 1, 200, SP0 - 64);
	ENTER(f, PID, 2, 300, SP0 - 128);
}

static inline const struct bp_call *find(struct fix *f, uint32_t func, int nth)
{
	int i;

	for (i = 0; i < f->g.n; i++)
		if (f->g.ev[i].kind == BP_EV_CALL && f->g.ev[i].call.func == func && nth-- == 0)
			return &f->g.ev[i].call;
	fail_msg("call of func %u #%d not emitted", func, nth);
	return NULL;
}

#endif /* BPFPROF_DECODE_FIXTURE_H */
