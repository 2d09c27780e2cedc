// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The governor's windows (see governor.h): when one ends and is decided on,
 * and what is counted in it besides the calls read: the Python probe's hits
 * on dropped functions, the old links of dropped functions still in place,
 * and bpfprof's own CPU time in decoding.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "governor.h"
#include "overhead.h"
#include "probes/trace.h"
#include "cpython/cpython.h"

#include "internal.h"

/*
 * ns the Python probe's hits on dropped functions cost in the window: a
 * call is two hits (its start or resume, its return or suspension), each
 * counted at half a whole Python call's probe cost (an upper bound: the
 * handler returns early, the trap is the same).  Also added to the
 * estimate.
 */
static double py_irreducible(struct governor *g)
{
	uint64_t n;
	double ns;

	if (!g->py)
		return 0;
	n = pycap__filtered(g->py);
	ns = (double)(n - g->py_filtered_w) * overhead__path_cost(g->ov, PP_PYTHON) / 2;
	overhead__add_cost(g->ov, ns);
	g->py_filtered_w = n;
	return ns;
}

/*
 * ns the breakpoints of dropped native functions still cost: their old
 * links stay until a grace period ends, which pending traced calls hold
 * off.  Each hit is an entry or a return probe: half an emulated call (the
 * commonest path; an estimate).  Also added to the estimate.
 */
static double links_irreducible(struct governor *g)
{
	uint64_t n = tracer__gov_dropped_hits(g->tr);
	double ns = (double)(n - g->dropped_hits_w) * overhead__path_cost(g->ov, PP_EMULATED) / 2;

	overhead__add_cost(g->ov, ns);
	g->dropped_hits_w = n;
	return ns;
}

/* The machine's idle CPU time so far, every CPU's together (ns; 0 when /proc/stat cannot be read). */
static uint64_t machine_idle_ns(void)
{
	unsigned long long v[5] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4]);
	fclose(f);
	if (n < 4 || hz <= 0)
		return 0;
	return (v[3] + (n > 4 ? v[4] : 0)) * (1000000000ull / (uint64_t)hz);
}

void governor__drained(struct governor *g, uint64_t now)
{
	if (g)
		gov_py_name_late(g, now);
}

void governor__own_cpu(struct governor *g, uint64_t ns)
{
	if (g)
		g->own_ns += ns;
}

/*
 * bpfprof's own CPU time in decoding since the window began, as far as the
 * targets waited for it: less the machine's idle CPU time in the window,
 * which bpfprof could have run in beside them.  On this 2-CPU VM, a make
 * -j2 or a loaded machine leaves none, and every ns of decoding is one the
 * targets did not run (bpfprof decoded 6.8 s in a 35.9 s make -j2 whose
 * untraced run took 2.5 s); an idle 8-CPU machine decodes beside them for
 * free.
 */
double gov_own_charged(struct governor *g)
{
	double own = (double)(g->own_ns - g->own_start);
	uint64_t idle = machine_idle_ns();
	double spare = idle > g->idle_start ? (double)(idle - g->idle_start) : 0;

	return own > spare ? own - spare : 0;
}

static void new_window(struct governor *g, uint64_t now)
{
	g->started = true;
	g->w_start = now;
	g->early_at = now;
	g->cpu_start = overhead__cpu_ns(g->ov);
	g->events_w = g->events;
	g->lost_w = tracer__lost(g->tr, NULL, 0);
	g->own_start = g->own_ns;
	g->idle_start = machine_idle_ns();
	g->irr_w = g->going_w = g->probe_w = g->install_w = 0;
	for (size_t i = 0; i < g->nfiles; i++)
		g->files[i].procs_w = 0;
	memset(g->calls_w, 0, g->cap * sizeof(*g->calls_w));
	memset(g->dur_w, 0, g->cap * sizeof(*g->dur_w));
	memset(g->self_w, 0, g->cap * sizeof(*g->self_w));
	for (size_t i = 0; i < g->cap; i++)
		if (g->hist_w[i])
			memset(g->hist_w[i], 0, GOV_HBUCKETS * sizeof(*g->hist_w[i]));
}

/*
 * Before the window's end (GOV_WINDOW_NS): decide now, once the targets
 * used GOV_EARLY_CPU_NS of CPU in it and the estimate so far (the calls'
 * probes scaled for records lost, the hits no drop removes, bpfprof's own
 * CPU charged) is past the limit.  A cc1 with its 39,488 functions probed
 * runs 5-100x slower: a quarter of a second of that is seconds of its
 * work, and a process shorter than a window would end before any decision.
 * Not while a decision's re-links are under way or its groups in phase X:
 * their cost is still in the estimate, and a decision then would drop
 * others in their place.  Stable: a drop is never undone, and what goes
 * first is what tells nothing, whatever the window's length.
 */
static bool early(struct governor *g, uint64_t now)
{
	uint64_t cpu;
	double base, own, est;

	if (g->njobs || g->nxs || now - g->early_at < GOV_EARLY_STEP_NS || !overhead__target(g->ov))
		return false;
	g->early_at = now;
	cpu = overhead__cpu_ns(g->ov);
	if (cpu < g->cpu_start + GOV_EARLY_CPU_NS)
		return false;
	base = (double)(cpu - g->cpu_start);
	g->irr_w += py_irreducible(g);
	g->going_w += links_irreducible(g);
	own = gov_own_charged(g);
	est = g->probe_w * gov_lost_scale(g) + g->irr_w + g->going_w + own + g->install_w;
	return overhead__factor(est, base + own) > g->limit;
}

void governor__check(struct governor *g, uint64_t now)
{
	uint64_t cpu;
	double base;
	bool soon = false;

	if (!g)
		return;
	gov_py_name_late(g, now);
	gov_join_reaps(g, false);
	gov_end_x(g, false);
	gov_relink_step(g);
	if (!g->started) {
		new_window(g, now);
		return;
	}
	if (now - g->w_start < GOV_WINDOW_NS) {
		if (!early(g, now))
			return;
		soon = true;
	}
	cpu = overhead__target(g->ov) ? overhead__cpu_ns(g->ov) : 0;
	if (cpu) {
		base = cpu > g->cpu_start ? (double)(cpu - g->cpu_start) : 0;
		/* too little CPU to tell (ticks of 10 ms): wait, or start again */
		if (base < GOV_MIN_CPU_NS && !soon) {
			if (now - g->w_start >= GOV_WINDOW_MAX_NS)
				new_window(g, now);
			return;
		}
	} else {
		base = (double)(now - g->w_start);
	}
	g->irr_w += py_irreducible(g);
	g->going_w += links_irreducible(g);
	if (gov_decide(g, now, base, g->irr_w, g->going_w))
		new_window(g, now);
}
