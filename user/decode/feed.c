// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one record switch (decoder__feed): every record the BPF side writes
 * is read here, checked against its type's size, and handed to the decode
 * file of its concern as typed values; the records that hold a process go
 * on to the live side's hook (hold.h).  The shadow call stacks are
 * decode.c's.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "decode.h"
#include "hold.h"
#include "internal.h"
#include "compensate.h"

/* A record that holds a process, to the live side's hook (hold.h). */
static void dec_hold(struct decoder *d, const void *rec, size_t size)
{
	struct hold h;

	if (d->hold_hook && hold__read(rec, size, &h) != HOLD_NONE)
		d->hold_hook(d->hold_ctx, &h);
}

/*
 * The least size of each record type, checked before its handler (0: it
 * checks its own, variable, size).
 */
static const size_t rec_min_size[BP_REC_MAX] = {
	[BP_REC_ENTRY] = sizeof(struct bp_rec_call),
	[BP_REC_EXIT] = sizeof(struct bp_rec_call),
	[BP_REC_ENTRY_ARGS] = sizeof(struct bp_rec_call),
	[BP_REC_EXIT_RET] = sizeof(struct bp_rec_call),
	[BP_REC_FORK] = sizeof(struct bp_rec_task),
	[BP_REC_TASK_EXIT] = sizeof(struct bp_rec_task),
	[BP_REC_COMM] = sizeof(struct bp_rec_task),
	[BP_REC_EXEC] = sizeof(struct bp_rec_exec),
	[BP_REC_DLOPEN] = sizeof(struct bp_rec_exec),
	[BP_REC_WAKEUP] = sizeof(struct bp_rec_wakeup),
	[BP_REC_USDT] = sizeof(struct bp_rec_usdt),
	[BP_REC_PY] = sizeof(struct bp_rec_py),
	[BP_REC_PYCODE] = sizeof(struct bp_rec_pycode),
	[BP_REC_SWITCH] = sizeof(struct bp_rec_switch),
	[BP_REC_REARM] = sizeof(struct bp_rec_unwind),
	[BP_REC_UNWIND] = sizeof(struct bp_rec_unwind),
};

/* The end of a record of thread t: its time is the thread's latest (unless err). */
static int dec_seen(struct tstate *t, uint64_t ts, int err)
{
	if (!err && ts > t->last_ts)
		t->last_ts = ts;
	return err;
}

/* A call's entry or return; with its registers (BP_REC_*_ARGS, BP_REC_EXIT_RET) for --deps. */
static int dec_on_call(struct decoder *d, const void *rec, size_t size, uint64_t ts)
{
	const struct bp_rec_call *c = rec;
	uint16_t type = c->h.type;
	bool entry = type == BP_REC_ENTRY || type == BP_REC_ENTRY_ARGS;
	const uint64_t *regs = NULL;
	struct tstate *t;
	int err;

	if (c->func_id >= d->s->nfuncs)
		return -EINVAL;
	if ((type == BP_REC_ENTRY_ARGS || type == BP_REC_EXIT_RET) &&
	    size >= sizeof(struct bp_rec_call_args))
		regs = (const uint64_t *)((const struct bp_rec_call_args *)rec)->regs;
	t = dec_thread_state(d, (uint32_t)c->h.pid_tgid, c->h.pid_tgid >> 32, ts);
	err = dec_wake_due(d, t, ts);
	if (err)
		return err;
	err = entry ? dec_call_entry(d, t, c->func_id, ts, c->sp, regs) :
		      dec_call_return(d, t, c->func_id, ts, c->sp, regs);
	return dec_seen(t, ts, err);
}

/*
 * The first traced call after an exception: the frames whose return slots
 * were re-armed are alive (their returns will come); a frame restored for
 * the unwinder and not re-armed was unwound by the exception: its slot was
 * reused.
 */
static int dec_on_rearm(struct decoder *d, const struct bp_rec_unwind *u, uint64_t ts)
{
	struct tstate *t = dec_thread_state(d, (uint32_t)u->h.pid_tgid, u->h.pid_tgid >> 32, ts);
	uint32_t i, j;
	int err = 0;

	while (t->depth && !err) {
		struct frame *top = &t->stack[t->depth - 1];
		bool alive = false;

		if (!(top->flags & FRAME_RESTORED) || (top->flags & BP_CALL_NO_RETPROBE))
			break;
		for (i = 0; i < u->n && i < BP_UNWIND_SLOTS; i++)
			alive |= u->slot[i] == top->sp;
		if (alive)
			break;
		err = dec_pop_emit(d, t, t->last_ts, BP_CALL_UNWOUND);
	}
	for (i = 0; i < t->depth; i++)
		for (j = 0; j < u->n && j < BP_UNWIND_SLOTS; j++)
			if (u->slot[j] == t->stack[i].sp)
				t->stack[i].flags &= ~FRAME_RESTORED;
	t->unwinding = false;
	return dec_seen(t, ts, err);
}

/* The thread entered the exception unwinder: its open frames' return slots hold their callers. */
static int dec_on_unwind(struct decoder *d, const struct bp_rec_unwind *u, uint64_t ts)
{
	struct tstate *t = dec_thread_state(d, (uint32_t)u->h.pid_tgid, u->h.pid_tgid >> 32, ts);
	uint32_t i;

	t->unwinding = true;
	for (i = 0; i < t->depth; i++)
		t->stack[i].flags |= FRAME_RESTORED;
	d->s->nexceptions++;
	return dec_seen(t, ts, 0);
}

int decoder__feed(struct decoder *d, const void *rec, size_t size)
{
	const struct bp_rec_hdr *h = rec;
	uint64_t ts;
	int err;

	if (size < sizeof(*h))
		return -EINVAL;
	if (h->type == BP_REC_BATCH) {
		const struct bp_rec_batch *b = rec;
		size_t head = offsetof(struct bp_rec_batch, r);
		uint32_t i;

		if (size < head || b->n > BP_BATCH_RECS || size < head + b->n * sizeof(b->r[0]))
			return -EINVAL;
		for (i = 0; i < b->n; i++) {
			if (b->r[i].h.type != BP_REC_ENTRY && b->r[i].h.type != BP_REC_EXIT)
				return -EINVAL;
			/* a full batch was sent by its last record's hit (compensate.h) */
			if (d->comp && b->n == BP_BATCH_RECS && i + 1 == b->n)
				compensator__batch_last(d->comp);
			err = decoder__feed(d, &b->r[i], sizeof(b->r[i]));
			if (err)
				return err;
		}
		return 0;
	}
	d->s->nrecords++;
	ts = dec_rel_ts(d, h->ts);
	if (d->comp)
		ts = compensator__ts(d->comp, rec, ts);
	if (ts > d->last_ts)
		d->last_ts = ts;

	if (h->type >= BP_REC_MAX || size < rec_min_size[h->type])
		return -EINVAL;
	switch (h->type) {
	case BP_REC_ENTRY:
	case BP_REC_ENTRY_ARGS:
	case BP_REC_EXIT:
	case BP_REC_EXIT_RET:
		return dec_on_call(d, rec, size, ts);
	case BP_REC_FORK:
	case BP_REC_TASK_EXIT:
	case BP_REC_COMM:
		return dec_on_task(d, rec, ts);
	case BP_REC_EXEC:
		err = dec_on_exec(d, rec, ts);
		/* even after a sink's error: a stopped process must be let go */
		if (((const struct bp_rec_exec *)rec)->stopped)
			dec_hold(d, rec, size);
		return err;
	case BP_REC_DLOPEN:
		dec_hold(d, rec, size);
		return 0;
	case BP_REC_SAMPLE:
	case BP_REC_USTACK:
		return dec_on_sample(d, rec, size, ts);
	case BP_REC_WAKEUP:
		return dec_on_wakeup(d, rec, ts);
	case BP_REC_USDT:
		return dec_on_usdt(d, rec, ts);
	case BP_REC_PY:
		return dec_on_py(d, rec, ts);
	case BP_REC_PYCODE:
		return dec_on_pycode(d, rec);
	case BP_REC_PYSTACK:
		return dec_on_pystack(d, rec, size, ts);
	case BP_REC_SWITCH:
		return dec_on_switch(d, rec, ts);
	case BP_REC_REARM:
		return dec_on_rearm(d, rec, ts);
	case BP_REC_UNWIND:
		return dec_on_unwind(d, rec, ts);
	default:
		return -EINVAL;
	}
}
