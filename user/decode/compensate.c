// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-thread virtual clocks without the probes' cost (see compensate.h). */
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "decode/compensate.h"
#include "bpf/events.h"
#include "base/log.h"

struct comp_thread {
	uint32_t tid;		/* 0: empty */
	double debt;		/* ns of probe work on this thread so far */
	uint64_t last;		/* its latest virtual time: the clock never runs back */
	bool seen;
};

#define COMP_MIN_STEP	10	/* ns between two events of a thread, at least */

struct compensator {
	const struct bp_session *s;
	struct comp_costs c;
	struct comp_thread *tab;	/* open addressing by tid */
	size_t cap, used;
	double debt;
};

struct compensator *compensator__new(const struct bp_session *s, const struct comp_costs *c)
{
	struct compensator *k = xcalloc(1, sizeof(*k));

	k->s = s;
	k->c = *c;
	k->cap = 64;
	k->tab = xcalloc(k->cap, sizeof(*k->tab));
	return k;
}

void compensator__free(struct compensator *k)
{
	if (!k)
		return;
	free(k->tab);
	free(k);
}

double compensator__debt_ns(const struct compensator *k)
{
	return k ? k->debt : 0;
}

static struct comp_thread *thread(struct compensator *k, uint32_t tid)
{
	size_t i;

	if ((k->used + 1) * 2 > k->cap) {
		struct comp_thread *old = k->tab;
		size_t n = k->cap, j;

		k->cap *= 2;
		k->tab = xcalloc(k->cap, sizeof(*k->tab));
		for (j = 0; j < n; j++) {
			if (!old[j].tid)
				continue;
			for (i = old[j].tid & (k->cap - 1); k->tab[i].tid; i = (i + 1) & (k->cap - 1))
				;
			k->tab[i] = old[j];
		}
		free(old);
	}
	for (i = tid & (k->cap - 1); k->tab[i].tid && k->tab[i].tid != tid; i = (i + 1) & (k->cap - 1))
		;
	if (!k->tab[i].tid) {
		k->tab[i].tid = tid;
		k->used++;
	}
	return &k->tab[i];
}

void compensator__forget(struct compensator *k, uint32_t tid)
{
	size_t mask, i, j;

	if (!k || !tid)
		return;
	mask = k->cap - 1;
	for (i = tid & mask; k->tab[i].tid && k->tab[i].tid != tid; i = (i + 1) & mask)
		;
	if (!k->tab[i].tid)
		return;
	/* backward-shift deletion: the probe chains behind it stay unbroken */
	for (j = i;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!k->tab[j].tid)
			break;
		home = k->tab[j].tid & mask;
		/* stays if its home is cyclically in (i, j] */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		k->tab[i] = k->tab[j];
		i = j;
	}
	memset(&k->tab[i], 0, sizeof(k->tab[i]));
	k->used--;
}

/* before: probe work of this hit that precedes its timestamp; after: the rest */
static uint64_t shift(struct compensator *k, struct comp_thread *t, uint64_t ts, double before,
		      double after)
{
	double v = (double)ts - t->debt - before;
	uint64_t vts = v > 0 ? (uint64_t)v : 0;

	/*
	 * An overestimate must not reorder a thread's events, nor make two of
	 * them one instant: a call and the next would touch, and nothing could
	 * tell a sibling from a child.  Events of a thread stay COMP_MIN_STEP
	 * apart (an empty function reports that much, its real cost is a few ns).
	 */
	if (t->seen && vts < t->last + COMP_MIN_STEP)
		vts = t->last + COMP_MIN_STEP;
	t->seen = true;
	t->last = vts;
	t->debt += before + after;
	k->debt += before + after;
	return vts;
}

uint64_t compensator__ts(struct compensator *k, const void *rec, uint64_t ts)
{
	const struct bp_rec_hdr *h = rec;
	const struct bp_rec_call *call = rec;
	struct comp_thread *t;
	unsigned p = 0;
	double in, out;

	switch (h->type) {
	case BP_REC_ENTRY:
	case BP_REC_ENTRY_ARGS:
	case BP_REC_EXIT:
	case BP_REC_EXIT_RET:
		if (call->func_id < k->s->nfuncs)
			p = k->c.path(&k->s->funcs[call->func_id]);
		if (p >= COMP_NPATHS)
			p = 0;
		in = k->c.inside_ns[p];
		out = k->c.total_ns[p] - in;
		t = thread(k, (uint32_t)h->pid_tgid);
		if (h->type == BP_REC_ENTRY || h->type == BP_REC_ENTRY_ARGS)
			return shift(k, t, ts, out / 2, in / 2);
		return shift(k, t, ts, in / 2, out / 2);
	case BP_REC_PY:
	case BP_REC_USDT:
		/*
		 * One probe hit: a Python call's start or end is half of its
		 * measured cost; a USDT hit (bpfprof.h's: a 1-byte nop,
		 * emulated) half an emulated call's
		 */
		p = h->type == BP_REC_PY && k->c.total_ns[COMP_PATH_PYTHON] > 0 ? COMP_PATH_PYTHON : 0;
		t = thread(k, (uint32_t)h->pid_tgid);
		return shift(k, t, ts, k->c.total_ns[p] / 4, k->c.total_ns[p] / 4);
	case BP_REC_SAMPLE:
	case BP_REC_USTACK:
	case BP_REC_SWITCH:
	case BP_REC_WAKEUP:	/* from the context of h.pid_tgid: the waker, or the wakee at its run */
	case BP_REC_UNWIND:
	case BP_REC_REARM:
	case BP_REC_TASK_EXIT:
		t = thread(k, (uint32_t)h->pid_tgid);
		return shift(k, t, ts, 0, 0);
	default:
		return ts;	/* process-wide or cross-thread: the real clock */
	}
}
