// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Probe cost estimate and the slow-probe warning (see overhead.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture/overhead.h"
#include "decode/compensate.h"
#include "decode/decode.h"
#include "base/log.h"
#include "base/util.h"

struct overhead {
	const struct bp_session *s;
	struct probe_costs pc;
	uint64_t *calls;	/* per function id */
	size_t cap;
	uint64_t path_calls[PP_NPATHS];
	double cost_ns;
	bool warned;
	bool governed;		/* --max-overhead drops functions: no advice to */
	int pid;		/* the target whose CPU time counts, 0: none */
	uint64_t cpu_ns;	/* its CPU time since the recording began, at the last look */
	uint64_t cpu0;		/* its CPU time when the recording began (attach: it ran before) */
	uint64_t looked;	/* when (session ns) */
};

static void read_cpu(struct overhead *ov);

void overhead__set_target(struct overhead *ov, int pid)
{
	if (!ov)
		return;
	ov->pid = pid;
	read_cpu(ov);
	ov->cpu0 = ov->cpu_ns;
	ov->cpu_ns = 0;
}

/* utime + stime of the whole process (all threads), while it can be read. */
static void read_cpu(struct overhead *ov)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	FILE *f;

	if (ov->pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/stat", ov->pid);
	f = fopen(path, "r");
	if (!f)
		return;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2) {
		uint64_t v = (ut + st) * (1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK));

		ov->cpu_ns = v > ov->cpu0 ? v - ov->cpu0 : 0;
	}
}

/* What the cost is held against: the target's CPU time when known, else the elapsed time. */
static double base_ns(struct overhead *ov, uint64_t now)
{
	read_cpu(ov);
	return ov->cpu_ns ? (double)ov->cpu_ns : (double)now;
}

struct overhead *overhead__new(const struct bp_session *s)
{
	struct overhead *ov = xcalloc(1, sizeof(*ov));

	ov->s = s;
	calibrate__run(&ov->pc, false);
	return ov;
}

void overhead__free(struct overhead *ov)
{
	calibrate__join();
	if (!ov)
		return;
	free(ov->calls);
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
	uint32_t id;

	if (!ov || ev->kind != BP_EV_CALL)
		return;
	id = ev->call.func;
	if (id >= ov->s->nfuncs)
		return;
	f = &ov->s->funcs[id];
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
	ov->cost_ns += overhead__call_cost(ov, f);
}

double overhead__call_cost(const struct overhead *ov, const struct bp_func *f)
{
	/* an entry-only function (Go) pays the entry probe only: about half */
	return ov->pc.total_ns[calibrate__path(f)] * (f->flags & BP_FUNC_ENTRY_ONLY ? 0.5 : 1);
}

uint64_t overhead__cpu_ns(struct overhead *ov)
{
	read_cpu(ov);
	return ov->cpu_ns;
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

/*
 * Python calls: the probes sit in the interpreter loop, so every Python
 * call fires them, selected or not (-F py: filters in the decoder); only
 * sampling takes them away.
 */
static void advise_python(struct overhead *ov, uint64_t now, double base, const char *when,
			  uint64_t total, const char *names, const char *excl)
{
	p_warn("%s the probes cost the traced program about %.0f%% of its %s time (%.0f calls/s, "
	       "%.0f%% of them Python calls at %.0f ns per call, measured here%s); the costliest: "
	       "%s.  Profile hot, small Python functions by sampling instead: --sample (no call "
	       "probes).  Every Python call fires the probes whatever -F py: selects; a narrower "
	       "selection (%s, or -F 'py:FILE:GLOB') only makes the trace smaller",
	       when, ov->cost_ns >= base ? 100.0 : 100.0 * ov->cost_ns / base,
	       ov->cpu_ns ? "CPU" : "elapsed", total / ((double)now / 1e9),
	       total ? 100.0 * ov->path_calls[PP_PYTHON] / total : 0.0, ov->pc.total_ns[PP_PYTHON],
	       ov->pc.measured ? "" : " -- not measured: the development VM's figures", names, excl);
}

static void advise(struct overhead *ov, uint64_t now, double base, const char *when)
{
	uint64_t total = 0;
	uint32_t top[3];
	size_t n, i, len = 0;
	char names[512] = "", excl[512] = "";
	int k;

	for (k = 0; k < PP_NPATHS; k++)
		total += ov->path_calls[k];
	n = costliest(ov, top, 3);
	for (i = 0; i < n; i++) {
		const struct bp_func *f = &ov->s->funcs[top[i]];
		double share = ov->calls[top[i]] * ov->pc.total_ns[calibrate__path(f)] / ov->cost_ns;

		len += snprintf(names + strlen(names), sizeof(names) - strlen(names),
				"%s%s (%.0f%%, %s)", i ? ", " : "", f->name, 100 * share,
				calibrate__path_name(calibrate__path(f)));
		snprintf(excl + strlen(excl), sizeof(excl) - strlen(excl), "%s-N '%s%s'", i ? " " : "",
			 f->flags & BP_FUNC_PYTHON ? "py:" : "", f->name);
	}
	(void)len;
	if (ov->path_calls[PP_PYTHON] * ov->pc.total_ns[PP_PYTHON] * 2 >= ov->cost_ns) {
		advise_python(ov, now, base, when, total, names, excl);
		return;
	}
	p_warn("%s the probes cost the traced program about %.0f%% of its %s time (%.0f calls/s, %.0f%% "
	       "of them single-stepped at %.0f ns per call, emulated %.0f ns, measured here%s); the "
	       "costliest: %s.  Trace fewer functions: %s, select what you need with -F, or let "
	       "--max-overhead PERCENT (e.g. 100: at most twice as slow) drop the costliest as it goes",
	       when, ov->cost_ns >= base ? 100.0 : 100.0 * ov->cost_ns / base, ov->cpu_ns ? "CPU" :
	       "elapsed", total / ((double)now / 1e9),
	       total ? 100.0 * ov->path_calls[PP_SINGLE_STEP] / total : 0.0,
	       ov->pc.total_ns[PP_SINGLE_STEP], ov->pc.total_ns[PP_EMULATED],
	       ov->pc.measured ? "" : " -- not measured: the development VM's figures", names, excl);
}

void overhead__check(struct overhead *ov, uint64_t now)
{
	double base;

	if (!ov)
		return;
	/* a look every 100 ms keeps a recent figure for the end, when the target is gone */
	if (now - ov->looked >= 100000000ull) {
		read_cpu(ov);
		ov->looked = now;
	}
	if (ov->warned || ov->governed || now < OVERHEAD_WARN_AFTER_NS)
		return;
	base = ov->cpu_ns ? (double)ov->cpu_ns : (double)now;
	if (ov->cost_ns * 2 < base)
		return;
	ov->warned = true;
	advise(ov, now, base, "slow probes:");
}

void overhead__summary(struct overhead *ov, uint64_t duration)
{
	double base;

	if (!ov || !duration)
		return;
	base = base_ns(ov, duration);	/* the last look when the target is gone */
	/* the warning came already, or it would have: say it once at the end */
	if (!ov->warned && !ov->governed && ov->cost_ns * 2 >= base) {
		ov->warned = true;
		advise(ov, duration, base, "slow probes:");
	} else if (ov->cost_ns * 10 >= base) {
		p_info("probes cost the traced program about %.0f%% of its %.3g s of %s time "
		       "(estimate: calls x the probe cost measured here)",
		       ov->cost_ns >= base ? 100.0 : 100.0 * ov->cost_ns / base, base / 1e9,
		       ov->cpu_ns ? "CPU" : "elapsed");
	}
}

static unsigned path_index(const struct bp_func *f)
{
	return (unsigned)calibrate__path(f);
}

void overhead__compensate(struct overhead *ov, struct decoder *dec, struct bp_session *s)
{
	struct comp_costs cc = { .path = path_index };
	char buf[512];
	int k;

	for (k = 0; k < PP_NPATHS && k < COMP_NPATHS; k++) {
		cc.total_ns[k] = ov->pc.total_ns[k];
		cc.inside_ns[k] = ov->pc.inside_ns[k];
	}
	decoder__compensate(dec, &cc);
	snprintf(buf, sizeof(buf), "compensated%s: per call %.0f ns inside, %.0f ns per traced "
		 "child (emulated); %.0f / %.0f (single-step); %.0f / %.0f (nop5)",
		 ov->pc.measured ? "" : " (not measured here: development VM figures)",
		 ov->pc.inside_ns[PP_EMULATED], ov->pc.total_ns[PP_EMULATED],
		 ov->pc.inside_ns[PP_SINGLE_STEP], ov->pc.total_ns[PP_SINGLE_STEP],
		 ov->pc.inside_ns[PP_NOP5], ov->pc.total_ns[PP_NOP5]);
	free(s->timing);
	s->timing = xstrdup(buf);
}
