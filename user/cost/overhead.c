// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Probe cost estimate and the slow-probe warning (see overhead.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "overhead.h"
#include "probes/trace.h"
#include "probes/share.h"
#include "base/log.h"
#include "base/util.h"

/* One traced process: its probes' cost and its CPU time as last seen alive. */
struct ov_proc {
	uint32_t pid;		/* 0: an empty slot */
	double cost_ns;
	uint64_t cpu_first, cpu_last;	/* ns of its live threads, first and last reading */
	bool seen;
};

struct overhead {
	const struct bp_session *s;
	struct probe_costs pc;
	double scale;		/* overhead__scale(): pc's figures times this */
	double measured;	/* overhead__set_measured(): the whole costs times this too */
	struct share *sh;	/* overhead__measure(): the probes' share, sampled */
	struct shared_maps later;	/* ... to start it with once the targets ran a while */
	bool share_later;
	uint64_t *calls;	/* per function id */
	size_t cap;
	uint64_t path_calls[PP_NPATHS];
	double cost_ns;
	uint64_t usdt_hits;	/* of the annotations and -U probes (overhead__usdt_hits()) */
	double usdt_ns;		/* of cost_ns: theirs */
	double attach_ns, relink_ns;	/* overhead__add_wait() */
	bool warned;
	bool governed;		/* --max-overhead drops functions: no advice to */
	int pid;		/* the target named in the messages, 0: none (-a) */
	struct tracer *tr;	/* the traced processes' CPU time (tracer__targets_cpu_ns) */
	uint64_t cpu_ns;	/* their CPU time since the recording began, at the last look */
	uint64_t cpu0;		/* their CPU time when the recording began (attach: they ran before) */
	uint64_t wait_ns, wait0;	/* their time waiting for a CPU: since then, and then */
	uint64_t looked;	/* when (session ns) */
	size_t nprocs_now;	/* traced processes alive at the last look */
	struct ov_proc *procs;	/* open addressing by pid */
	size_t proc_cap, nproc;
	size_t last_proc;	/* the slot of the last event's process */
	bool started;		/* the first reading is done */
	/* the slowdown over the last OVERHEAD_RECENT_NS: from these at its start */
	double recent, recent_cost0;
	uint64_t recent_cpu0, recent_at;
};

static void read_cpu(struct overhead *ov);
static double said_ns(const struct overhead *ov, double base);

void overhead__set_target(struct overhead *ov, int pid, struct tracer *tr)
{
	if (!ov)
		return;
	ov->pid = pid;
	ov->tr = tr;
	ov->cpu_ns = 0;
	ov->cpu0 = ov->wait0 = 0;
	read_cpu(ov);
	ov->cpu0 = ov->cpu_ns;
	ov->wait0 = ov->wait_ns;
	ov->cpu_ns = ov->wait_ns = 0;
	ov->started = true;
}

static struct ov_proc *proc_slot(struct overhead *ov, uint32_t pid)
{
	size_t i;

	if (ov->proc_cap && ov->procs[ov->last_proc].pid == pid)
		return &ov->procs[ov->last_proc];
	if ((ov->nproc + 1) * 2 > ov->proc_cap) {
		struct ov_proc *old = ov->procs;
		size_t oc = ov->proc_cap, k;

		ov->proc_cap = oc ? oc * 2 : 64;
		ov->procs = xcalloc(ov->proc_cap, sizeof(*ov->procs));
		for (k = 0; k < oc; k++) {
			if (!old[k].pid)
				continue;
			for (i = old[k].pid * 2654435761u & (ov->proc_cap - 1); ov->procs[i].pid;
			     i = (i + 1) & (ov->proc_cap - 1))
				;
			ov->procs[i] = old[k];
		}
		free(old);
	}
	for (i = pid * 2654435761u & (ov->proc_cap - 1); ov->procs[i].pid && ov->procs[i].pid != pid;
	     i = (i + 1) & (ov->proc_cap - 1))
		;
	if (!ov->procs[i].pid) {
		ov->procs[i].pid = pid;
		ov->nproc++;
	}
	ov->last_proc = i;
	return &ov->procs[i];
}

static void note_proc(uint32_t pid, uint64_t ns, void *ctx)
{
	struct overhead *ov = ctx;
	struct ov_proc *p = proc_slot(ov, pid);

	if (!p->seen)
		p->cpu_first = ov->started ? 0 : ns;	/* born during the recording: from 0 */
	p->seen = true;
	p->cpu_last = ns;
}

/* The CPU time of every traced process since the recording began (ns), as of now. */
static void read_cpu(struct overhead *ov)
{
	uint64_t v, w = 0;

	if (!ov->pid || !ov->tr)
		return;
	v = tracer__targets_cpu_ns(ov->tr, &ov->nprocs_now, &w, note_proc, ov);
	ov->cpu_ns = v > ov->cpu0 ? v - ov->cpu0 : 0;
	ov->wait_ns = w > ov->wait0 ? w - ov->wait0 : 0;
}

double overhead__factor(double cost, double base)
{
	double untraced = base - cost;

	if (base <= 0)
		return 0;
	/* the estimate is calls x a measured cost: it can pass what the CPU time allows */
	if (untraced < base * OVERHEAD_MIN_UNTRACED)
		untraced = base * OVERHEAD_MIN_UNTRACED;
	return cost / untraced;
}

/* What the cost is held against: the traced processes' CPU time when known, else the elapsed time. */
static double base_ns(struct overhead *ov, uint64_t now)
{
	read_cpu(ov);
	return ov->cpu_ns ? (double)ov->cpu_ns : (double)now;
}

struct overhead *overhead__new(const struct bp_session *s)
{
	struct overhead *ov = xcalloc(1, sizeof(*ov));

	ov->s = s;
	ov->scale = 1;
	ov->measured = 1;
	calibrate__run(&ov->pc, false);
	return ov;
}

void overhead__free(struct overhead *ov)
{
	calibrate__join();
	if (!ov)
		return;
	share__free(ov->sh);
	free(ov->calls);
	free(ov->procs);
	free(ov);
}

const struct probe_costs *overhead__costs(const struct overhead *ov)
{
	return &ov->pc;
}

double overhead__cost_ns(const struct overhead *ov)
{
	return ov ? ov->cost_ns : 0;
}

void overhead__event(struct overhead *ov, const struct bp_event *ev)
{
	const struct bp_func *f;
	enum probe_path_kind k;
	double cost;
	uint32_t id;
	unsigned hits;

	if (!ov || (ev->kind != BP_EV_CALL && ev->kind != BP_EV_ANNOT))
		return;
	id = ev->kind == BP_EV_CALL ? ev->call.func : UINT32_MAX;
	f = id < ov->s->nfuncs ? &ov->s->funcs[id] : NULL;
	hits = overhead__usdt_hits(ev, f);
	if (hits) {
		cost = hits * overhead__annot_cost(ov);
		ov->usdt_hits += hits;
		ov->usdt_ns += cost;
		ov->cost_ns += cost;
		proc_slot(ov, ev->kind == BP_EV_CALL ? ev->call.pid : ev->annot.pid)->cost_ns += cost;
		return;
	}
	if (!f)
		return;
	if (f->flags & (BP_FUNC_SAMPLED | BP_FUNC_KERNEL | BP_FUNC_UNKNOWN | BP_FUNC_MARKER |
			BP_FUNC_SPAN))
		return;
	if (id >= ov->cap) {
		size_t cap = ov->cap ? ov->cap : 256;

		while (cap <= id)
			cap *= 2;
		ov->calls = xrealloc(ov->calls, cap * sizeof(*ov->calls));
		memset(ov->calls + ov->cap, 0, (cap - ov->cap) * sizeof(*ov->calls));
		ov->cap = cap;
	}
	ov->calls[id]++;
	k = calibrate__path(f);
	ov->path_calls[k]++;
	cost = overhead__call_cost(ov, f);
	ov->cost_ns += cost;
	proc_slot(ov, ev->call.pid)->cost_ns += cost;
}

/*
 * A hit of the program's annotations (bpfprof.h: marks, events, the gate)
 * or of a -U probe, a span's two: USDT probes on a nop, emulated, whose
 * program reads the arguments and the label and writes a record (half an
 * emulated call, counted before, was a quarter of what hotmarks' cost).
 */
unsigned overhead__usdt_hits(const struct bp_event *ev, const struct bp_func *f)
{
	if (ev->kind == BP_EV_ANNOT)
		return ev->annot.kind >= BP_ANNOT_MARK && ev->annot.kind <= BP_ANNOT_PROBE;
	return ev->kind == BP_EV_CALL && f && f->flags & BP_FUNC_SPAN ? 2 : 0;
}

double overhead__annot_cost(const struct overhead *ov)
{
	return ov->pc.annot_ns * ov->scale * ov->measured;
}

double overhead__path_cost(const struct overhead *ov, enum probe_path_kind k)
{
	return ov->pc.total_ns[k] * ov->scale * ov->measured;
}

void overhead__scale(struct overhead *ov, double k)
{
	if (ov && k > 0 && k <= 1)
		ov->scale = k;
}

double overhead__scale_of(const struct overhead *ov)
{
	return ov ? ov->scale : 1;
}

void overhead__set_measured(struct overhead *ov, double k)
{
	if (ov && k > 0)
		ov->measured = k;
}

double overhead__measured_of(const struct overhead *ov)
{
	return ov ? ov->measured : 1;
}

void overhead__measure(struct overhead *ov, const struct shared_maps *maps, bool now)
{
	if (!ov || ov->sh)
		return;
	if (now) {
		share__new(maps, &ov->sh);	/* best effort: the calibration alone without it */
		return;
	}
	ov->later = *maps;
	ov->share_later = true;
}

uint64_t overhead__samples(const struct overhead *ov, uint64_t *probe)
{
	return share__read(ov ? ov->sh : NULL, probe);
}

void overhead__add_cost(struct overhead *ov, double ns)
{
	ov->cost_ns += ns;
}

void overhead__add_wait(struct overhead *ov, double attach_ns, double relink_ns)
{
	if (!ov)
		return;
	ov->attach_ns += attach_ns;
	ov->relink_ns += relink_ns;
}

double overhead__call_cost(const struct overhead *ov, const struct bp_func *f)
{
	/* an entry-only function (Go) pays the entry probe only: about half */
	return ov->pc.total_ns[calibrate__path(f)] * ov->scale * ov->measured *
	       (f->flags & BP_FUNC_ENTRY_ONLY ? 0.5 : 1);
}

double overhead__inside_cost(const struct overhead *ov, const struct bp_func *f)
{
	return ov->pc.inside_ns[calibrate__path(f)] * ov->scale *
	       (f->flags & BP_FUNC_ENTRY_ONLY ? 0.5 : 1);
}

uint64_t overhead__cpu_ns(struct overhead *ov)
{
	read_cpu(ov);
	return ov->cpu_ns;
}

uint64_t overhead__wait_ns(const struct overhead *ov)
{
	return ov ? ov->wait_ns : 0;
}

void overhead__slowdown(const struct overhead *ov, double *total, double *recent)
{
	*total = *recent = 0;
	if (!ov || !ov->cpu_ns)
		return;
	*total = 1 + overhead__factor(said_ns(ov, (double)ov->cpu_ns), (double)ov->cpu_ns);
	*recent = ov->recent;
}

int overhead__target(const struct overhead *ov)
{
	return ov->pid;
}

void overhead__set_governed(struct overhead *ov)
{
	ov->governed = true;
}

/* The n functions with the largest probe cost so far, into top[] (ids); returns how many. */
static size_t costliest(const struct overhead *ov, uint32_t *top, size_t n)
{
	double best[8] = { 0 };
	size_t i, j, k, got = 0;

	if (n > 8)
		n = 8;
	for (i = 0; i < ov->cap && i < ov->s->nfuncs; i++) {
		double c;

		if (!ov->calls[i])
			continue;
		c = ov->calls[i] * ov->pc.total_ns[calibrate__path(&ov->s->funcs[i])];
		for (j = 0; j < got && best[j] >= c; j++)
			;
		if (j == n)
			continue;
		if (got < n)
			got++;
		for (k = got - 1; k > j; k--) {
			best[k] = best[k - 1];
			top[k] = top[k - 1];
		}
		best[j] = c;
		top[j] = (uint32_t)i;
	}
	return got;
}

const char *overhead__target_name(const struct overhead *ov)
{
	size_t i;

	for (i = 0; ov->pid && i < ov->s->nprocs; i++)
		if (ov->s->procs[i].pid == (uint32_t)ov->pid && ov->s->procs[i].name &&
		    ov->s->procs[i].name[0])
			return ov->s->procs[i].name;
	return ov->pid ? "the traced program" : "the traced processes";
}

/*
 * "the probes made make (and 41 other processes) about 58x slower": the
 * slowdown as the user feels it, 1 + probe time / the time without them.
 */
/* What the targets waited for besides the probes: held at exec or dlopen, re-links. */
static double waits(const struct overhead *ov)
{
	return ov->attach_ns + ov->relink_ns;
}

/*
 * The slowdown with the waits counted, for a probe cost of `cost`: the
 * targets took their CPU time plus the waits, against their CPU time less
 * the probes' untraced.
 */
static double factor_all(const struct overhead *ov, double base, double cost)
{
	return overhead__factor(cost + waits(ov), base + waits(ov));
}

/*
 * Past 3x the factor rests on a small difference: the targets' own time is
 * their CPU time less the probes', which took two thirds of it or more.
 * The calibration times the probes in a tight loop (caches warm); in a
 * program with its own working set they cost more: sort -n of 200,000
 * lines, 10.4 M calls, read 6x slower from 1.25 us a call, and was 60-70x
 * slower (0.21 s of CPU untraced, 15.7 s traced: 1.48 us a call).  The
 * sentence then says how far 10% more per call would move it.
 */
#define SLOWER_LEN	320
#define SLOWER_UNSURE	3.0

/*
 * The probe time measured in the targets (probes/share.h): the share of
 * their samples on the probe path, of their CPU time; -1 with fewer than
 * OVERHEAD_SAMPLES_MIN samples or without their CPU time (-a).  *n: the
 * samples.
 */
static double sampled_ns(const struct overhead *ov, double base, uint64_t *n)
{
	uint64_t probe;

	*n = overhead__samples(ov, &probe);
	if (*n < OVERHEAD_SAMPLES_MIN || !ov->cpu_ns || base <= 0)
		return -1;
	return (double)probe / (double)*n * base;
}

/* The probe time said: the one measured in the targets where it can be, else the estimate. */
static double said_ns(const struct overhead *ov, double base)
{
	uint64_t n;
	double m = sampled_ns(ov, base, &n);

	return m >= 0 ? m : ov->cost_ns;
}

static void what_slower(const struct overhead *ov, double base, char *buf, size_t len)
{
	uint64_t nsamples;
	double m = sampled_ns(ov, base, &nsamples), w = waits(ov);
	bool sampled = m >= 0;
	double cost = sampled ? m : ov->cost_ns, x = 1 + factor_all(ov, base, cost);
	size_t others = ov->nproc > 1 ? ov->nproc - 1 : 0, n;
	/*
	 * A sample the timer took as the thread left a probe for its own
	 * code (the interrupt held until then) lands in that code: a few
	 * percent of the probes' samples (hottiny's tiny: 3% of them in a
	 * body of a few instructions).  Past OVERHEAD_SAMPLED_FLOOR of the
	 * CPU time they are much of what is left, and the factor a floor.
	 */
	bool floor = cost > base * (1 - OVERHEAD_MIN_UNTRACED) ||
		     (sampled && cost > base * OVERHEAD_SAMPLED_FLOOR);
	char more[64] = "", left[32];

	if (others)
		snprintf(more, sizeof(more), " (and %zu other process%s)", others,
			 others == 1 ? "" : "es");
	n = (size_t)snprintf(buf, len, "the probes made %s%s %s %.*fx slower",
			     overhead__target_name(ov), more, floor ? "at least" : "about",
			     x < 10 ? 1 : 0, x);
	/* the probes' share alone: waits (held at exec) are measured, not estimated */
	/* measured: the samples say it, no calibration to be off */
	if (sampled && n < len)
		snprintf(buf + n, len - n, ", sampled: %.0f%% of %s CPU time on the probe path "
			 "(%llu samples at %d Hz)", 100 * cost / base, others ? "their" : "its",
			 (unsigned long long)nsamples, SHARE_HZ);
	if (floor || sampled || 1 + overhead__factor(cost, base) < SLOWER_UNSURE || n >= len)
		return;
	snprintf(left, sizeof(left), "%.0fx", 1 + factor_all(ov, base, 1.1 * ov->cost_ns));
	snprintf(buf + n, len - n, ", perhaps far more (the probes took %.0f%% of %s %s time, %s own "
		 "time is the rest: at 10%% more a call, %s)", 100 * ov->cost_ns / base,
		 others ? "their" : "its", ov->cpu_ns ? "CPU" : "elapsed", others ? "their" : "its",
		 1.1 * ov->cost_ns + w > (base + w) * (1 - OVERHEAD_MIN_UNTRACED) ?
		 "nothing would be left" : left);
}

/*
 * Python calls: the probes sit in the interpreter loop, so every Python
 * call fires them, selected or not (-F py: filters in the decoder); only
 * sampling takes them away.
 */
static void advise_python(struct overhead *ov, uint64_t now, double base, const char *when,
			  uint64_t total, const char *names, const char *excl)
{
	char slower[SLOWER_LEN];

	what_slower(ov, base, slower, sizeof(slower));
	p_warn("%s %s (estimate: %.3g s of probe time in %.3g s of %s time; %.0f calls/s, "
	       "%.0f%% of them Python calls at %.0f ns per call, measured here%s); the costliest: "
	       "%s.  Profile hot, small Python functions by sampling instead: --sample (no call "
	       "probes), or let --max-overhead PERCENT (e.g. 100: at most twice as slow) stop "
	       "recording the costliest.  Every Python call fires the probes whatever -F py: "
	       "selects; a narrower selection (%s, or -F 'py:FILE:GLOB') only makes the trace "
	       "smaller", when, slower, ov->cost_ns / 1e9, base / 1e9, ov->cpu_ns ? "CPU" : "elapsed",
	       total / ((double)now / 1e9),
	       total ? 100.0 * ov->path_calls[PP_PYTHON] / total : 0.0, ov->pc.total_ns[PP_PYTHON],
	       ov->pc.measured ? "" : " -- not measured: the development VM's figures", names, excl);
}

/* The program's annotations and -U probes: no function to leave out, no drop takes them away. */
static void advise_usdt(struct overhead *ov, double base, const char *when)
{
	char slower[SLOWER_LEN];

	what_slower(ov, base, slower, sizeof(slower));
	p_warn("%s %s (estimate: %.3g s of probe time in %.3g s of %s time, %.3g s of it %llu hits "
	       "of the program's annotations (bpfprof.h) and USDT probes at %.0f ns each, measured "
	       "here%s).  Every hit traps, and neither -N nor --max-overhead takes them away: fewer "
	       "annotations in hot paths, or record --gated with BPFPROF_START()/BPFPROF_STOP() "
	       "around what you need", when, slower, ov->cost_ns / 1e9, base / 1e9,
	       ov->cpu_ns ? "CPU" : "elapsed", ov->usdt_ns / 1e9, (unsigned long long)ov->usdt_hits,
	       overhead__annot_cost(ov),
	       ov->pc.measured ? "" : " -- not measured: the development VM's figures");
}

static void advise(struct overhead *ov, uint64_t now, double base, const char *when)
{
	uint64_t total = 0;
	uint32_t top[3];
	size_t n, i;
	char names[512] = "", excl[512] = "", slower[SLOWER_LEN];
	int k;

	for (k = 0; k < PP_NPATHS; k++)
		total += ov->path_calls[k];
	n = costliest(ov, top, 3);
	for (i = 0; i < n; i++) {
		const struct bp_func *f = &ov->s->funcs[top[i]];
		double share = ov->calls[top[i]] * ov->pc.total_ns[calibrate__path(f)] / ov->cost_ns;

		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s (%.0f%%, %s)",
			 i ? ", " : "", f->name, 100 * share, calibrate__path_name(calibrate__path(f)));
		snprintf(excl + strlen(excl), sizeof(excl) - strlen(excl), "%s-N '%s%s'", i ? " " : "",
			 f->flags & BP_FUNC_PYTHON ? "py:" : "", f->name);
	}
	if (ov->path_calls[PP_PYTHON] * ov->pc.total_ns[PP_PYTHON] * 2 >= ov->cost_ns) {
		advise_python(ov, now, base, when, total, names, excl);
		return;
	}
	if (ov->usdt_ns * 2 >= ov->cost_ns) {
		advise_usdt(ov, base, when);
		return;
	}
	what_slower(ov, base, slower, sizeof(slower));
	p_warn("%s %s (estimate: %.3g s of probe time in %.3g s of %s time; %.0f calls/s, %.0f%% "
	       "of them single-stepped at %.0f ns per call, emulated %.0f ns, measured here%s); the "
	       "costliest: %s.  Trace fewer functions: %s, select what you need with -F, or let "
	       "--max-overhead PERCENT (e.g. 100: at most twice as slow) drop the functions measured "
	       "as their own probe cost as it goes",
	       when, slower, ov->cost_ns / 1e9, base / 1e9, ov->cpu_ns ? "CPU" : "elapsed",
	       total / ((double)now / 1e9),
	       total ? 100.0 * ov->path_calls[PP_SINGLE_STEP] / total : 0.0,
	       ov->pc.total_ns[PP_SINGLE_STEP], ov->pc.total_ns[PP_EMULATED],
	       ov->pc.measured ? "" : " -- not measured: the development VM's figures", names, excl);
}

void overhead__check(struct overhead *ov, uint64_t now)
{
	double base;

	if (!ov)
		return;
	/* a look every 100 ms keeps a recent figure for the end, when the targets are gone */
	if (now - ov->looked >= 100000000ull) {
		read_cpu(ov);
		ov->looked = now;
		if (ov->share_later && ov->cpu_ns >= OVERHEAD_SHARE_AFTER_NS) {
			ov->share_later = false;
			share__new(&ov->later, &ov->sh);
		}
		if (now - ov->recent_at >= OVERHEAD_RECENT_NS && ov->cpu_ns > ov->recent_cpu0) {
			ov->recent = 1 + overhead__factor(ov->cost_ns - ov->recent_cost0,
							  (double)(ov->cpu_ns - ov->recent_cpu0));
			ov->recent_cost0 = ov->cost_ns;
			ov->recent_cpu0 = ov->cpu_ns;
			ov->recent_at = now;
		}
	}
	if (ov->warned || ov->governed || now < OVERHEAD_WARN_AFTER_NS)
		return;
	if (ov->cpu_ns && (ov->cpu_ns < OVERHEAD_WARN_MIN_CPU_NS || ov->cost_ns > ov->cpu_ns))
		return;
	base = ov->cpu_ns ? (double)ov->cpu_ns : (double)now;
	if (ov->cost_ns * 2 < base)
		return;
	ov->warned = true;
	advise(ov, now, base, "slow probes:");
}

struct ov_name {
	const char *name;
	double cost, cpu;
	size_t n;
	bool unseen;		/* a process too short to read its CPU time */
};

static int by_cost(const void *a, const void *b)
{
	const struct ov_name *x = a, *y = b;

	return x->cost < y->cost ? 1 : x->cost > y->cost ? -1 : strcmp(x->name, y->name);
}

static const char *proc_name(const struct overhead *ov, uint32_t pid)
{
	size_t i;

	for (i = 0; i < ov->s->nprocs; i++)
		if (ov->s->procs[i].pid == pid && ov->s->procs[i].name)
			return ov->s->procs[i].name;
	return "?";
}

/* With more than one process: the slowdown of each program (its processes together). */
static void per_program(struct overhead *ov)
{
	struct ov_name *v = xcalloc(ov->nproc + 1, sizeof(*v));
	size_t n = 0, i, j, costly = 0;

	for (i = 0; i < ov->proc_cap; i++) {
		const struct ov_proc *p = &ov->procs[i];
		const char *name;

		if (!p->pid || !p->cost_ns)
			continue;
		costly++;
		name = proc_name(ov, p->pid);
		for (j = 0; j < n && strcmp(v[j].name, name); j++)
			;
		if (j == n)
			v[n++].name = name;
		v[j].cost += p->cost_ns;
		v[j].n++;
		if (p->seen && p->cpu_last > p->cpu_first)
			v[j].cpu += (double)(p->cpu_last - p->cpu_first);
		else
			v[j].unseen = true;
	}
	if (costly > 1) {
		qsort(v, n, sizeof(*v), by_cost);
		for (i = 0; i < n && i < 8; i++) {
			char label[96];

			snprintf(label, sizeof(label), "%s (%zu process%s)", v[i].name, v[i].n,
				 v[i].n == 1 ? "" : "es");
			if (v[i].cpu > v[i].cost)
				fprintf(stderr, "    %-32s about %.1fx slower (%.3g s of probe time)\n",
					label, 1 + overhead__factor(v[i].cost, v[i].cpu), v[i].cost / 1e9);
			else if (v[i].cpu > 0)	/* last read before it exited: short of the estimate */
				fprintf(stderr, "    %-32s %.3g s of probe time, %.3g s of CPU time read "
					"before it exited\n", label, v[i].cost / 1e9, v[i].cpu / 1e9);
			else
				fprintf(stderr, "    %-32s %.3g s of probe time (too short-lived to read "
					"its CPU time)\n", label, v[i].cost / 1e9);
		}
	}
	free(v);
}

void overhead__summary(struct overhead *ov, uint64_t duration)
{
	double base, f, cost;
	char slower[SLOWER_LEN];

	if (!ov || !duration)
		return;
	base = base_ns(ov, duration);	/* the last look when the targets are gone */
	cost = said_ns(ov, base);
	f = overhead__factor(cost, base);
	/* the warning came already, or it would have: say it once at the end */
	if (!ov->warned && !ov->governed && cost * 2 >= base) {
		ov->warned = true;
		advise(ov, duration, base, "slow probes:");
	} else if (f >= 0.1 || factor_all(ov, base, cost) >= 0.1 ||
		   (ov->governed && ov->cost_ns > 0)) {
		/* under --max-overhead, where the recording ended up is said even when small */
		char waits[192] = "";

		if (ov->attach_ns + ov->relink_ns > 0)
			snprintf(waits, sizeof(waits), ", plus %.3g s of processes held at exec or "
				 "dlopen for their symbols and probes and %.3g s re-linking groups for "
				 "drops",
				 ov->attach_ns / 1e9, ov->relink_ns / 1e9);
		what_slower(ov, base, slower, sizeof(slower));
		p_info("%s (estimate: %.3g s of probe time in %.3g s of %s time%s; calls x the probe "
		       "cost measured here)%s", slower, ov->cost_ns / 1e9, base / 1e9,
		       ov->cpu_ns ? "CPU" : "elapsed", waits,
		       !ov->governed && f >= 1 && ov->usdt_ns * 2 < ov->cost_ns ?
		       "; --max-overhead 100 would keep it under 2x" : "");
	} else {
		return;
	}
	per_program(ov);
}
