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
#include "base/log.h"
#include "overhead.h"
#include "probes/trace.h"
#include "cpython/cpython.h"
#include "decode/decode.h"

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
 * The USDT probes' hits (overhead__usdt_hits(), in the estimate already by
 * overhead__event()).  No drop takes them away: they are counted with the
 * dropped Python calls' hits (irr_w), in the estimate and in what the probe
 * time sampled in the targets is held against (without them a program busy
 * in its annotations read as its functions' probes costing more than
 * calibrated).
 */
void gov_usdt_note(struct governor *g, const struct bp_event *ev, const struct bp_func *fn)
{
	double ns = overhead__usdt_hits(ev, fn) * overhead__annot_cost(g->ov);

	g->irr_w += ns;
	g->usdt_w += ns;
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
 * targets waited for it.  What they waited for a CPU in the window
 * (schedstat's run delay, summed over their threads) is known; bpfprof's
 * part of it is its share of the CPU time everything else used meanwhile
 * (the machine's busy time, ncpu x window less its idle time, less the
 * targets' own), never more than bpfprof's own time.  A target alone with
 * bpfprof on a 2-CPU machine, each on a CPU, waited for nothing: nothing
 * is charged (the rule before, bpfprof's time less the machine's idle
 * time, charged all of it there, and at a load of 7 from other work as
 * much again: nginx's 0.053 s window read 4x slower, 0.015 s of it
 * bpfprof's, after a window at 1.45x, and ngx_http_process_request went).
 * A target waiting behind bpfprof alone is charged its whole wait: a make
 * -j2 on this 2-CPU VM, where bpfprof decoded 6.8 s in a 35.9 s run whose
 * untraced time was 2.5 s.  base: the targets' CPU time in the window.
 */
double gov_own_charged(struct governor *g, double base, uint64_t now)
{
	double own = (double)(g->own_ns - g->own_start);
	uint64_t idle = machine_idle_ns(), wait = overhead__wait_ns(g->ov);
	double spare = idle > g->idle_start ? (double)(idle - g->idle_start) : 0;
	double waited = wait > g->wait_start ? (double)(wait - g->wait_start) : 0;
	double busy = (double)g->ncpu * (double)(now - g->w_start) - spare, others;

	if (own <= 0 || waited <= 0)
		return 0;
	others = busy - base;
	if (others < own)
		others = own;
	return waited * own / others < own ? waited * own / others : own;
}

/*
 * The calibration measures a probe apart from the target, in a small
 * program on an idle moment.  In the target it costs what it costs there:
 * in cc1, with 39,488 probes in the kernel's tree and its caches evicted at
 * every trap, about 2.4x the calibration (make -j2 of 40 files: the
 * estimate said 1.9x, the run was 16.9x); on a loaded machine, less.  The
 * window's samples of the targets say which share of their CPU time was on
 * the probe path: that share of base is the probe time measured.
 */
double gov_measured_k(struct governor *g, double base, double cal)
{
	uint64_t probe, all = overhead__samples(g->ov, &probe), n, np;
	double m = overhead__measured_of(g->ov), want;

	n = all - g->sh_all_w;
	np = probe - g->sh_probe_w;
	if (n < GOV_MEASURE_MIN_SAMPLES || base <= 0 || cal < base * GOV_MEASURE_MIN_SHARE)
		return 1;
	/*
	 * Records lost: the decoder is behind, the calls read are not the
	 * window's (make -j2: 11.7 M lost, windows whose calls read said 2-3%
	 * while 48-66% was sampled, the factor at its bound and the ranking's
	 * costs 16x).  The samples are of now, the calls of then: no figure.
	 */
	if (gov_lost_scale(g) > GOV_MEASURE_MAX_LOST)
		return 1;
	/*
	 * ~100 samples a window: the share's error is about a seventh of it
	 * (redis: windows at 0.57x then 1.47x the calibration when the factor
	 * followed each).  The measured and the calibrated time (the latter
	 * without the factor in use) are summed over the windows, each sum
	 * halved at every window: the last few weigh, the noise averages.
	 */
	g->meas_sum = g->meas_sum / 2 + (double)np / (double)n * base;
	g->cal_sum = g->cal_sum / 2 + cal / m;
	want = g->meas_sum / g->cal_sum;
	/* a window with no probe sample at all says the figure is small, not nothing */
	if (want < 1 / GOV_MEASURE_MAX)
		want = 1 / GOV_MEASURE_MAX;
	if (want > GOV_MEASURE_MAX)
		want = GOV_MEASURE_MAX;
	p_dbg("governor: probe costs x %.2f of the calibration's from now on (%.0f%% of the targets' "
	      "CPU time in the window sampled on the probe path, %llu samples; the calibration said "
	      "%.0f%%)", want, 100.0 * (double)np / (double)n, (unsigned long long)n,
	      100 * cal / m / base);
	return want / m;
}

/*
 * The bound under which a function's distortion (x GOV_CALLER_WEIGHT for a
 * caller) says it informs: 1, or in a storm (GOV_STORM) 1 / how many times
 * the limit the samples measure.
 */
double gov_storm_informs(struct governor *g)
{
	uint64_t probe, all = overhead__samples(g->ov, &probe);
	uint64_t n = all - g->sh_all_w, np = probe - g->sh_probe_w;
	double share, x;

	if (n < GOV_MEASURE_MIN_SAMPLES || g->limit <= 0)
		return 1;
	share = (double)np / (double)n;
	share = share < 0.99 ? share : 0.99;
	x = share / (1 - share) / g->limit;
	if (x < GOV_STORM || share < GOV_STORM_SHARE)
		return 1;
	p_dbg("governor: a storm: %.0f%% of the targets' CPU time sampled on the probe path, %.1fx "
	      "the limit: what informs has a distortion under %.2f", 100 * share, x, 1 / x);
	return 1 / x;
}

static void new_window(struct governor *g, uint64_t now)
{
	g->started = true;
	g->w_start = now;
	g->early_at = now;
	g->cpu_start = overhead__cpu_ns(g->ov);
	g->wait_start = overhead__wait_ns(g->ov);
	g->events_w = g->events;
	g->lost_w = tracer__lost(g->tr, NULL, 0);
	g->own_start = g->own_ns;
	g->idle_start = machine_idle_ns();
	g->irr_w = g->going_w = g->probe_w = g->install_w = g->usdt_w = 0;
	g->sh_all_w = overhead__samples(g->ov, &g->sh_probe_w);
	g->comp_clock = decoder__compensating(g->dec);
	for (size_t i = 0; i < g->nfiles; i++)
		g->files[i].procs_w = 0;
	memset(g->calls_w, 0, g->cap * sizeof(*g->calls_w));
	memset(g->dur_w, 0, g->cap * sizeof(*g->dur_w));
	memset(g->self_w, 0, g->cap * sizeof(*g->self_w));
	memset(g->kids_w, 0, g->cap * sizeof(*g->kids_w));
	memset(g->out_w, 0, g->cap * sizeof(*g->out_w));
	for (size_t i = 0; i < g->cap; i++)
		if (g->hist_w[i])
			memset(g->hist_w[i], 0, GOV_HBUCKETS * sizeof(*g->hist_w[i]));
}

/*
 * Before the window's end (GOV_WINDOW_NS): decide now, once the targets
 * used GOV_EARLY_CPU_NS of CPU in it and the estimate so far (the calls'
 * probes scaled for records lost, the hits no drop removes, bpfprof's own
 * CPU charged) is past GOV_EARLY_OVER x the limit (a window of 30 ms near
 * the limit is noise: redis's read 2.45x between full ones at 1.6-1.85x).  A cc1 with its 39,488 functions probed
 * runs 5-100x slower: a quarter of a second of that is seconds of its
 * work, and a process shorter than a window would end before any decision.
 * Not while a decision's re-links are under way or its groups in phase X:
 * their cost is still in the estimate, and a decision then would drop
 * others in their place.  Stable: a drop is never undone, and what goes
 * first is what tells nothing, whatever the window's length.  *cpu: the
 * targets' CPU time read, when it was.
 */
static bool early(struct governor *g, uint64_t now, uint64_t *cpu)
{
	double base, own, est;

	if (g->njobs || g->nxs || now - g->early_at < GOV_EARLY_STEP_NS || !overhead__target(g->ov))
		return false;
	g->early_at = now;
	*cpu = overhead__cpu_ns(g->ov);
	if (*cpu < g->cpu_start + GOV_EARLY_CPU_NS)
		return false;
	base = (double)(*cpu - g->cpu_start);
	g->irr_w += py_irreducible(g);
	g->going_w += links_irreducible(g);
	own = gov_own_charged(g, base, now);
	est = g->probe_w * gov_lost_scale(g) + g->irr_w + g->going_w + own + g->install_w;
	return overhead__factor(est, base + own) > g->limit * GOV_EARLY_OVER;
}

void governor__check(struct governor *g, uint64_t now)
{
	uint64_t cpu = 0;
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
		/* its look read the targets' CPU time (every traced thread's): not again */
		if (!early(g, now, &cpu))
			return;
		soon = true;
	} else if (overhead__target(g->ov)) {
		cpu = overhead__cpu_ns(g->ov);
	}
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
	gov_leaf_scale(g);
	g->irr_w += py_irreducible(g);
	g->going_w += links_irreducible(g);
	g->early_now = soon;
	if (gov_decide(g, now, base, g->irr_w, g->going_w))
		new_window(g, now);
}
