// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The overhead governor: --max-overhead (see governor.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "governor.h"
#include "overhead.h"
#include "probes/trace.h"
#include "cpython/cpython.h"
#include "bpf/events.h"
#include "decode/decode.h"
#include "symbols/select.h"
#include "base/away.h"
#include "base/log.h"
#include "base/util.h"

#include "internal.h"

int governor__parse_limit(const char *arg, double *pct)
{
	char *end;
	double v;

	if (!strcmp(arg, "off") || !strcmp(arg, "none")) {
		*pct = 0;
		return 0;
	}
	v = strtod(arg, &end);
	if (end != arg && *end == '%')
		end++;
	if (end == arg || *end || !(v >= 0) || v > 1e6) {
		p_err("invalid --max-overhead '%s' (a percentage, e.g. 100 for at most twice as slow, "
		      "or off)", arg);
		return -EINVAL;
	}
	*pct = v;
	return 0;
}

void gov_grow(struct governor *g, size_t n)
{
	size_t cap = g->cap ? g->cap : 256;

	if (n <= g->cap)
		return;
	while (cap < n)
		cap *= 2;
#define GROW(a) do { \
		a = xrealloc(a, cap * sizeof(*a)); \
		memset(a + g->cap, 0, (cap - g->cap) * sizeof(*a)); \
	} while (0)
	GROW(g->group_of);
	GROW(g->calls);
	GROW(g->calls_w);
	GROW(g->dur_w);
	GROW(g->self_w);
	GROW(g->kids_w);
	GROW(g->out_w);
	GROW(g->hist_w);
	GROW(g->dropped);
	GROW(g->was_caller);
#undef GROW
	g->cap = cap;
}

struct governor *governor__new(double limit_pct, struct bp_session *s, struct tracer *tr,
			       struct overhead *ov, struct decoder *dec)
{
	struct governor *g = xcalloc(1, sizeof(*g));

	g->limit = limit_pct / 100.0;
	g->informs_below = 1;
	g->s = s;
	g->tr = tr;
	g->ov = ov;
	g->dec = dec;
	g->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (g->ncpu < 1)
		g->ncpu = 1;
	g->words = tracer__gov_groups(tr);
	g->dropped_fd = tracer__gov_dropped_fd(tr);
	g->dropped_hits_w = tracer__gov_dropped_hits(tr);
	g->ngroups = 1;
	/* never moved: a re-link makes groups while it holds one of them */
	g->groups = xcalloc(BP_GOV_GROUPS, sizeof(*g->groups));
	/* a link per warm function (the launched target, started already, keeps its own limit) */
	g->move_fds = (size_t)(fd_limit_raise(BP_GOV_GROUPS) * GOV_MOVE_FD_SHARE);
	g->busy = xcalloc(BP_GOV_GROUPS, sizeof(*g->busy));
	pthread_mutex_init(&g->lock, NULL);
	if (closer__start(&g->closer))
		p_dbg("governor: no closer process: old links are removed by threads");
	overhead__set_governed(ov);
	return g;
}

int governor__attach_module(struct governor *g, const struct probe_module *pm)
{
	size_t left = BP_GOV_GROUPS - g->ngroups, size = GOV_GROUP_SIZE, i, nref = 0;
	uint32_t file;
	uint64_t *refused, *ref_all;
	const char *path;
	int err = 0;

	if (!pm->n)
		return 0;
	/* keep half of the groups left for the images that come later (exec, dlopen) */
	if (left < 2)
		return tracer__attach_module(g->tr, g->s, pm);
	if (pm->n <= GOV_SINGLES_MAX && pm->n <= left / 2)
		size = 1;
	else if ((pm->n + size - 1) / size > left / 2)
		size = (pm->n + left / 2 - 1) / (left / 2);
	g->paths = xrealloc(g->paths, (g->npaths + 1) * sizeof(*g->paths));
	path = g->paths[g->npaths++] = xstrdup(pm->path);
	file = gov_file_of(g, path);
	refused = xcalloc(size, sizeof(*refused));
	ref_all = xcalloc(pm->n, sizeof(*ref_all));
	for (i = 0; i < pm->n && !err; i += size) {
		size_t n = pm->n - i < size ? pm->n - i : size, j, nr = 0;
		uint32_t gi = (uint32_t)g->ngroups;
		struct gov_group *grp;

		grp = &g->groups[gi];
		memset(grp, 0, sizeof(*grp));
		grp->path = path;
		grp->file = file;
		grp->entry_only = pm->entry_only;
		grp->n = n;
		grp->funcs = xcalloc(n, sizeof(*grp->funcs));
		grp->offsets = xcalloc(n, sizeof(*grp->offsets));
		for (j = 0; j < n; j++) {
			uint32_t f = (uint32_t)pm->cookies[i + j];

			grp->funcs[j] = f;
			grp->offsets[j] = pm->offsets[i + j];
			gov_grow(g, (size_t)f + 1);
			g->group_of[f] = gi;
		}
		g->ngroups++;
		g->files[file].nkept += n;
		/* generation 0: the group's word is 0 already */
		err = gov_link_group(g, gi, grp, 0, &grp->links, &grp->nlinks, refused, &nr);
		memcpy(ref_all + nref, refused, nr * sizeof(*refused));
		nref += nr;
	}
	if (!err)
		tracer__warn_refused(g->s, pm->path, ref_all, nref);
	free(refused);
	free(ref_all);
	return err;
}

int governor__attach_set(struct governor *g, const struct probe_set *ps)
{
	size_t i;
	int err;

	for (i = 0; i < ps->nmods; i++) {
		err = governor__attach_module(g, &ps->mods[i]);
		if (err) {
			p_err("cannot attach %zu probes to %s: %s", ps->mods[i].n, ps->mods[i].path,
			      strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Counted and droppable: a function of a group, or a Python function with governor__set_python. */
static bool governed(const struct governor *g, uint32_t f)
{
	return g->group_of[f] || (g->py && !g->py_detached && f < g->s->nfuncs &&
				  g->s->funcs[f].flags & BP_FUNC_PYTHON);
}

static void py_drop_code(void *ctx, uint32_t pid, uint64_t code)
{
	struct governor *g = ctx;
	int err = pycap__drop_code(g->py, pid, code);

	if (err)
		p_dbg("governor: cannot drop Python code 0x%llx of pid %u: %s",
		      (unsigned long long)code, pid, strerror(-err));
}

void governor__set_python(struct governor *g, struct py_capture *pc)
{
	if (!g || g->py == pc || !pycap__traced(pc))
		return;
	g->py = pc;
	g->py_filtered_w = pycap__filtered(pc);
	decoder__set_py_drop(g->dec, py_drop_code, g);
}

void governor__set_sample_hook(struct governor *g, governor_sample_fn fn, void *ctx)
{
	if (!g)
		return;
	g->sample_fn = fn;
	g->sample_ctx = ctx;
}

/*
 * Every call is counted for compensation: what its probe cost its caller
 * outside its own duration, and its compensated inclusive time, are carried
 * to its caller's call (calls end before their callers).  A governed
 * function's call is also counted for the window, with its compensated
 * inclusive time (gov_comp_time()), about the time it would have taken
 * untraced: what its probe cost is weighed against.
 */
void governor__event(struct governor *g, const struct bp_event *ev)
{
	const struct bp_func *fn;
	double out, nested, comp;
	uint64_t d, kids;
	uint32_t f;
	unsigned b;

	if (!g)
		return;
	if (ev->kind != BP_EV_CALL) {
		/* a record read: bpfprof's decoding is spread over all of them, not the calls only */
		g->events += ev->kind == BP_EV_ANNOT;
		gov_usdt_note(g, ev, NULL);
		return;
	}
	g->events += 2;	/* its entry and its return, as the BPF side counts records lost */
	f = ev->call.func;
	fn = f < g->s->nfuncs ? &g->s->funcs[f] : NULL;
	gov_usdt_note(g, ev, fn);
	kids = gov_nest_take(g, ev->call.id, &out, &nested);
	comp = gov_comp_time(g, fn, ev->call.self, out, nested);
	if (fn && ev->call.parent_id)
		gov_nest_add(g, ev->call.parent_id, g->comp_clock ? 0 : overhead__call_cost(g->ov, fn) /
			 overhead__measured_of(g->ov) - overhead__inside_cost(g->ov, fn), comp);
	if (g->py && fn && fn->flags & BP_FUNC_PYTHON)
		gov_grow(g, (size_t)f + 1);
	if (f >= g->cap || !governed(g, f) || g->dropped[f])
		return;
	g->calls[f]++;
	g->calls_w[f]++;
	g->probe_w += fn ? overhead__call_cost(g->ov, fn) : 0;
	d = ev->call.end > ev->call.begin ? ev->call.end - ev->call.begin : 0;
	if (fn && d == ev->call.self)
		gov_leaf_note(g, fn, d);
	g->dur_w[f] += d;
	g->self_w[f] += ev->call.self;
	g->kids_w[f] += kids;
	g->out_w[f] += out;
	d = comp > 1 ? (uint64_t)comp : 0;
	if (!g->hist_w[f])
		g->hist_w[f] = xcalloc(GOV_HBUCKETS, sizeof(**g->hist_w));
	b = d ? 64 - __builtin_clzll(d) : 0;
	g->hist_w[f][b < GOV_HBUCKETS ? b : GOV_HBUCKETS - 1]++;
	if (g->group_of[f])
		gov_cold_event(g, f, ev->call.pid);
}

/*
 * The median compensated inclusive time of f's calls in the window (ns, the
 * middle of its log2 bucket): unlike the mean, not carried off by the few calls that
 * waited for a CPU on a loaded machine, or by one long one.
 */
static double median_w(const struct governor *g, uint32_t f)
{
	uint64_t half = (g->calls_w[f] + 1) / 2, seen = 0;
	unsigned b;

	if (!g->hist_w[f])
		return 0;
	for (b = 0; b < GOV_HBUCKETS; b++) {
		seen += g->hist_w[f][b];
		if (seen >= half)
			return b ? 0.75 * (double)(1ull << b) : 0;	/* [2^(b-1), 2^b) */
	}
	return (double)(1ull << (GOV_HBUCKETS - 1));
}

/*
 * The order of dropping: what costs next to nothing last; what informs (its
 * calls last longer than its probe: a coarse function, a request handler)
 * after everything that does not; within each, leaves before callers (a
 * leaf's probe distorts its caller's time too, the caller tells what the
 * leaf did as a part of it); then the most distorted, then the costlier.
 */
static int by_score(const void *a, const void *b)
{
	const struct gov_cand *x = a, *y = b;

	if (x->negligible != y->negligible)
		return x->negligible ? 1 : -1;
	if (x->informs != y->informs)
		return x->informs ? 1 : -1;
	if (x->caller != y->caller)
		return x->caller ? 1 : -1;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	/*
	 * Equal (the medians are log2 buckets): the shorter calls first, so
	 * that of a chain of nested callers the inner ones go before the
	 * outermost, the coarse unit that holds them all (nginx's per-request
	 * chain read 16-32 us for all twelve, and ngx_http_process_request
	 * went 9th by function id).
	 */
	if (x->mean != y->mean)
		return x->mean < y->mean ? -1 : 1;
	if (x->cost != y->cost)
		return x->cost < y->cost ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/*
 * Over the limit: which functions go.  Ranked by distortion, the probe's
 * cost per call against its calls' own (compensated) median inclusive time:
 * a function measured as about its own probe cost tells nothing and goes
 * first; a coarse one (a request handler, whose calls last many times its
 * probe cost) goes only when nothing else is left.  A caller ranks after
 * its leaves (its distortion counts half).  TAU's throttle (more than N
 * calls, under T us each) is the same idea with fixed N and T; here the
 * bar is this machine's measured probe cost, and only as much goes as the
 * limit needs.
 *
 * irr: what the Python probe's hits on dropped functions cost in the window
 * (they stay: the probe sits in the interpreter loop); going: what old links
 * of dropped native functions cost until their removal took them out (a
 * matter of seconds: counted in the estimate, but no reason to drop more).
 */
/*
 * What the calls decoded in the window stand for: records lost (the ring
 * buffer full while the decoder fell behind) held calls whose probes ran
 * all the same.  On make -j2 of 40 files more records were lost than read
 * (7.2 M against 6.4 M calls), and the governor, counting only what it
 * read, dropped half of what the limit needed.  Taken as a sample of the
 * same calls: every function's cost scaled by (read + lost) / read, in
 * the BPF side's units (an entry or a return, lost alone or in a batch).
 */
double gov_lost_scale(struct governor *g)
{
	uint64_t lost = tracer__lost(g->tr, NULL, 0);
	double read = (double)(g->events - g->events_w), gone = (double)(lost - g->lost_w), k;

	if (gone <= 0)
		return 1;
	k = read > 0 ? (read + gone) / read : GOV_LOST_SCALE_MAX;
	return k < GOV_LOST_SCALE_MAX ? k : GOV_LOST_SCALE_MAX;
}

/*
 * The window's candidates for dropping into c (their number returned), and
 * in sum what dropping every governed function would save in the window
 * (those whose group is being re-linked too), each call read standing for
 * `lost`: its probes, and bpfprof's decoding of it (own_ev per call read,
 * what the targets waited for of bpfprof's own CPU).  A Python function's
 * probe fires whether it is dropped or not (it sits in the interpreter
 * loop): its drop saves the decoding only, its probes' cost is sum->py_trap.
 */
struct gov_sums {
	double cost;		/* what dropping every candidate (and busy group) would save */
	double py_trap;		/* the Python candidates' probes: they stay when dropped */
	double dec;		/* of cost: the decoding of their calls */
};

static size_t candidates(struct governor *g, struct gov_cand *c, double lost, double own_ev,
			 struct gov_sums *sum)
{
	size_t nc = 0;
	uint32_t f;

	for (f = 0; f < g->cap && f < g->s->nfuncs; f++) {
		double per, mid, n, dec;

		if (!g->calls_w[f] || !governed(g, f) || g->dropped[f])
			continue;
		per = overhead__call_cost(g->ov, &g->s->funcs[f]);
		n = g->calls_w[f] * lost;	/* what the calls read stand for */
		dec = g->calls_w[f] * own_ev;
		if (g->group_of[f] && __atomic_load_n(&g->busy[g->group_of[f]], __ATOMIC_SEQ_CST)) {
			sum->cost += n * per + dec;	/* it costs, but its group is re-linked now */
			sum->dec += dec;
			continue;
		}
		mid = median_w(g, f);
		c[nc].func = f;
		/*
		 * Once a caller, always: when its callees are dropped its time
		 * still holds their work, and its calls still count the units
		 * (redis's call() around a command: alone it read as its own
		 * probe's cost and went as what tells nothing).
		 */
		c[nc].caller = g->self_w[f] + g->calls_w[f] < g->dur_w[f] || g->was_caller[f];
		g->was_caller[f] = c[nc].caller;
		/*
		 * A caller whose children are tiny traced helpers (a loop over
		 * parse_byte()) has its time in the helpers' bodies and the
		 * code between them, each less than the error of the
		 * calibration on their probes: comp_time() reads it as nothing
		 * while they are traced.  Its mean self time (which holds their
		 * probes' cost outside them) bounds it from below, so that it
		 * does not go with the helpers: once they are dropped, its own
		 * time is measured.  Less one child's outside cost a call: the
		 * error sums over many helpers, while a caller of one tiny
		 * callee (a wrapper) held nothing else, and its bound was that
		 * callee's probe, half of a dearer one's cost against its own
		 * (hottiny's warm() around cool(), single-stepped: it informed
		 * or not by the calibration's split of cool's probe).
		 */
		if (c[nc].caller) {
			uint64_t per_kid = g->kids_w[f] > g->calls_w[f] ? g->kids_w[f] : g->calls_w[f];
			double self = (double)g->self_w[f] / g->calls_w[f] -
				      overhead__inside_cost(g->ov, &g->s->funcs[f]) -
				      g->out_w[f] / (double)per_kid;

			if (self > mid)
				mid = self;
		}
		c[nc].mid = mid;
		c[nc].calls_w = g->calls_w[f];
		c[nc].mean = (double)g->dur_w[f] / g->calls_w[f];
		c[nc].cost = n * per + dec;
		c[nc].save = g->group_of[f] ? c[nc].cost : dec;
		if (!g->group_of[f])
			sum->py_trap += n * per;
		sum->dec += dec;
		/* of the calibration: the measured excess is no part of the durations (see internal.h) */
		c[nc].distortion = per / overhead__measured_of(g->ov) / (mid > 1 ? mid : 1);
		c[nc].score = c[nc].distortion;
		/*
		 * A caller informs at up to twice its probe's cost: its calls
		 * hold its traced callees' and say how often and how long the
		 * whole (redis's call(), ~0.8 us untraced against a ~0.9 us
		 * probe: one command each; with its distortion alone it went
		 * as what tells nothing at --max-overhead 100).
		 */
		c[nc].informs = c[nc].distortion * (c[nc].caller ? GOV_CALLER_WEIGHT : 1) <
				g->informs_below;
		sum->cost += c[nc++].save;
	}
	return nc;
}

/*
 * The drops of a decision over the limit, in the ranking's order: once
 * over, everything that tells nothing goes at once (its calls are measured
 * as about their probe's own cost), not just as much as the limit needs:
 * every round of drops re-links groups and waits for their old links'
 * removal, seconds on a loaded machine, during which the target runs at
 * the full cost.  What informs goes only as the limit needs, and not when
 * its drop would save nothing (a Python function's probe stays).  Past the
 * limit whatever goes (futile), or not known (unsure): only what tells
 * nothing.  Returns how many of c were looked at (c[0..i)).
 */
static size_t pick_drops(struct governor *g, struct gov_cand *c, size_t nc, double *cost,
			 double allowed, bool only_nothing, size_t *ndrop, size_t *npy)
{
	size_t i;

	for (i = 0; i < nc && (*cost > allowed || (!c[i].informs && !c[i].negligible)); i++) {
		if (only_nothing && c[i].informs)
			continue;
		if (c[i].informs && c[i].save <= 0)
			continue;
		g->dropped[c[i].func] = 1;
		g->ndropped++;
		gov_kept(g, c[i].func, -1);
		*cost -= c[i].save;
		*npy += !g->group_of[c[i].func];
		(*ndrop)++;
	}
	return i;
}

/*
 * candidates(), their costs from the probe time measured in the targets
 * where the samples tell (gov_measured_k()), in place of the calibration's;
 * *irr and *going scaled alike.
 */
static size_t measured_candidates(struct governor *g, struct gov_cand *c, double base,
				  double lost, double own_ev, struct gov_sums *sum, double *irr,
				  double *going)
{
	size_t nc = candidates(g, c, lost, own_ev, sum);
	double k = gov_measured_k(g, base, sum->cost - sum->dec + sum->py_trap + *irr + *going);

	if (k == 1)
		return nc;
	overhead__set_measured(g->ov, overhead__measured_of(g->ov) * k);
	*irr *= k;
	*going *= k;
	memset(sum, 0, sizeof(*sum));
	return candidates(g, c, lost, own_ev, sum);
}

/*
 * Over the limit whatever goes: CPython's probes alone pass it, however
 * many Python functions are dropped, and they go now, not once the dropped
 * ones' hits have been seen to pass it, windows later.  Not when the
 * program's annotations are most of what no drop takes away (a Python
 * loop calling a C library's annotated function: Python's probes went,
 * blamed, and the annotations stayed what they cost).  irr: scaled as the
 * window's irr_w.
 */
static bool py_fallback_due(const struct governor *g, double irr, double py_trap)
{
	double usdt = g->irr_w > 0 ? irr * g->usdt_w / g->irr_w : 0;

	return g->py && !g->py_detached && irr - usdt + py_trap > usdt;
}

bool gov_decide(struct governor *g, uint64_t now, double base, double irr, double going)
{
	struct gov_sums sum = { 0 };
	struct gov_cand *c, *cold;
	double cost, allowed, factor, said, untraced, window_s = (now - g->w_start) / 1e9;
	double lost = gov_lost_scale(g), own = gov_own_charged(g, base, now), fixed, own_ev;
	uint64_t read = (g->events - g->events_w) / 2;
	size_t nc, i, ndrop = 0, npy = 0, ncold;
	bool futile, unsure, unknown, fallback, marginal;
	double all, install;

	/*
	 * bpfprof's own CPU the targets waited for is in their time, as if they
	 * had run it, and in the cost, spread over the records read (a call
	 * is two, an annotation one: its share stays with what no drop takes
	 * away): base and cost both grow by it.
	 */
	g->own_w = own;
	own_ev = read ? own / (double)read : 0;
	c = xcalloc(g->cap ? g->cap : 1, sizeof(*c));
	g->informs_below = gov_storm_informs(g);
	nc = measured_candidates(g, c, base, lost, own_ev, &sum, &irr, &going);
	base += own;
	all = base;
	/* decided as if the links being removed were gone: their time out of the CPU time too */
	base = base - going > base * OVERHEAD_MIN_UNTRACED ? base - going : base * OVERHEAD_MIN_UNTRACED;
	cost = sum.cost;
	/*
	 * What no drop takes away: the Python probe's hits (on dropped
	 * functions, and on kept ones: their drop would not stop them), and
	 * the decoding of what is not governed.
	 */
	fixed = irr + sum.py_trap + (own > sum.dec ? own - sum.dec : 0);
	/*
	 * The breakpoints written into new processes (governor_cold.c): over
	 * the limit with them, the functions of their files never called go.
	 * What stays of them is said, but no reason to drop called functions:
	 * it is the files' that no process has ended yet, or what the called
	 * ones cost (their drop for it would save little).
	 */
	ncold = 0;
	cold = NULL;
	install = g->install_w;
	if (overhead__factor(cost + fixed + install, base) > g->limit && install > 0)
		install -= gov_sweep_cold(g, &cold, &ncold, base);
	factor = overhead__factor(cost + fixed, base);
	/*
	 * The cost that would keep the factor at the limit once the drops are
	 * made: the time the targets would take untraced stays what it is
	 * (base less every probe and what no drop takes away), the kept
	 * functions' cost and the fixed part against it at most the limit.
	 * (Before: kept / (base - kept) at most the limit, as if the dropped
	 * probes' time stayed in the targets' work: at nginx's first windows,
	 * 8.6x slower, that allowed 4x the cost, and ten rounds of drops
	 * followed, each a little over the limit again, the last ones taking
	 * the request handler, ranked last.)
	 */
	untraced = base - cost - fixed;
	unknown = untraced < base * OVERHEAD_MIN_UNTRACED;
	if (unknown)
		untraced = base * OVERHEAD_MIN_UNTRACED;
	allowed = g->limit * untraced - fixed;
	futile = allowed <= 0;
	gov_log_window(g, window_s, all, cost + fixed - irr, irr, going, lost, own);
	/*
	 * The probes took all the CPU time measured, or more: calls decoded
	 * late (bpfprof waited for a CPU) counted against a window they did
	 * not happen in, or a probe cost measured on a busier machine than
	 * now (a cost on the wall clock, against CPU time).  Once something
	 * was dropped, such a window decides at once all the same (waiting
	 * for a clearer one let a hot function of a compiler's new phase run
	 * 1.3 s at 50-120x), but drops only what tells nothing.
	 */
	unsure = g->ndropped && cost >= base * (1 - OVERHEAD_MIN_UNTRACED);
	/* what is said: the estimate against all the CPU time measured */
	said = overhead__factor(cost + fixed + going + install, all);
	fallback = factor > g->limit && futile && py_fallback_due(g, irr, sum.py_trap);
	if (factor > g->limit && futile && !g->py_futile && !fallback)
		gov_say_futile(g, said);
	/* a job of its own, before the others: its groups only go (see governor_cold.c) */
	if (ncold)
		gov_relink_first(g, cold, ncold, window_s, said);
	else
		free(cold);
	/* in a storm the samples say it is over, whatever the estimate: what tells nothing goes */
	if ((factor <= g->limit && g->informs_below >= 1) || !nc) {
		if (!g->early_now)
			g->over_prev = factor > g->limit;
		free(c);
		if (fallback)
			gov_py_fallback(g, window_s, said);
		return true;
	}
	for (i = 0; i < nc; i++)
		c[i].negligible = c[i].cost < (cost + fixed - allowed) * GOV_NEGLIGIBLE ||
				  c[i].cost < untraced * GOV_SMALL_SHARE;
	qsort(c, nc, sizeof(*c), by_score);
	/* an early look is short (30-80 ms of CPU): what informs waits for a whole window */
	marginal = (factor <= g->limit * GOV_MARGIN && !g->over_prev) || g->early_now;
	if (!g->early_now)
		g->over_prev = true;
	/* before the fallback, only what tells nothing and costs is named, by its rates */
	i = pick_drops(g, c, nc, &cost, fallback ? cost : allowed,
		       futile || unsure || unknown || marginal, &ndrop, &npy);
	gov_log_ranking(g, c, nc, i, cost, allowed);
	if (ndrop) {
		/* announced once its groups are re-linked: the moment their new links took over */
		gov_relink(g, c, i, window_s, said, npy);
		gov_relink_step(g);
	} else {
		free(c);
	}
	if (fallback)
		gov_py_fallback(g, window_s, said);
	return true;
}

void governor__release(struct governor *g)
{
	size_t i;

	if (!g)
		return;
	gov_relink_abandon(g);
	pthread_mutex_lock(&g->lock);
	g->closing = true;
	pthread_mutex_unlock(&g->lock);
	if (g->relinks)
		p_dbg("governor: %zu drops re-linked %zu groups (%zu kept functions re-registered, "
		      "%zu of them moved to groups of their own) in %.3f s (%.3f s of it giving old "
		      "links to the closer), between the decoder's reads",
		      g->relinks, g->relink_groups, g->relink_kept, g->relink_moved,
		      g->relink_ns / 1e9, g->give_ns / 1e9);
	for (i = 1; i < g->ngroups; i++) {
		tracer__adopt_links(g->tr, g->groups[i].links, g->groups[i].nlinks,
				    g->groups[i].entry_only);
		free(g->groups[i].links);
		g->groups[i].links = NULL;
		g->groups[i].nlinks = 0;
	}
}

void governor__free(struct governor *g)
{
	size_t i;

	if (!g)
		return;
	gov_join_reaps(g, true);
	free(g->reaps);
	free(g->xs);
	free(g->jobs);
	closer__stop(&g->closer);
	free(g->busy);
	pthread_mutex_destroy(&g->lock);
	for (i = 1; i < g->ngroups; i++) {
		gov_destroy_links(g->groups[i].links, g->groups[i].nlinks);
		free(g->groups[i].funcs);
		free(g->groups[i].offsets);
	}
	free(g->groups);
	for (i = 0; i < g->npaths; i++)
		free(g->paths[i]);
	free(g->paths);
	for (i = 0; i < g->nfiles; i++)
		free(g->files[i].pids);
	free(g->files);
	free(g->group_of);
	free(g->calls);
	free(g->calls_w);
	free(g->dur_w);
	free(g->self_w);
	free(g->kids_w);
	free(g->out_w);
	for (i = 0; i < g->cap; i++)
		free(g->hist_w[i]);
	free(g->hist_w);
	free(g->dropped);
	free(g->was_caller);
	free(g->nest);
	free(g);
}