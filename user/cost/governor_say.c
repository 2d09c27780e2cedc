// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the overhead governor says (governor.c decides): its ranking with -v,
 * the drops as annotations and a line on stderr, the limit it cannot keep,
 * and the fall-back from Python's probes to none.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "governor.h"
#include "overhead.h"
#include "cpython/cpython.h"
#include "decode/decode.h"
#include "base/log.h"
#include "base/util.h"

#include "internal.h"

size_t governor__ndropped(const struct governor *g)
{
	return g ? g->ndropped : 0;
}

/* -v: the ranking behind a decision: every function dropped, and GOV_LOG_RANKED more. */
void gov_log_ranking(const struct governor *g, const struct gov_cand *c, size_t nc,
		     size_t ndrop, double cost, double allowed)
{
	size_t i, n = 0;

	if (!verbose)
		return;
	for (i = 0; i < ndrop; i++)
		n += g->dropped[c[i].func];
	p_dbg("governor: %zu candidates, estimate %.3f s against %.3f s allowed; %zu dropped "
	      "(ranked: distortion = probe cost per call / compensated median inclusive time)",
	      nc, cost / 1e9, allowed / 1e9, n);
	for (i = 0; i < nc && i < ndrop + GOV_LOG_RANKED; i++)
		p_dbg("governor:  %3zu %-5s %-40.40s %8llu calls  probe %6.0f ns  own %9.0f ns  "
		      "distortion %7.3g  %s%s%s", i + 1, i < ndrop && g->dropped[c[i].func] ?
		      "DROP" : "keep", session__func_name(g->s, c[i].func),
		      (unsigned long long)g->calls_w[c[i].func], c[i].cost / g->calls_w[c[i].func],
		      c[i].mid, c[i].distortion, c[i].caller ? "caller" : "leaf",
		      c[i].informs ? ", informs" : "", c[i].negligible ? ", negligible" : "");
}

/* The annotations and the line on stderr: what went, when, how often it was called. */
void gov_announce(struct governor *g, const struct gov_cand *c, size_t n, uint64_t now,
		  double window_s, double factor, bool quiet)
{
	struct bp_annot a = { .kind = BP_ANNOT_DROP, .nargs = 4 };
	double pct = 100 * factor;
	char names[256] = "";
	size_t i, len = 0, ncold = 0;

	a.ts = now;
	a.pid = a.tid = (uint32_t)overhead__target(g->ov);
	a.args[2] = (int64_t)(pct + 0.5);
	for (i = 0; i < n; i++) {
		uint32_t f = c[i].func;
		const char *name = session__func_name(g->s, f);

		if (!g->dropped[f])
			continue;	/* its group could not be re-linked */
		a.value = f;
		a.args[0] = (int64_t)(c[i].calls_w / window_s + 0.5);
		a.args[1] = (int64_t)g->calls[f];
		/* how many times its probe cost its calls' own time was, in percent */
		a.args[3] = (int64_t)(100 * c[i].distortion + 0.5);
		a.nargs = 4;
		if (c[i].cold) {
			const struct gov_file *fl = &g->files[g->groups[g->group_of[f]].file];

			/* never called: what its file's swept breakpoints cost a new process (us) */
			a.nargs = 6;
			a.args[3] = (int64_t)(fl->swept_n * GOV_INSTALL_NS / 1e3 + 0.5);
			a.args[4] = GOV_WHY_COLD;
			a.args[5] = (int64_t)fl->swept_procs;
			ncold++;
		}
		snprintf(a.name, sizeof(a.name), "dropped: %s", name);
		decoder__drop_func(g->dec, f);
		if (f < g->s->nfuncs)
			g->s->funcs[f].flags |= BP_FUNC_DROPPED;
		if (decoder__annot(g->dec, &a))
			p_dbg("governor: the drop of %s could not be written", name);
		if (!c[i].cold && len < sizeof(names) - 1)
			len += snprintf(names + len, sizeof(names) - len, "%s%s (%.3g calls/s, "
					"probe %.2gx its time)", len ? ", " : "", name,
					(double)a.args[0], c[i].distortion);
	}
	if (len && !quiet)
		p_info("--max-overhead %.0f%% (at most %.2gx slower): the probes made %s about "
		       "%.*fx slower; no longer tracing %s", g->limit * 100, 1 + g->limit,
		       overhead__target_name(g->ov), 1 + factor < 10 ? 1 : 0, 1 + factor, names);
	if (ncold && !quiet)
		gov_say_cold(g, c, n, factor);
}

/*
 * One line per file swept (governor_cold.c): how many of its functions
 * went, why, what their breakpoints cost each new process, a few of their
 * names (all of them are in the annotations: the archive, report --format
 * json, /metrics).
 */
void gov_say_cold(struct governor *g, const struct gov_cand *c, size_t n, double factor)
{
	size_t fi, i;

	for (fi = 0; fi < g->nfiles; fi++) {
		struct gov_file *fl = &g->files[fi];
		char names[160] = "";
		const char *mod = fl->path;
		size_t len = 0, k = 0;

		size_t ndrop = 0;

		if (!fl->swept || fl->said)
			continue;
		/* this job's drops of the file (those of a group not re-linked in the end stay) */
		for (i = 0; i < n; i++) {
			uint32_t f = c[i].func;

			if (!c[i].cold || !g->dropped[f] || g->groups[g->group_of[f]].file != fi)
				continue;
			if (!ndrop++)
				mod = session__func_module(g->s, f);
			if (k < 3 && len < sizeof(names) - 1) {
				k++;
				len += snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
						session__func_name(g->s, f));
			}
		}
		if (!ndrop)
			continue;	/* swept in another decision: said at its end */
		fl->said = true;
		p_info("--max-overhead %.0f%% (at most %.2gx slower): the probes made %s about "
		       "%.*fx slower; no longer tracing %zu functions of %s never called in its "
		       "first %zu process%s: their breakpoints cost %.1f ms per new process (e.g. "
		       "%s%s; every name in the recording's dropped list)", g->limit * 100,
		       1 + g->limit, overhead__target_name(g->ov), 1 + factor < 10 ? 1 : 0,
		       1 + factor, ndrop, mod, fl->swept_procs,
		       fl->swept_procs == 1 ? "" : "es", ndrop * GOV_INSTALL_NS / 1e6, names,
		       ndrop > k ? ", ..." : "");
	}
}

void gov_say_futile(struct governor *g, double factor)
{
	g->py_futile = true;
	/* most of what no drop takes away is USDT hits: the program's annotations, -U probes */
	if (g->usdt_w * 2 > g->irr_w + g->going_w) {
		p_warn("--max-overhead %.0f%%: the program's annotations (bpfprof.h) and USDT probes "
		       "alone make %s about %.*fx slower: no drop takes them away, every hit traps.  "
		       "Only the functions measured as their own probe cost are dropped from now "
		       "on; fewer annotations in hot paths, or --gated, keep them cheaper",
		       g->limit * 100, overhead__target_name(g->ov), 1 + factor < 10 ? 1 : 0,
		       1 + factor);
		return;
	}
	p_warn("--max-overhead %.0f%%: the probes of dropped functions alone make %s about "
	       "%.*fx slower: %s.  Only the functions measured as their own probe cost are "
	       "dropped from now on%s", g->limit * 100, overhead__target_name(g->ov),
	       1 + factor < 10 ? 1 : 0, 1 + factor, g->py ?
	       "Python's probes sit in the interpreter loop and fire for every Python call, those "
	       "of dropped functions too (not recorded), and native ones stay until their links' "
	       "removal ends (a grace period that pending traced calls hold off)" :
	       "they stay until their links' removal ends (a grace period that pending traced "
	       "calls hold off)", g->py ? "; for hot, small Python functions sample instead "
	       "(--sample)" : "");
}

/*
 * CPython's function probes sit in the interpreter loop: a dropped Python
 * function is only filtered out in BPF, its calls still trap.  When those
 * traps alone pass the limit, the probes go: every Python function not
 * dropped yet is named dropped now (stderr, the stream's annotations, so
 * the archive, report, /metrics and every format), and the interpreter
 * runs without probes; where its time goes is then for sampling to say:
 * the owner's hook (governor__set_sample_hook) starts it if the recording
 * has none.
 */
/*
 * Names every Python function not dropped yet as dropped (quietly: the
 * annotations, the archive): the probes are gone.  Returns how many.
 */
static size_t py_name_rest(struct governor *g, uint64_t now)
{
	struct gov_cand *c = xcalloc(g->s->nfuncs ? g->s->nfuncs : 1, sizeof(*c));
	size_t n = 0;
	uint32_t f;

	for (f = 0; f < g->s->nfuncs && f < g->cap; f++) {
		if (!(g->s->funcs[f].flags & BP_FUNC_PYTHON) || g->dropped[f])
			continue;
		g->dropped[f] = 1;
		g->ndropped++;
		c[n].calls_w = g->calls_w[f];
		c[n++].func = f;
	}
	g->py_named = g->s->nfuncs;
	gov_announce(g, c, n, now, g->py_window_s, g->py_factor, true);
	free(c);
	return n;
}

/*
 * The share of the window's Python calls that were the import system's
 * (importlib's frozen modules): a program's start-up (15-35% in the window
 * of the fallback of black, of hot.py, of a script importing json, email,
 * asyncio...; the rest is the imported modules' own top-level code).  The
 * fallback is for good: a script of 200 coarse calls after its imports was
 * traced in its imports only, its own functions not at all.  The limit
 * holds for the whole run, so it falls back all the same, and says so.
 */
static double import_share(const struct governor *g)
{
	uint64_t all = 0, imp = 0;
	uint32_t f;

	for (f = 0; f < g->cap && f < g->s->nfuncs; f++) {
		const struct bp_func *fn = &g->s->funcs[f];

		if (!(fn->flags & BP_FUNC_PYTHON) || !g->calls_w[f])
			continue;
		all += g->calls_w[f];
		if (fn->file && !strncmp(fn->file, "<frozen importlib.", 18))
			imp += g->calls_w[f];
	}
	return all ? (double)imp / (double)all : 0;
}

void gov_py_fallback(struct governor *g, double window_s, double factor)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC) - g->s->t0;
	char then[96] = "for where its time goes, sample (--sample)", why[192] = "";
	double imports;
	bool already = false;
	uint64_t t0;
	size_t n;
	int hz = 0;

	if (window_s <= 0)
		window_s = 1e-9;
	gov_grow(g, g->s->nfuncs);	/* every Python function known named, also with no call ended yet */
	imports = import_share(g);
	p_dbg("governor: %.1f%% of the window's Python calls were importlib's", 100 * imports);
	if (imports >= 0.1)	/* a program at work calls next to none of them */
		snprintf(why, sizeof(why), " in its start-up (%.0f%% of the Python calls were the "
			 "import system's; --max-overhead off, or a higher limit, traces the calls "
			 "after it)", 100 * imports);
	pycap__detach(g->py, &g->closer);
	g->py_detached = true;
	g->py_window_s = window_s;
	g->py_factor = factor;
	n = py_name_rest(g, now);
	t0 = now_ns(CLOCK_MONOTONIC);
	if (g->sample_fn)
		hz = g->sample_fn(g->sample_ctx, &already);
	p_dbg("governor: the Python probes given to the closer, the sampler %s in %.3f s",
	      hz > 0 ? "started" : "not started", (now_ns(CLOCK_MONOTONIC) - t0) / 1e9);
	if (hz > 0)
		snprintf(then, sizeof(then), "sampling its stacks at %d Hz from now on", hz);
	else if (already)
		snprintf(then, sizeof(then), "where its time goes is in the cpu samples");
	p_info("--max-overhead %.0f%%: CPython's probes fire for every Python call, dropped "
	       "functions' too, and those alone made %s about %.*fx slower%s: the Python probes "
	       "are detached, no Python call is traced from now on (%zu more functions named "
	       "dropped); %s", g->limit * 100, overhead__target_name(g->ov),
	       1 + factor < 10 ? 1 : 0, 1 + factor, why, n, then);
}

/*
 * After the fallback: the Python functions the decoder learnt of since (their
 * code objects' records were still in the buffer when it was decided, from
 * what had been read by then: a program's main() and the handler in flight)
 * are named dropped too, at each look and at the end of the recording.
 */
void gov_py_name_late(struct governor *g, uint64_t now)
{
	if (g->py_detached && g->s->nfuncs > g->py_named) {
		gov_grow(g, g->s->nfuncs);
		py_name_rest(g, now);
	}
}

/* -v: the window's estimate (see gov_decide() in governor.c) */
void gov_log_window(const struct governor *g, double window_s, double all, double cost,
		    double irr, double going, double lost, double own)
{
	p_dbg("governor: window %.3f s, CPU %.3f s (%.3f s of it bpfprof's own decoding, what "
	      "the targets waited for), probes and decoding %.3f s (%.3f s on dropped Python "
	      "calls and annotations, %.3f s on links of dropped functions being removed; calls "
	      "seen x %.2f for records lost): %.2fx slower (limit %.2fx)", window_s, all / 1e9, own / 1e9,
	      (cost + irr + going) / 1e9, irr / 1e9, going / 1e9, lost,
	      1 + overhead__factor(cost + irr + going, all), 1 + g->limit);
}
