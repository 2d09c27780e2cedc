// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-thread virtual clocks without the probes' cost (see compensate.h). */
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "compensate.h"
#include "bpf/events.h"
#include "base/log.h"

/*
 * The kinds of interval measured per process: L per native path, G per
 * native path, T; and what a batch flush adds to the interval after it.
 */
#define COMP_NATIVE	3
enum { K_LEAF = 0, K_GAP = COMP_NATIVE, K_TAIL = 2 * COMP_NATIVE, K_FLUSH, K_N };

/* One kind's last intervals and their low quantile. */
struct comp_est {
	float ring[COMP_FLUSH_WINDOW];	/* kinds: their last COMP_WINDOW; flushes: all */
	uint32_t n;		/* seen so far */
	double q;		/* the floor cluster's median (floor_cluster) of its last intervals */
};

/* A process: its intervals (shared by its threads). */
struct comp_proc {
	uint32_t pid;
	uint32_t refs;		/* threads pointing here */
	uint64_t seen;		/* intervals of all kinds */
	struct comp_est e[K_N];
	/* the stall rate where the code is known short (stall_penalty): raw ns there, stalls there */
	double short_ns, short_stalls;
};

struct comp_thread {
	uint32_t tid;		/* 0: empty */
	uint8_t lkind;		/* its last native event: 0 none (or not usable), 1 entry, 2 exit */
	uint32_t lfunc;
	uint64_t lraw;		/* its raw timestamp */
	bool lflush;		/* that hit also sent its CPU's batch (compensator__batch_last) */
	struct comp_proc *proc;
	double debt;		/* ns of probe work on this thread so far */
	uint64_t last;		/* its latest virtual time: the clock never runs back */
	bool seen;
};

#define COMP_MIN_STEP	10	/* ns between two events of a thread, at least */

/* The places where the code between two events is known short (stall_charge): per function. */
enum { B_LEAF, B_GAP, B_TAIL, B_N };
struct comp_body {
	float usual;		/* the usual excess of its short intervals over their figure */
	uint8_t score;		/* +1 short, -2 1-5 us over, -stall_penalty a stall; known from COMP_SHORT_KNOWN */
};
#define COMP_SHORT_MAX		64
#define COMP_STALL_PENALTY	8	/* at most: a place long more often than one in nine is not short */
#define COMP_STALL_PENALTY_MIN	2	/* at least: nor one long more often than one in three */
#define COMP_RATE_SPAN		4e6	/* raw ns at known-short places the stall rate is taken over */

struct compensator {
	const struct bp_session *s;
	struct comp_costs c;
	struct comp_thread *tab;	/* open addressing by tid */
	size_t cap, used;
	struct comp_proc **procs;	/* open addressing by pid */
	size_t pcap, pused;
	struct comp_proc *gone;		/* of the processes gone, the one with the most intervals */
	bool flusher;			/* the next record's hit sent its batch */
	double debt;
	struct comp_body (*body)[B_N];	/* per function id */
	size_t nbody;
	uint64_t stalls;
	double stall_ns;
};

struct compensator *compensator__new(const struct bp_session *s, const struct comp_costs *c)
{
	struct compensator *k = xcalloc(1, sizeof(*k));

	k->s = s;
	k->c = *c;
	k->cap = 64;
	k->tab = xcalloc(k->cap, sizeof(*k->tab));
	k->pcap = 16;
	k->procs = xcalloc(k->pcap, sizeof(*k->procs));
	return k;
}

void compensator__free(struct compensator *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->pcap; i++)
		free(k->procs[i]);
	free(k->procs);
	free(k->gone);
	free(k->tab);
	free(k->body);
	free(k);
}

double compensator__debt_ns(const struct compensator *k)
{
	return k ? k->debt : 0;
}

static size_t proc_home(const struct compensator *k, uint32_t pid)
{
	return (pid * 2654435761u) & (k->pcap - 1);
}

static struct comp_proc *proc_get(struct compensator *k, uint32_t pid)
{
	size_t i;

	if ((k->pused + 1) * 2 > k->pcap) {
		struct comp_proc **old = k->procs;
		size_t n = k->pcap, j;

		k->pcap *= 2;
		k->procs = xcalloc(k->pcap, sizeof(*k->procs));
		for (j = 0; j < n; j++) {
			if (!old[j])
				continue;
			for (i = proc_home(k, old[j]->pid); k->procs[i]; i = (i + 1) & (k->pcap - 1))
				;
			k->procs[i] = old[j];
		}
		free(old);
	}
	for (i = proc_home(k, pid); k->procs[i] && k->procs[i]->pid != pid; i = (i + 1) & (k->pcap - 1))
		;
	if (!k->procs[i]) {
		k->procs[i] = xcalloc(1, sizeof(**k->procs));
		k->procs[i]->pid = pid;
		k->pused++;
	}
	return k->procs[i];
}

/* A process no thread points to any more goes (backward-shift deletion, as for threads). */
static void proc_put(struct compensator *k, struct comp_proc *p)
{
	size_t mask = k->pcap - 1, i, j;

	if (!p || --p->refs)
		return;
	for (i = proc_home(k, p->pid); k->procs[i] != p; i = (i + 1) & mask)
		;
	for (j = i;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!k->procs[j])
			break;
		home = proc_home(k, k->procs[j]->pid);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		k->procs[i] = k->procs[j];
		i = j;
	}
	k->procs[i] = NULL;
	k->pused--;
	if (!k->gone || p->seen > k->gone->seen) {
		free(k->gone);
		k->gone = p;
	} else {
		free(p);
	}
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
	proc_put(k, k->tab[i].proc);
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

/* The kk-th smallest (0-based) of v[0..n), kk < n; v is reordered (quickselect, Lomuto). */
static float select_kth(float *v, size_t n, size_t kk)
{
	size_t lo = 0, hi = n - 1, i, st;
	float piv, x;

	while (lo < hi) {
		x = v[(lo + hi) / 2];
		v[(lo + hi) / 2] = v[hi];
		v[hi] = x;
		piv = x;
		for (st = lo, i = lo; i < hi; i++) {
			if (v[i] < piv) {
				x = v[i];
				v[i] = v[st];
				v[st++] = x;
			}
		}
		v[hi] = v[st];
		v[st] = piv;
		if (kk == st)
			return v[st];
		if (kk < st)
			hi = st - 1;
		else
			lo = st + 1;
	}
	return v[kk];
}

/*
 * The typical interval of the cluster at the floor: the median of those
 * within COMP_CLUSTER of the low quantile (the near-empty spans' usual
 * cost; the low quantile alone reads a little under it, and the spans with
 * work or with the CPU taken away lie above the band).
 */
static double floor_cluster(const float *ring, size_t m)
{
	float v[COMP_WINDOW];
	size_t i, c;
	double band;

	memcpy(v, ring, m * sizeof(*v));
	band = select_kth(v, m, (size_t)(COMP_QUANTILE * (double)m)) * COMP_CLUSTER;
	for (c = 0, i = 0; i < m; i++)
		if (v[i] <= band)
			v[c++] = v[i];
	return select_kth(v, c, c / 2);
}

static void est_add(struct comp_est *e, uint64_t v)
{
	size_t m;

	e->ring[e->n % COMP_WINDOW] = (float)v;
	e->n++;
	m = e->n < COMP_WINDOW ? e->n : COMP_WINDOW;
	e->q = floor_cluster(e->ring, m);
}

/*
 * A flush's cost: what the intervals after flushing hits had over their
 * kind's figure.  Their COMP_FLUSH_QUANTILE (the flushes that fell in
 * near-empty spans; the others also hold the program's code), from
 * COMP_FLUSH_MIN of them on: one hit in BP_BATCH_RECS flushes.
 */
static void flush_add(struct comp_est *e, double excess)
{
	float v[COMP_FLUSH_WINDOW];
	size_t m;

	e->ring[e->n % COMP_FLUSH_WINDOW] = excess > 0 ? (float)excess : 0;
	e->n++;
	if (e->n < COMP_FLUSH_MIN)
		return;
	m = e->n < COMP_FLUSH_WINDOW ? e->n : COMP_FLUSH_WINDOW;
	memcpy(v, e->ring, m * sizeof(*v));
	e->q = select_kth(v, m, (size_t)(COMP_FLUSH_QUANTILE * (double)m));
}

void compensator__batch_last(struct compensator *k)
{
	if (k)
		k->flusher = true;
}

/* What a flush adds to its hit here: 0 until measured, at most the calibrated inside part. */
static double flush_cost(const struct compensator *k, const struct comp_proc *pr)
{
	const struct comp_est *e = pr ? &pr->e[K_FLUSH] : NULL;
	double cap = k->c.inside_ns[0];

	if (!k->c.adapt || !e || e->n < COMP_FLUSH_MIN)
		return 0;
	return e->q < cap ? e->q : cap;
}

/*
 * The figure of kind kind for process pr: its own once it has enough, else
 * the calibration's, held to the process's own intervals of the kind so far
 * (an interval is its probe cost and some code, never less: a calibration
 * dearer than the process's first intervals would take their work out).
 */
static double figure(const struct compensator *k, const struct comp_proc *pr, int kind, double prior)
{
	const struct comp_est *e = pr ? &pr->e[kind] : NULL;

	if (!k->c.adapt || !e || !e->n)
		return prior;
	if (e->n < COMP_MIN_SAMPLES)
		return e->q < prior ? e->q : prior;
	return e->q < COMP_ADAPT_CAP * prior ? e->q : COMP_ADAPT_CAP * prior;
}

/* The calibrated return probe cost (T), or a share of the total when it was not measured. */
static double exit_prior(const struct compensator *k, unsigned p)
{
	double x = k->c.exit_ns > 0 ? k->c.exit_ns : k->c.total_ns[p] / 2;

	return x < k->c.total_ns[p] ? x : k->c.total_ns[p];
}

/* L, G, T of path p for process pr (see compensate.h). */
static void figures(const struct compensator *k, const struct comp_proc *pr, unsigned p, double *l,
		    double *g, double *t)
{
	double x = exit_prior(k, p);

	*l = figure(k, pr, K_LEAF + (int)p, k->c.inside_ns[p]);
	*g = figure(k, pr, K_GAP + (int)p, k->c.total_ns[p] - k->c.inside_ns[p]);
	*t = figure(k, pr, K_TAIL, x);
}

/* Function fid's place cls (B_*), grown to the session's functions; NULL past them. */
static struct comp_body *body_of(struct compensator *k, uint32_t fid, unsigned cls)
{
	if (fid >= k->nbody) {
		size_t n = k->s->nfuncs > fid ? k->s->nfuncs : (size_t)fid + 1;

		if (fid >= k->s->nfuncs)
			return NULL;
		k->body = xrealloc(k->body, n * sizeof(*k->body));
		memset(k->body + k->nbody, 0, (n - k->nbody) * sizeof(*k->body));
		k->nbody = n;
	}
	return &k->body[fid][cls];
}

/*
 * What a stall costs a place's score: a place whose intervals are long more
 * often than 1 / (penalty + 1) never gets known short.  The stalls come at
 * a rate in time (those of the process at its known-short places, over
 * their last ~COMP_RATE_SPAN raw ns): an interval of d ns holds one with
 * probability ~rate x d, up to one in five or more here under load
 * (10 us every ~45 us), so where that is over one in eighteen, a place may
 * be long up to twice as often as stalls explain (COMP_STALL_PENALTY_MIN
 * at most), and a body long in fewer of its calls reads its usual time.
 */
static unsigned stall_penalty(const struct comp_proc *pr, double d)
{
	double p2 = pr && pr->short_ns > 0 ? 2 * pr->short_stalls / pr->short_ns * d : 0, pen;

	if (p2 * (COMP_STALL_PENALTY + 1) <= 1)
		return COMP_STALL_PENALTY;
	pen = 1 / p2 - 1;
	return pen > COMP_STALL_PENALTY_MIN ? (unsigned)pen : COMP_STALL_PENALTY_MIN;
}

/* A known-short place's interval: d raw ns, of which a stall was taken out or not. */
static void rate_add(struct comp_proc *pr, double d, bool stall)
{
	pr->short_ns += d;
	pr->short_stalls += stall;
	if (pr->short_ns > COMP_RATE_SPAN) {
		pr->short_ns /= 2;
		pr->short_stalls /= 2;
	}
}

/*
 * A stall in the probes (compensate.h): an interval d of figure fig at a
 * place b whose code is known short, more than max(COMP_STALL_MIN_NS, fig)
 * over the figure.  Returns the ns to charge to the second hit: d less the
 * figure and the place's usual excess (0 when not a stall); keeps b's score
 * and the process's stall rate.
 */
static double stall_charge(struct compensator *k, struct comp_proc *pr, struct comp_body *b,
			   double d, double fig)
{
	double e = d - fig, lim = fig > COMP_STALL_MIN_NS ? fig : COMP_STALL_MIN_NS, c;
	bool known = b && b->score >= COMP_SHORT_KNOWN;
	unsigned pen;

	if (!b)
		return 0;
	if (e > lim) {
		/* a long body, or a stall before the place was known: its own */
		pen = stall_penalty(pr, fig + b->usual);
		b->score = b->score > pen ? b->score - pen : 0;
		if (!known)
			return 0;
		c = e - b->usual;
		rate_add(pr, d - c, true);
		k->stalls++;
		k->stall_ns += c;
		return c;
	}
	if (known)
		rate_add(pr, d, false);
	if (e > COMP_SHORT_NS) {
		b->score = b->score > 2 ? b->score - 2 : 0;	/* some work there, or a dearer stretch */
		return 0;
	}
	if (b->score < COMP_SHORT_MAX)
		b->score++;
	b->usual += ((e > 0 ? (float)e : 0) - b->usual) / 8;
	return 0;
}

/* A native entry or exit: its interval from the thread's last one is measured, then the hit charged. */
static uint64_t native(struct compensator *k, const struct bp_rec_call *call, uint64_t ts, unsigned p)
{
	bool entry = call->h.type == BP_REC_ENTRY || call->h.type == BP_REC_ENTRY_ARGS;
	struct comp_thread *t = thread(k, (uint32_t)call->h.pid_tgid);
	double l, g, x, ae, be, fl, st = 0;

	if (!t->proc) {
		t->proc = proc_get(k, (uint32_t)(call->h.pid_tgid >> 32));
		t->proc->refs++;
	}
	figures(k, t->proc, p, &l, &g, &x);
	if (k->c.adapt && t->lkind && ts >= t->lraw) {
		uint64_t d = ts - t->lraw;
		int kind = -1;
		double fig = 0;

		if (t->lkind == 1 && !entry && t->lfunc == call->func_id) {
			kind = K_LEAF + (int)p;
			fig = l;
		} else if (t->lkind == 2) {
			kind = entry ? K_GAP + (int)p : K_TAIL;
			fig = entry ? g : x;
		}
		if (kind >= 0 && t->lflush) {
			flush_add(&t->proc->e[K_FLUSH], (double)d - fig);
		} else if (kind >= 0) {
			est_add(&t->proc->e[kind], d);
			t->proc->seen++;
			st = stall_charge(k, t->proc, body_of(k, call->func_id, kind == K_TAIL ? B_TAIL :
						     kind >= K_GAP ? B_GAP : B_LEAF), (double)d, fig);
		}
	}
	t->lkind = entry ? 1 : 2;
	t->lfunc = call->func_id;
	t->lraw = ts;
	t->lflush = k->flusher;
	k->flusher = false;
	fl = t->lflush ? flush_cost(k, t->proc) : 0;
	ae = l - x / 2 > 0 ? l - x / 2 : 0;
	be = g - x / 2 > 0 ? g - x / 2 : 0;
	if (entry)
		return shift(k, t, ts, be + st, ae + fl);
	return shift(k, t, ts, x / 2 + st, x / 2 + fl);
}

void compensator__in_use(const struct compensator *k, struct comp_costs *out, uint32_t *pid,
			 unsigned *mask)
{
	const struct comp_proc *best = k->gone && k->gone->seen >= COMP_MIN_SAMPLES ? k->gone : NULL;
	unsigned p;
	size_t i;

	*out = k->c;
	out->path = NULL;
	*pid = 0;
	*mask = 0;
	for (i = 0; k->c.adapt && i < k->pcap; i++)
		if (k->procs[i] && k->procs[i]->seen >= COMP_MIN_SAMPLES &&
		    (!best || k->procs[i]->seen > best->seen))
			best = k->procs[i];
	for (p = 0; p < COMP_NATIVE; p++) {
		double l, g, x;

		figures(k, best, p, &l, &g, &x);
		out->inside_ns[p] = l;
		out->total_ns[p] = l + g;
		if (!p)
			out->exit_ns = x;
		if (best && best->e[K_LEAF + p].n >= COMP_MIN_SAMPLES &&
		    best->e[K_GAP + p].n >= COMP_MIN_SAMPLES)
			*mask |= 1u << p;
	}
	if (best && best->e[K_TAIL].n >= COMP_MIN_SAMPLES)
		*mask |= COMP_IN_USE_RETURN;
	out->flush_ns = flush_cost(k, best);
	out->stalls = k->stalls;
	out->stall_ns = k->stall_ns;
	if (best && best->e[K_FLUSH].n >= COMP_FLUSH_MIN)
		*mask |= COMP_IN_USE_FLUSH;
	if (best)
		*pid = best->pid;
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
		if (p < COMP_NATIVE)
			return native(k, call, ts, p);
		/* a native record of a Python-path function: halves of the calibrated figures */
		in = k->c.inside_ns[p];
		out = k->c.total_ns[p] - in;
		t = thread(k, (uint32_t)h->pid_tgid);
		t->lkind = 0;
		k->flusher = false;
		if (h->type == BP_REC_ENTRY || h->type == BP_REC_ENTRY_ARGS)
			return shift(k, t, ts, out / 2, in / 2);
		return shift(k, t, ts, in / 2, out / 2);
	case BP_REC_PY:
	case BP_REC_USDT:
		/*
		 * One probe hit: a Python call's start or end is half of its
		 * measured cost; a USDT hit (bpfprof.h's: a 1-byte nop,
		 * emulated) half an emulated call's.  The interval around it
		 * holds its cost: not one of the native kinds.
		 */
		p = h->type == BP_REC_PY && k->c.total_ns[COMP_PATH_PYTHON] > 0 ? COMP_PATH_PYTHON : 0;
		t = thread(k, (uint32_t)h->pid_tgid);
		t->lkind = 0;
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
