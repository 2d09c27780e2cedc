// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The overhead governor: --max-overhead (see governor.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/governor.h"
#include "capture/overhead.h"
#include "capture/trace.h"
#include "capture/python.h"
#include "bpf/events.h"
#include "decode/decode.h"
#include "symbols/select.h"
#include "base/away.h"
#include "base/log.h"
#include "base/util.h"

/* Functions per group: a drop re-registers the group's kept functions, so small groups. */
#define GOV_GROUP_SIZE		16
/*
 * A module of at most this many functions gets one group per function: a
 * drop then leaves the others of the module free to be dropped at once
 * (a group whose old links are still going cannot move again, and a small
 * program's few functions are usually all hot together).
 */
#define GOV_SINGLES_MAX		256
/* Log2 buckets of call durations per function, for the median (see decide()). */
#define GOV_HBUCKETS		40
/* A window in which the target used less CPU than GOV_MIN_CPU_NS is given up after this. */
#define GOV_WINDOW_MAX_NS	10000000000ull
/*
 * A function whose probe cost in the window is under this share of the
 * excess is dropped only after the others: dropping it would lose its
 * information for next to nothing.
 */
#define GOV_NEGLIGIBLE		0.001
/* A function whose calls had traced callees ranks as if its distortion were this much less. */
#define GOV_CALLER_WEIGHT	0.5
/* Old links destroyed side by side (see reap()). */
#define GOV_REAP_THREADS	32

struct gov_group {
	const char *path;	/* the module's file (g->paths) */
	bool entry_only;
	uint32_t *funcs;	/* the function ids traced through it */
	unsigned long *offsets;
	size_t n;
	uint16_t gen;		/* of its current links */
	struct bpf_link **links;
	size_t nlinks;
};

/* The old links of one re-linked group, destroyed by the re-link thread. */
struct gov_doomed {
	uint32_t group;
	uint16_t gen;		/* the group's new generation: stable once they are gone */
	struct bpf_link **links;
	size_t nlinks;
};

struct gov_cand {
	uint32_t func;
	double cost, score;
	double distortion;	/* probe cost per call / compensated median inclusive time */
	bool negligible;	/* its cost is next to nothing against the excess */
};

struct governor {
	double limit;		/* overhead allowed, a fraction (1.0: 100%) */
	struct bp_session *s;
	struct tracer *tr;
	struct overhead *ov;
	struct decoder *dec;
	uint32_t *words;	/* gov_groups of the BPF side, mapped */
	int dropped_fd;
	struct gov_group *groups;	/* [0] unused: group 0 is every ungoverned probe */
	size_t ngroups;
	char **paths;
	size_t npaths;
	/* per function id */
	uint32_t *group_of;	/* 0: not governed */
	uint64_t *calls, *calls_w, *dur_w;	/* all calls; calls and ns in the window */
	uint64_t *self_w;	/* ns in the window less traced callees' */
	uint32_t **hist_w;	/* per function, lazily: GOV_HBUCKETS log2 buckets of durations */
	uint8_t *dropped;
	size_t cap;
	/* the window */
	bool started;
	uint64_t w_start, cpu_start;
	/* re-links whose old links are still going (see reap()) */
	struct gov_reap **reaps;
	size_t nreaps;
	uint8_t *busy;		/* per group: in phase X, not to be re-linked again yet */
	pthread_mutex_t lock;	/* closing, and the words once closing */
	/* Python calls (governor__set_python): dropped per code object in BPF */
	struct py_capture *py;
	uint64_t py_filtered_w;	/* the filtered hits when the window began */
	bool py_futile;		/* said: the probes of dropped Python calls alone pass the limit */
	uint64_t dropped_hits_w;	/* tracer__gov_dropped_hits() when the window began */
	bool closing;		/* governor__release(): the words are the tracer's to forget */
};

/* One re-link's old links, destroyed by a thread of its own. */
struct gov_reap {
	struct governor *g;
	struct gov_doomed *doomed;
	size_t ndoomed;
	pthread_t thread;
	atomic_bool done;
};

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

static void grow(struct governor *g, size_t n)
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
	GROW(g->hist_w);
	GROW(g->dropped);
#undef GROW
	g->cap = cap;
}

struct governor *governor__new(double limit_pct, struct bp_session *s, struct tracer *tr,
			       struct overhead *ov, struct decoder *dec)
{
	struct governor *g = xcalloc(1, sizeof(*g));

	g->limit = limit_pct / 100.0;
	g->s = s;
	g->tr = tr;
	g->ov = ov;
	g->dec = dec;
	g->words = tracer__gov_groups(tr);
	g->dropped_fd = tracer__gov_dropped_fd(tr);
	g->dropped_hits_w = tracer__gov_dropped_hits(tr);
	g->ngroups = 1;
	g->groups = xcalloc(1, sizeof(*g->groups));
	g->busy = xcalloc(BP_GOV_GROUPS, sizeof(*g->busy));
	pthread_mutex_init(&g->lock, NULL);
	overhead__set_governed(ov);
	return g;
}

/* Attaches grp's functions with its generation in the cookies; refused ones leave the group. */
static int link_group(struct governor *g, uint32_t gi, struct gov_group *grp, uint16_t gen,
		      struct bpf_link ***links, size_t *nlinks, uint64_t *refused, size_t *nrefused)
{
	uint64_t *cookies = xcalloc(grp->n ? grp->n : 1, sizeof(*cookies));
	size_t i, j, k;
	int err;

	for (i = 0; i < grp->n; i++)
		cookies[i] = grp->funcs[i] | (uint64_t)gi << BP_GOV_GROUP_SHIFT |
			     (uint64_t)gen << BP_GOV_GEN_SHIFT;
	*nrefused = 0;
	err = tracer__attach_owned(g->tr, grp->path, grp->offsets, cookies, grp->n, grp->entry_only,
				   refused, nrefused, links, nlinks);
	free(cookies);
	for (k = 0; !err && k < *nrefused; k++) {
		uint32_t f = (uint32_t)refused[k];

		refused[k] = f;	/* the function id alone, for the warning */
		for (i = j = 0; i < grp->n; i++) {
			if (grp->funcs[i] == f)
				continue;
			grp->funcs[j] = grp->funcs[i];
			grp->offsets[j++] = grp->offsets[i];
		}
		grp->n = j;
		if (f < g->cap)
			g->group_of[f] = 0;
	}
	return err;
}

int governor__attach_module(struct governor *g, const struct probe_module *pm)
{
	size_t left = BP_GOV_GROUPS - g->ngroups, size = GOV_GROUP_SIZE, i, nref = 0;
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
	refused = xcalloc(size, sizeof(*refused));
	ref_all = xcalloc(pm->n, sizeof(*ref_all));
	for (i = 0; i < pm->n && !err; i += size) {
		size_t n = pm->n - i < size ? pm->n - i : size, j, nr = 0;
		uint32_t gi = (uint32_t)g->ngroups;
		struct gov_group *grp;

		g->groups = xrealloc(g->groups, (g->ngroups + 1) * sizeof(*g->groups));
		grp = &g->groups[gi];
		memset(grp, 0, sizeof(*grp));
		grp->path = path;
		grp->entry_only = pm->entry_only;
		grp->n = n;
		grp->funcs = xcalloc(n, sizeof(*grp->funcs));
		grp->offsets = xcalloc(n, sizeof(*grp->offsets));
		for (j = 0; j < n; j++) {
			uint32_t f = (uint32_t)pm->cookies[i + j];

			grp->funcs[j] = f;
			grp->offsets[j] = pm->offsets[i + j];
			grow(g, (size_t)f + 1);
			g->group_of[f] = gi;
		}
		g->ngroups++;
		/* generation 0: the group's word is 0 already */
		err = link_group(g, gi, grp, 0, &grp->links, &grp->nlinks, refused, &nr);
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
	return g->group_of[f] ||
	       (g->py && f < g->s->nfuncs && g->s->funcs[f].flags & BP_FUNC_PYTHON);
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

void governor__event(struct governor *g, const struct bp_event *ev)
{
	uint64_t d;
	uint32_t f;

	if (!g || ev->kind != BP_EV_CALL)
		return;
	f = ev->call.func;
	if (g->py && f < g->s->nfuncs && g->s->funcs[f].flags & BP_FUNC_PYTHON)
		grow(g, (size_t)f + 1);
	if (f >= g->cap || !governed(g, f) || g->dropped[f])
		return;
	g->calls[f]++;
	g->calls_w[f]++;
	d = ev->call.end > ev->call.begin ? ev->call.end - ev->call.begin : 0;
	g->dur_w[f] += d;
	g->self_w[f] += ev->call.self;
	if (!g->hist_w[f])
		g->hist_w[f] = xcalloc(GOV_HBUCKETS, sizeof(**g->hist_w));
	g->hist_w[f][d ? 64 - __builtin_clzll(d) < GOV_HBUCKETS ? 64 - __builtin_clzll(d) :
		     GOV_HBUCKETS - 1 : 0]++;
}

/*
 * The median duration of f's calls in the window (ns, the middle of its
 * log2 bucket): unlike the mean, not carried off by the few calls that
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

static void destroy_links(struct bpf_link **links, size_t n)
{
	/* made return, entry, return, entry...: backwards, each entry link before its return link */
	while (n)
		bpf_link__destroy(links[--n]);
	free(links);
}

/*
 * The link's last close happens in a child (base/away.h): a re-link thread
 * blocked in it would hold up bpfprof's exit (serve's SIGTERM, record's end)
 * for as long as the grace period lasts.  This one waits for the child,
 * and gives up once the governor is closing (the child finishes alone).
 */
struct gov_destroy {
	struct governor *g;
	struct bpf_link *link;
};

static void *destroy_one(void *arg)
{
	struct gov_destroy *d = arg;
	struct away a;
	int fd = bpf_link__fd(d->link);
	bool closing = false;

	if (fd < 0 || away__start(&a, &fd, 1)) {
		bpf_link__destroy(d->link);
		free(d);
		return NULL;
	}
	bpf_link__destroy(d->link);	/* our copy: the child's is the last */
	away__finish(&a);
	while (away__wait(&a, 20) && !closing) {
		pthread_mutex_lock(&d->g->lock);
		closing = d->g->closing;
		pthread_mutex_unlock(&d->g->lock);
	}
	away__leave(&a);	/* given up: its pidfd is not kept */
	free(d);
	return NULL;
}

/*
 * The old links go, then the groups' words become their new generation
 * alone: the end of phase X.  Each destroy takes the link's probes out at
 * once but then waits for an SRCU grace period, which a thread inside a
 * traced call holds (as long as that call lasts, when its callees keep
 * re-arming the kernel's lease timer).  A dropped function's probe stays
 * while any link still has it, so the links are destroyed side by side,
 * not one after the other: the entry link's wait would keep the return
 * link's probes (and their cost) in.
 */
static void *reap(void *arg)
{
	struct gov_reap *rp = arg;
	struct governor *g = rp->g;
	pthread_t th[GOV_REAP_THREADS];
	bool started[GOV_REAP_THREADS] = { false };
	struct gov_destroy *dd;
	size_t i, j, k, n = 0;

	for (i = 0; i < rp->ndoomed; i++) {
		for (j = 0; j < rp->doomed[i].nlinks; j++) {
			k = n++ % GOV_REAP_THREADS;
			if (n > GOV_REAP_THREADS && started[k])
				pthread_join(th[k], NULL);
			dd = xcalloc(1, sizeof(*dd));
			dd->g = g;
			dd->link = rp->doomed[i].links[j];
			started[k] = !pthread_create(&th[k], NULL, destroy_one, dd);
			if (!started[k])
				destroy_one(dd);
		}
		free(rp->doomed[i].links);
	}
	for (k = 0; k < n && k < GOV_REAP_THREADS; k++)
		if (started[k])
			pthread_join(th[k], NULL);
	pthread_mutex_lock(&g->lock);
	for (i = 0; i < rp->ndoomed; i++) {
		if (!g->closing)
			__atomic_store_n(&g->words[rp->doomed[i].group],
					 BP_GOV_WORD(rp->doomed[i].gen, 0), __ATOMIC_SEQ_CST);
		__atomic_store_n(&g->busy[rp->doomed[i].group], 0, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&g->lock);
	atomic_store(&rp->done, true);
	return NULL;
}

/* Joins the re-link threads that are done (all: wait for each). */
static void join_reaps(struct governor *g, bool all)
{
	size_t i, j;

	for (i = j = 0; i < g->nreaps; i++) {
		struct gov_reap *rp = g->reaps[i];

		if (!all && !atomic_load(&rp->done)) {
			g->reaps[j++] = rp;
			continue;
		}
		pthread_join(rp->thread, NULL);
		free(rp->doomed);
		free(rp);
	}
	g->nreaps = j;
}

/*
 * Re-creates the links of every group holding a function marked in
 * g->dropped without them (phase A), moves those groups to phase X, and
 * hands the old links to the re-link thread.  A group whose new links
 * cannot be made keeps its old ones, and its functions are not dropped.
 * Returns how many groups moved.
 */
static size_t relink(struct governor *g, const struct gov_cand *c, size_t nc)
{
	struct gov_doomed *d = xcalloc(nc ? nc : 1, sizeof(*d));
	struct gov_reap *rp;
	size_t nd = 0, i, j, k;

	for (i = 0; i < nc; i++) {
		uint32_t gi = g->group_of[c[i].func];
		struct gov_group *grp = &g->groups[gi], ng = *grp;
		uint64_t *refused;
		size_t nref = 0;
		int err;

		if (!gi)
			continue;	/* a Python function: no links of its own */
		for (k = 0; k < nd && d[k].group != gi; k++)
			;
		if (k < nd)
			continue;	/* done with an earlier function of the same group */
		ng.funcs = xcalloc(grp->n ? grp->n : 1, sizeof(*ng.funcs));
		ng.offsets = xcalloc(grp->n ? grp->n : 1, sizeof(*ng.offsets));
		for (j = ng.n = 0; j < grp->n; j++) {
			if (g->dropped[grp->funcs[j]])
				continue;
			ng.funcs[ng.n] = grp->funcs[j];
			ng.offsets[ng.n++] = grp->offsets[j];
		}
		ng.gen = (grp->gen + 1) & BP_GOV_GEN_MASK;
		ng.links = NULL;
		ng.nlinks = 0;
		refused = xcalloc(ng.n ? ng.n : 1, sizeof(*refused));
		/* A: the new links record nothing yet (the word still names the old generation) */
		err = ng.n ? link_group(g, gi, &ng, ng.gen, &ng.links, &ng.nlinks, refused, &nref) : 0;
		free(refused);
		if (err) {
			p_warn("--max-overhead: cannot re-link %zu functions of %s: %s; none of them "
			       "is dropped", ng.n, grp->path, strerror(-err));
			for (j = 0; j < grp->n; j++)
				g->dropped[grp->funcs[j]] = 0;
			free(ng.funcs);
			free(ng.offsets);
			continue;
		}
		for (j = 0; j < grp->n; j++) {
			__u32 key = grp->funcs[j];
			__u8 one = 1;

			if (g->dropped[key] && bpf_map_update_elem(g->dropped_fd, &key, &one, BPF_ANY))
				p_dbg("governor: cannot mark function %u dropped: %s", key,
				      strerror(errno));
		}
		g->busy[gi] = 1;
		d[nd].group = gi;
		d[nd].gen = ng.gen;
		d[nd].links = grp->links;
		d[nd].nlinks = grp->nlinks;
		nd++;
		/* X: both generations; the new one records, the old one only what the new missed */
		__atomic_store_n(&g->words[gi], BP_GOV_WORD(ng.gen, grp->gen + 1), __ATOMIC_SEQ_CST);
		free(grp->funcs);
		free(grp->offsets);
		*grp = ng;
	}
	if (!nd) {
		free(d);
		return 0;
	}
	rp = xcalloc(1, sizeof(*rp));
	rp->g = g;
	rp->doomed = d;
	rp->ndoomed = nd;
	atomic_init(&rp->done, false);
	if (pthread_create(&rp->thread, NULL, reap, rp)) {
		p_dbg("governor: no thread: removing the old links here");
		reap(rp);
		free(d);
		free(rp);
		return nd;
	}
	g->reaps = xrealloc(g->reaps, (g->nreaps + 1) * sizeof(*g->reaps));
	g->reaps[g->nreaps++] = rp;
	return nd;
}

/* Most distorted first; what costs next to nothing last; then the costlier first. */
static int by_score(const void *a, const void *b)
{
	const struct gov_cand *x = a, *y = b;

	if (x->negligible != y->negligible)
		return x->negligible ? 1 : -1;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	if (x->cost != y->cost)
		return x->cost < y->cost ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* The annotations and the line on stderr: what went, when, how often it was called. */
static void announce(struct governor *g, const struct gov_cand *c, size_t n, uint64_t now,
		     double window_s, double factor)
{
	struct bp_annot a = { .kind = BP_ANNOT_DROP, .nargs = 4 };
	double pct = 100 * factor;
	char names[256] = "";
	size_t i, len = 0;

	a.ts = now;
	a.pid = a.tid = (uint32_t)overhead__target(g->ov);
	a.args[2] = (int64_t)(pct + 0.5);
	for (i = 0; i < n; i++) {
		uint32_t f = c[i].func;
		const char *name = session__func_name(g->s, f);

		if (!g->dropped[f])
			continue;	/* its group could not be re-linked */
		a.value = f;
		a.args[0] = (int64_t)(g->calls_w[f] / window_s + 0.5);
		a.args[1] = (int64_t)g->calls[f];
		/* how many times its probe cost its calls' own time was, in percent */
		a.args[3] = (int64_t)(100 * c[i].distortion + 0.5);
		snprintf(a.name, sizeof(a.name), "dropped: %s", name);
		decoder__drop_func(g->dec, f);
		if (f < g->s->nfuncs)
			g->s->funcs[f].flags |= BP_FUNC_DROPPED;
		if (decoder__annot(g->dec, &a))
			p_dbg("governor: the drop of %s could not be written", name);
		if (len < sizeof(names) - 1)
			len += snprintf(names + len, sizeof(names) - len, "%s%s (%.3g calls/s, "
					"probe %.2gx its time)", len ? ", " : "", name,
					(double)a.args[0], c[i].distortion);
	}
	if (len)
		p_info("--max-overhead %.0f%% (at most %.2gx slower): the probes made %s about "
		       "%.*fx slower; no longer tracing %s", g->limit * 100, 1 + g->limit,
		       overhead__target_name(g->ov), 1 + factor < 10 ? 1 : 0, 1 + factor, names);
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
 */
static void say_futile(struct governor *g, double factor)
{
	g->py_futile = true;
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

static void decide(struct governor *g, uint64_t now, double base, double irr)
{
	struct gov_cand *c;
	double cost = 0, allowed, factor, window_s = (now - g->w_start) / 1e9;
	size_t nc = 0, i, ndrop = 0, npy = 0;
	bool futile;
	uint32_t f;

	c = xcalloc(g->cap ? g->cap : 1, sizeof(*c));
	for (f = 0; f < g->cap && f < g->s->nfuncs; f++) {
		double per, mid;

		if (!g->calls_w[f] || !governed(g, f) || g->dropped[f])
			continue;
		per = overhead__call_cost(g->ov, &g->s->funcs[f]);
		if (g->group_of[f] && __atomic_load_n(&g->busy[g->group_of[f]], __ATOMIC_SEQ_CST)) {
			cost += g->calls_w[f] * per;	/* it costs, but its group is re-linked now */
			continue;
		}
		mid = median_w(g, f);
		c[nc].func = f;
		c[nc].cost = g->calls_w[f] * per;
		c[nc].distortion = per / (mid > 1 ? mid : 1);
		c[nc].score = per / (per + mid);
		if (g->self_w[f] + g->calls_w[f] < g->dur_w[f])
			c[nc].score *= GOV_CALLER_WEIGHT;	/* its calls had traced callees */
		cost += c[nc++].cost;
	}
	factor = overhead__factor(cost + irr, base);
	/*
	 * The cost that would keep the factor at the limit: cost / (base -
	 * cost) = limit.  Less what no drop takes away: the Python probe's
	 * hits on dropped functions (it sits in the interpreter loop).
	 */
	allowed = base * g->limit / (1 + g->limit) - irr;
	futile = allowed <= 0;
	p_dbg("governor: window %.3f s, CPU %.3f s, probes %.3f s (%.3f s on dropped Python "
	      "calls): %.2fx slower (limit %.2fx)", window_s, base / 1e9, (cost + irr) / 1e9,
	      irr / 1e9, 1 + factor, 1 + g->limit);
	if (factor > g->limit && futile && !g->py_futile)
		say_futile(g, factor);
	if (factor <= g->limit || !nc) {
		free(c);
		return;
	}
	for (i = 0; i < nc; i++)
		c[i].negligible = c[i].cost < (cost - allowed) * GOV_NEGLIGIBLE;
	qsort(c, nc, sizeof(*c), by_score);
	for (i = 0; i < nc && cost > allowed; i++) {
		/* past the limit whatever goes: only what tells nothing */
		if (futile && c[i].distortion < 1)
			break;
		g->dropped[c[i].func] = 1;
		cost -= c[i].cost;
		npy += !g->group_of[c[i].func];
		ndrop++;
	}
	/* the moment the kept functions' new links took over (phase X) */
	if (relink(g, c, ndrop) || npy)
		announce(g, c, ndrop, now_ns(CLOCK_MONOTONIC) - g->s->t0,
			 window_s > 0 ? window_s : 1e-9, factor);
	free(c);
}

/*
 * ns the Python probe's hits on dropped functions cost in the window: each
 * counted at a whole Python call's probe cost (an upper bound: the handler
 * returns early, the trap is the same).  Also added to the estimate.
 */
static double py_irreducible(struct governor *g)
{
	uint64_t n;
	double ns;

	if (!g->py)
		return 0;
	n = pycap__filtered(g->py);
	ns = (double)(n - g->py_filtered_w) * overhead__path_cost(g->ov, PP_PYTHON);
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

static void new_window(struct governor *g, uint64_t now)
{
	g->started = true;
	g->w_start = now;
	g->cpu_start = overhead__cpu_ns(g->ov);
	memset(g->calls_w, 0, g->cap * sizeof(*g->calls_w));
	memset(g->dur_w, 0, g->cap * sizeof(*g->dur_w));
	memset(g->self_w, 0, g->cap * sizeof(*g->self_w));
	for (size_t i = 0; i < g->cap; i++)
		if (g->hist_w[i])
			memset(g->hist_w[i], 0, GOV_HBUCKETS * sizeof(*g->hist_w[i]));
}

void governor__check(struct governor *g, uint64_t now)
{
	uint64_t cpu;
	double base;

	if (!g)
		return;
	join_reaps(g, false);
	if (!g->started) {
		new_window(g, now);
		return;
	}
	if (now - g->w_start < GOV_WINDOW_NS)
		return;
	cpu = overhead__target(g->ov) ? overhead__cpu_ns(g->ov) : 0;
	if (cpu) {
		base = cpu > g->cpu_start ? (double)(cpu - g->cpu_start) : 0;
		/* too little CPU to tell (ticks of 10 ms): wait, or start again */
		if (base < GOV_MIN_CPU_NS) {
			if (now - g->w_start >= GOV_WINDOW_MAX_NS)
				new_window(g, now);
			return;
		}
	} else {
		base = (double)(now - g->w_start);
	}
	decide(g, now, base, py_irreducible(g) + links_irreducible(g));
	new_window(g, now);
}

void governor__release(struct governor *g)
{
	size_t i;

	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->closing = true;
	pthread_mutex_unlock(&g->lock);
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
	join_reaps(g, true);
	free(g->reaps);
	free(g->busy);
	pthread_mutex_destroy(&g->lock);
	for (i = 1; i < g->ngroups; i++) {
		destroy_links(g->groups[i].links, g->groups[i].nlinks);
		free(g->groups[i].funcs);
		free(g->groups[i].offsets);
	}
	free(g->groups);
	for (i = 0; i < g->npaths; i++)
		free(g->paths[i]);
	free(g->paths);
	free(g->group_of);
	free(g->calls);
	free(g->calls_w);
	free(g->dur_w);
	free(g->self_w);
	for (i = 0; i < g->cap; i++)
		free(g->hist_w[i]);
	free(g->hist_w);
	free(g->dropped);
	free(g);
}
