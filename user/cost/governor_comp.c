// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The overhead governor's compensation of inclusive times (governor.c counts
 * the calls): what a call would have lasted untraced, carried up from its
 * traced children by call id.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "governor.h"
#include "overhead.h"
#include "model/session.h"
#include "base/log.h"

#include "internal.h"

static uint64_t nest_hash(uint64_t id)
{
	return id * 0x9e3779b97f4a7c15ull >> 17;
}

/* Takes (and forgets) what id's finished traced children left: *out, *comp (see gov_nest); their number. */
uint64_t gov_nest_take(struct governor *g, uint64_t id, double *out, double *comp)
{
	size_t i, j, cap = g->nest_cap;
	uint64_t kids;

	*out = *comp = 0;
	if (!cap || !id)
		return 0;
	for (i = nest_hash(id) & (cap - 1); g->nest[i].id != id; i = (i + 1) & (cap - 1))
		if (!g->nest[i].id)
			return 0;
	*out = g->nest[i].out;
	*comp = g->nest[i].comp;
	kids = g->nest[i].kids;
	/* backward-shift deletion: no tombstones in a linear-probing table */
	for (j = (i + 1) & (cap - 1); g->nest[j].id; j = (j + 1) & (cap - 1)) {
		size_t h = nest_hash(g->nest[j].id) & (cap - 1);

		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			g->nest[i] = g->nest[j];
			i = j;
		}
	}
	/* the slot whole: a new call's entry there must not start from these figures */
	memset(&g->nest[i], 0, sizeof(g->nest[i]));
	g->nest_used--;
	return kids;
}

/* id's slot, a new one (id set, figures 0) if it has none: room is made first */
static struct gov_nest *nest_slot(struct governor *g, uint64_t id)
{
	size_t i, cap = g->nest_cap;

	if (g->nest_used >= GOV_NEST_MAX) {
		memset(g->nest, 0, cap * sizeof(*g->nest));
		g->nest_used = 0;
	}
	if (2 * (g->nest_used + 1) > cap) {
		struct gov_nest *old = g->nest;
		size_t k;

		g->nest_cap = cap ? 2 * cap : 1024;
		g->nest = xcalloc(g->nest_cap, sizeof(*g->nest));
		g->nest_used = 0;
		for (k = 0; k < cap; k++)
			if (old[k].id)
				*nest_slot(g, old[k].id) = old[k];
		free(old);
		cap = g->nest_cap;
	}
	for (i = nest_hash(id) & (cap - 1); g->nest[i].id && g->nest[i].id != id;
	     i = (i + 1) & (cap - 1))
		;
	if (!g->nest[i].id) {
		g->nest[i].id = id;
		g->nest_used++;
	}
	return &g->nest[i];
}

void gov_nest_add(struct governor *g, uint64_t id, double out, double comp)
{
	struct gov_nest *n;

	if (!id)
		return;
	n = nest_slot(g, id);
	n->out += out;
	n->comp += comp;
	n->kids++;
}

/*
 * What a call would have lasted untraced (ns), from its self time and its
 * traced children's (gov_nest_take()): its self time less its own probe's share
 * inside it and its children's probe cost outside their durations, never
 * under 0, plus the children's own compensated times.  The same as its
 * duration less every traced descendant's whole probe cost, except that no
 * call of the tree counts less than nothing: the calibration is made apart
 * from the target, at another moment (and cached for an hour), and one
 * made on a busier machine (1.38x the costs measured in nginx itself,
 * 2026-11-27) takes more out for each child than it cost.  A request
 * handler with ~200 traced calls under it then read below nothing, every
 * call's error summed, and went as what tells nothing (nginx's
 * ngx_http_process_request at --max-overhead 100); clamped call by call,
 * the error stays where the probes are, and the calls that do the work keep
 * it.  Under --compensate the decoder took the probes out of the clock
 * already: nothing more goes.
 */
double gov_comp_time(const struct governor *g, const struct bp_func *fn, uint64_t self,
			double out, double comp)
{
	double own = (double)self;

	if (!g->comp_clock)
		own -= out + (fn ? overhead__inside_cost(g->ov, fn) : 0);
	return (own > 0 ? own : 0) + comp;
}

/*
 * The calibration's figures are measured apart from the target, at another
 * moment, and cached for an hour: one made at a busier moment than now
 * took 1.38-1.7x what the target's own probes cost (redis, nginx; the
 * emulated path 1,528 ns against ~900 measured by --compensate in nginx).
 * The estimate then says more than twice the real slowdown and the governor
 * drops what it need not (redis's call and processCommand at
 * --max-overhead 100).  A leaf call's duration is its probe's inside cost
 * plus its body, never less: when even the shortest of them (the 5% quantile
 * of duration / calibrated inside cost, a server's tiny leaves) are under
 * the calibration, every figure is scaled down to what they show.  Never
 * up: a leaf's body can be long, its duration says nothing then.  Windows
 * with too few leaf calls (most tiny leaves dropped) keep the scale.
 */
void gov_leaf_note(struct governor *g, const struct bp_func *fn, uint64_t d)
{
	double cal, r;
	unsigned b;

	if (g->comp_clock || fn->flags & (BP_FUNC_PYTHON | BP_FUNC_ENTRY_ONLY))
		return;
	cal = overhead__inside_cost(g->ov, fn) / overhead__scale_of(g->ov);
	if (!(cal > 0))
		return;
	r = (double)d / cal;
	b = r < 2 ? (unsigned)(r * 32) : GOV_LEAF_BUCKETS - 1;	/* r < 2: b < 64 */
	g->leaf_r[b]++;
	g->leaf_n++;
}

void gov_leaf_scale(struct governor *g)
{
	uint64_t want = (uint64_t)(g->leaf_n * GOV_LEAF_QUANTILE) + 1, seen = 0;
	double k;
	unsigned b;

	if (g->leaf_n >= GOV_LEAF_MIN) {
		for (b = 0; b < GOV_LEAF_BUCKETS && seen + g->leaf_r[b] < want; b++)
			seen += g->leaf_r[b];
		k = (b + 1) / 32.0;	/* the bucket's upper edge: never below what they show */
		if (k < 1 && k != overhead__scale_of(g->ov)) {
			p_dbg("governor: probe costs x %.2f from now on (%llu leaf calls, the %.0f%% "
			      "shortest at most %.2f times their calibrated inside cost)", k,
			      (unsigned long long)g->leaf_n, 100 * GOV_LEAF_QUANTILE, k);
			overhead__scale(g->ov, k);
		} else if (k >= 1 && overhead__scale_of(g->ov) < 1) {
			p_dbg("governor: probe costs as calibrated again (%llu leaf calls)",
			      (unsigned long long)g->leaf_n);
			overhead__scale(g->ov, 1);
		}
	}
	memset(g->leaf_r, 0, sizeof(g->leaf_r));
	g->leaf_n = 0;
}
