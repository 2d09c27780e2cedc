// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The governor's links: made per group, re-made without dropped functions (governor.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* Attaches grp's functions with its generation in the cookies; refused ones leave the group. */
int gov_link_group(struct governor *g, uint32_t gi, struct gov_group *grp, uint16_t gen,
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
	if (!err)
		g->nlinks_live += *nlinks;
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

void gov_destroy_links(struct bpf_link **links, size_t n)
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
	for (i = 0; i < rp->ndoomed; i++)
		gov_doomed_done(g, &rp->doomed[i]);
	pthread_mutex_unlock(&g->lock);
	atomic_store(&rp->done, true);
	return NULL;
}

/* Joins the re-link threads that are done (all: wait for each). */
void gov_join_reaps(struct governor *g, bool all)
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
 * Gives the old links of the doomed groups to the closer (base/closer.h):
 * their probes go as soon as its process for each closes it, whatever the
 * grace period that follows.  Those groups stay in phase X for GOV_X_NS
 * (gov_end_x); that they need not wait for the links' removal to end it:
 * once the word names the new generation alone, an old link that is still
 * there records nothing (trace.bpf.c gov_slow), and a return whose entry
 * went through it reaches the new link's return probe.  Moves the groups
 * done to the front of d; returns how many (those left go to a re-link
 * thread, the slow way).
 */
static size_t give_away(struct governor *g, struct gov_doomed *d, size_t nd)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	size_t i, j, n = 0;

	for (i = 0; i < nd && g->closer.sock >= 0; i++) {
		struct gov_doomed t;

		for (j = d[i].nlinks; j; j--) {
			/* backwards as gov_destroy_links: each entry link before its return link */
			if (closer__give(&g->closer, bpf_link__fd(d[i].links[j - 1])))
				break;
			bpf_link__destroy(d[i].links[j - 1]);	/* our copy: the closer's is the last */
			closer__given(&g->closer);
		}
		d[i].nlinks = j;
		if (j)
			continue;	/* the rest the slow way */
		free(d[i].links);
		d[i].links = NULL;
		d[i].since = now;
		g->xs = xrealloc(g->xs, (g->nxs + 1) * sizeof(*g->xs));
		g->xs[g->nxs++] = d[i];
		t = d[n];
		d[n++] = d[i];
		d[i] = t;
	}
	return n;
}

/*
 * The group's word becomes its new generation alone, then (not before: the
 * old link would record what the moved function's own link records without
 * its mark) each moved function's group records alone too.
 */
void gov_doomed_done(struct governor *g, struct gov_doomed *d)
{
	size_t i;

	if (!g->closing)
		__atomic_store_n(&g->words[d->group], BP_GOV_WORD(d->gen, 0), __ATOMIC_SEQ_CST);
	for (i = 0; i < d->nmoved; i++)
		if (!g->closing)
			__atomic_store_n(&g->words[d->moved[i]], BP_GOV_WORD(0, 0),
					 __ATOMIC_SEQ_CST);
	for (i = 0; i < d->nmoved; i++)
		__atomic_store_n(&g->busy[d->moved[i]], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&g->busy[d->group], 0, __ATOMIC_SEQ_CST);
	free(d->moved);
	d->moved = NULL;
	d->nmoved = 0;
}

void gov_end_x(struct governor *g, bool all)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	size_t i, j;

	pthread_mutex_lock(&g->lock);
	for (i = j = 0; i < g->nxs; i++) {
		struct gov_doomed *x = &g->xs[i];

		if (!all && now - x->since < GOV_X_NS) {
			g->xs[j++] = *x;
			continue;
		}
		gov_doomed_done(g, x);
	}
	g->nxs = j;
	pthread_mutex_unlock(&g->lock);
}

/* Links no longer wanted: to the closer (their probes go at once), else destroyed here. */
static void gov_let_go(struct governor *g, struct bpf_link **links, size_t n)
{
	while (n && g->closer.sock >= 0 && !closer__give(&g->closer, bpf_link__fd(links[n - 1]))) {
		bpf_link__destroy(links[--n]);	/* our copy: the closer's is the last */
		closer__given(&g->closer);
	}
	gov_destroy_links(links, n);
	g->nlinks_live -= g->nlinks_live < n ? g->nlinks_live : n;
}

/*
 * Moves grp's function j (kept, seen called) to a new group of its own:
 * links made in phase A (its word names a generation no link has), so the
 * old group's link goes on recording it until the re-link's X.  Returns the
 * new group, or 0 (no room, or no link: it stays in the old group's rest).
 */
static uint32_t move_out(struct governor *g, const struct gov_group *grp, size_t j)
{
	uint32_t si = (uint32_t)g->ngroups, f = grp->funcs[j];
	struct gov_group *sg = &g->groups[si];
	uint64_t refused[1];
	size_t nref = 0;

	if (g->ngroups + GOV_GROUPS_RESERVED >= BP_GOV_GROUPS ||
	    g->nlinks_live + 2 > g->move_fds)
		return 0;
	memset(sg, 0, sizeof(*sg));
	sg->path = grp->path;
	sg->file = grp->file;
	sg->entry_only = grp->entry_only;
	sg->n = 1;
	sg->funcs = xcalloc(1, sizeof(*sg->funcs));
	sg->offsets = xcalloc(1, sizeof(*sg->offsets));
	sg->funcs[0] = f;
	sg->offsets[0] = grp->offsets[j];
	__atomic_store_n(&g->words[si], BP_GOV_WORD(1, 0), __ATOMIC_SEQ_CST);
	if (gov_link_group(g, si, sg, 0, &sg->links, &sg->nlinks, refused, &nref) || !sg->n) {
		__atomic_store_n(&g->words[si], 0, __ATOMIC_SEQ_CST);
		g->group_of[f] = g->group_of[f] ? g->group_of[f] : (uint32_t)(grp - g->groups);
		free(sg->funcs);
		free(sg->offsets);
		memset(sg, 0, sizeof(*sg));
		return 0;
	}
	g->ngroups++;
	return si;
}

/* Undoes move_out()s whose old group could not be re-linked: they never recorded. */
static void unmove(struct governor *g, uint32_t *moved, size_t n)
{
	while (n--) {
		struct gov_group *sg = &g->groups[moved[n]];

		gov_let_go(g, sg->links, sg->nlinks);
		free(sg->funcs);
		free(sg->offsets);
		memset(sg, 0, sizeof(*sg));
		if (moved[n] + 1 == g->ngroups)
			g->ngroups--;
	}
	free(moved);
}

/* -v: one group's re-link, what it dropped, what it moved (names, for tests and the curious). */
static void log_group(const struct governor *g, const struct gov_group *grp, const uint32_t *moved,
		      size_t nm, size_t nrest)
{
	char dropped[512] = "", mv[1024] = "";
	size_t j, ld = 0, lm = 0, nd = 0;

	for (j = 0; j < grp->n; j++) {
		if (!g->dropped[grp->funcs[j]])
			continue;
		nd++;
		if (ld < sizeof(dropped) - 1)
			ld += snprintf(dropped + ld, sizeof(dropped) - ld, " %s",
				       session__func_name(g->s, grp->funcs[j]));
	}
	for (j = 0; j < nm; j++)
		if (lm < sizeof(mv) - 1)
			lm += snprintf(mv + lm, sizeof(mv) - lm, " %s",
				       session__func_name(g->s, g->groups[moved[j]].funcs[0]));
	p_dbg("governor: group %zu re-linked: %zu dropped:%s; %zu kept re-registered, %zu of them "
	      "moved to groups of their own:%s", (size_t)(grp - g->groups), nd, dropped, nrest + nm,
	      nm, nm ? mv : " none");
}

/*
 * f of a swept file (governor_cold.c), never called and no call of it
 * open: dropped as its sweep dropped the others, into j's candidates (said
 * and annotated with them), not registered anew with its group's rest.
 * Those re-registrations were most of what a drop cost in a compiler (make
 * -j2: 22,862 kept functions re-registered, 19,000 of them never called,
 * each under the kernel's uprobe write lock, while the decoder waited).
 */
static bool drop_cold(struct governor *g, struct gov_job *j, const struct gov_group *grp,
		      uint32_t f, const uint8_t *open)
{
	const struct gov_file *fl = &g->files[grp->file];
	struct gov_cand *c;

	if (!open || !fl->swept || g->calls[f] || open[f])
		return false;
	g->dropped[f] = 1;
	g->ndropped++;
	gov_kept(g, f, -1);
	j->c = xrealloc(j->c, (j->nc + j->ncold + 1) * sizeof(*j->c));
	c = &j->c[j->nc + j->ncold++];
	memset(c, 0, sizeof(*c));
	c->func = f;
	c->cold = true;
	c->cost = c->save = (double)fl->procs_w * GOV_INSTALL_NS;
	return true;
}

/*
 * Re-links group gi without its dropped functions (phase A), its warm kept
 * ones each moved to a group of its own (move_out), then moves it to phase
 * X: first its word, then each moved function's (see gov_doomed_done()).
 * Its never-called ones of a swept file go (drop_cold()).
 * Fills d with its old links.  -errno: the group keeps its old links, and
 * its functions are not dropped.
 */
static int relink_group(struct governor *g, uint32_t gi, struct gov_doomed *d, struct gov_job *jb,
			const uint8_t *open)
{
	size_t *nkept = &jb->nkept, *nmoved = &jb->nmoved, ncold0 = jb->ncold;
	struct gov_group *grp = &g->groups[gi], ng = *grp;
	uint32_t *moved = xcalloc(grp->n ? grp->n : 1, sizeof(*moved));
	uint64_t *refused;
	size_t j, nm = 0, nref = 0;
	int err;

	ng.funcs = xcalloc(grp->n ? grp->n : 1, sizeof(*ng.funcs));
	ng.offsets = xcalloc(grp->n ? grp->n : 1, sizeof(*ng.offsets));
	for (j = ng.n = 0; j < grp->n; j++) {
		uint32_t f = grp->funcs[j];

		if (g->dropped[f] || drop_cold(g, jb, grp, f, open))
			continue;
		if (grp->n > 1 && g->calls[f] && (moved[nm] = move_out(g, grp, j))) {
			nm++;
			continue;
		}
		ng.funcs[ng.n] = f;
		ng.offsets[ng.n++] = grp->offsets[j];
	}
	ng.gen = (grp->gen + 1) & BP_GOV_GEN_MASK;
	ng.links = NULL;
	ng.nlinks = 0;
	refused = xcalloc(ng.n ? ng.n : 1, sizeof(*refused));
	/* A: the new links record nothing yet (the word still names the old generation) */
	err = ng.n ? gov_link_group(g, gi, &ng, ng.gen, &ng.links, &ng.nlinks, refused, &nref) : 0;
	free(refused);
	if (err) {
		p_warn("--max-overhead: cannot re-link %zu functions of %s: %s; none of them "
		       "is dropped", ng.n + nm, grp->path, strerror(-err));
		for (; jb->ncold > ncold0; jb->ncold--) {
			uint32_t f = jb->c[jb->nc + jb->ncold - 1].func;

			g->ndropped--;
			gov_kept(g, f, 1);
		}
		for (j = 0; j < grp->n; j++)
			g->dropped[grp->funcs[j]] = 0;
		__atomic_store_n(&g->busy[gi], 0, __ATOMIC_SEQ_CST);
		unmove(g, moved, nm);
		free(ng.funcs);
		free(ng.offsets);
		return err;
	}
	*nkept += ng.n + nm;
	*nmoved += nm;
	if (verbose)
		log_group(g, grp, moved, nm, ng.n);
	for (j = 0; j < grp->n; j++) {
		__u32 key = grp->funcs[j];
		__u8 one = 1;

		if (g->dropped[key] && bpf_map_update_elem(g->dropped_fd, &key, &one, BPF_ANY))
			p_dbg("governor: cannot mark function %u dropped: %s", key, strerror(errno));
	}
	g->busy[gi] = 1;
	d->group = gi;
	d->gen = ng.gen;
	d->links = grp->links;
	d->nlinks = grp->nlinks;
	d->moved = moved;
	d->nmoved = nm;
	g->nlinks_live -= g->nlinks_live < grp->nlinks ? g->nlinks_live : grp->nlinks;
	/* X: both generations; the new one records, the old one only what the new missed */
	__atomic_store_n(&g->words[gi], BP_GOV_WORD(ng.gen, grp->gen + 1), __ATOMIC_SEQ_CST);
	/* then each moved function's own group, as a part of the new generation */
	for (j = 0; j < nm; j++) {
		g->group_of[g->groups[moved[j]].funcs[0]] = moved[j];
		g->busy[moved[j]] = 1;
		__atomic_store_n(&g->words[moved[j]], BP_GOV_WORD(0, 2), __ATOMIC_SEQ_CST);
	}
	free(grp->funcs);
	free(grp->offsets);
	*grp = ng;
	return 0;
}

/*
 * A decision's drops: the groups holding them are marked busy now (no later
 * decision picks their kept functions before their re-link's X ends) and
 * re-linked a slice at a time by gov_relink_step(), between the decoder's
 * reads: events go on being read and exec holds served while a drop of
 * many groups is under way.  Takes c (the ranking; dropped ones marked in
 * g->dropped).
 */
/* Indices into a gov_cand array: the costlier first (then the ranking's order). */
static int by_cost(const void *a, const void *b, void *ctx)
{
	const struct gov_cand *c = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (c[x].cost != c[y].cost)
		return c[x].cost < c[y].cost ? 1 : -1;
	return x < y ? -1 : x > y;
}

void gov_relink(struct governor *g, struct gov_cand *c, size_t nc, double window_s,
		double factor, size_t npy)
{
	struct gov_job *j = xcalloc(1, sizeof(*j));
	size_t i;

	j->c = c;
	j->nc = nc;
	/*
	 * The groups are re-linked in the order of what their drops save: a
	 * decision often drops hundreds of functions at once (all that tell
	 * nothing), whose re-links take seconds on a loaded machine; the
	 * costliest probes go first, not those ranked first by distortion
	 * (a function called five times can top that ranking).
	 */
	j->order = xcalloc(nc ? nc : 1, sizeof(*j->order));
	for (i = 0; i < nc; i++)
		j->order[i] = i;
	qsort_r(j->order, nc, sizeof(*j->order), by_cost, c);
	j->window_s = window_s;
	j->factor = factor;
	j->npy = npy;
	j->done = xcalloc(nc ? nc : 1, sizeof(*j->done));
	j->slow = xcalloc(nc ? nc : 1, sizeof(*j->slow));
	for (i = 0; i < nc; i++)
		if (g->group_of[c[i].func] && g->dropped[c[i].func])
			__atomic_store_n(&g->busy[g->group_of[c[i].func]], 1, __ATOMIC_SEQ_CST);
	g->jobs = xrealloc(g->jobs, (g->njobs + 1) * sizeof(*g->jobs));
	g->jobs[g->njobs++] = j;
}

void gov_relink_first(struct governor *g, struct gov_cand *c, size_t nc, double window_s,
		      double factor)
{
	struct gov_job *j;

	gov_relink(g, c, nc, window_s, factor, 0);
	j = g->jobs[g->njobs - 1];
	memmove(g->jobs + 1, g->jobs, (g->njobs - 1) * sizeof(*g->jobs));
	g->jobs[0] = j;
}

/* The old links the closer could not take go to a thread of their own, the slow way. */
static void reap_slow(struct governor *g, struct gov_doomed *d, size_t nd)
{
	struct gov_reap *rp;

	if (!nd) {
		free(d);
		return;
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
		return;
	}
	g->reaps = xrealloc(g->reaps, (g->nreaps + 1) * sizeof(*g->reaps));
	g->reaps[g->nreaps++] = rp;
}

/* A job whose groups are all re-linked: counted, said, announced (the drops' moment). */
static void job_end(struct governor *g, struct gov_job *j)
{
	/*
	 * What a drop costs besides the probes: each kept function of a group
	 * re-registered (the kernel writes its breakpoint into every process
	 * mapping the file, under that process's mmap lock), done between the
	 * decoder's reads.
	 */
	g->relinks++;
	g->relink_groups += j->ngroups;
	g->relink_kept += j->nkept;
	g->relink_moved += j->nmoved;
	p_dbg("governor: re-linked %zu groups (%zu kept functions re-registered, %zu of them moved "
	      "to groups of their own; %zu never called dropped, not re-registered) in %.3f s of "
	      "slices", j->ngroups, j->nkept, j->nmoved, j->ncold, j->ns / 1e9);
	reap_slow(g, j->slow, j->nslow);
	if (j->ngroups || j->npy)
		gov_announce(g, j->c, j->nc + j->ncold, now_ns(CLOCK_MONOTONIC) - g->s->t0,
			     j->window_s > 0 ? j->window_s : 1e-9, j->factor, false);
	free(j->c);
	free(j->done);
	free(j->order);
	free(j);
}

/* The calls open now (decoder__mark_open()), once some file was swept: else NULL. */
static uint8_t *open_now(struct governor *g)
{
	uint8_t *open;
	size_t i;

	for (i = 0; i < g->nfiles && !g->files[i].swept; i++)
		;
	if (i == g->nfiles)
		return NULL;
	open = xcalloc(g->cap ? g->cap : 1, 1);
	decoder__mark_open(g->dec, open, g->cap);
	return open;
}

/*
 * Re-links the groups of the jobs in order, for GOV_RELINK_SLICE_NS at most
 * (at least one group), each group's old links given away as soon as its
 * new ones took over.
 */
void gov_relink_step(struct governor *g)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), last = t0, t;
	uint8_t *open = g->njobs ? open_now(g) : NULL;

	while (g->njobs) {
		struct gov_job *j = g->jobs[0];

		while (j->next < j->nc) {
			uint32_t f = j->c[j->order[j->next]].func, gi = g->group_of[f];
			struct gov_doomed d = { 0 };
			size_t k;

			if (last - t0 >= GOV_RELINK_SLICE_NS) {
				free(open);
				return;
			}
			j->next++;
			if (!gi || !g->dropped[f])
				continue;	/* a Python function (no links of its own), or kept */
			for (k = 0; k < j->ndone && j->done[k] != gi; k++)
				;
			if (k < j->ndone)
				continue;	/* done with an earlier function of the same group */
			j->done[j->ndone++] = gi;
			if (!relink_group(g, gi, &d, j, open)) {
				uint64_t tg = now_ns(CLOCK_MONOTONIC);

				j->ngroups++;
				if (!give_away(g, &d, 1))
					j->slow[j->nslow++] = d;
				g->give_ns += now_ns(CLOCK_MONOTONIC) - tg;
			}
			t = now_ns(CLOCK_MONOTONIC);
			j->ns += t - last;
			g->relink_ns += t - last;
			overhead__add_wait(g->ov, 0, (double)(t - last));
			last = t;
		}
		memmove(g->jobs, g->jobs + 1, --g->njobs * sizeof(*g->jobs));
		job_end(g, j);
	}
	free(open);
}

/*
 * The end of the recording with re-links not done: what they would have
 * dropped stays traced (not dropped, not said); what was, is announced.
 */
void gov_relink_abandon(struct governor *g)
{
	while (g->njobs) {
		struct gov_job *j = g->jobs[0];
		size_t i, k;

		for (i = j->next; i < j->nc; i++) {
			uint32_t f = j->c[j->order[i]].func, gi = g->group_of[f];

			if (!gi || !g->dropped[f])
				continue;
			for (k = 0; k < j->ndone && j->done[k] != gi; k++)
				;
			if (k < j->ndone)
				continue;	/* its group went without it */
			g->dropped[f] = 0;
			g->ndropped--;
			gov_kept(g, f, 1);
			__atomic_store_n(&g->busy[gi], 0, __ATOMIC_SEQ_CST);
		}
		j->next = j->nc;
		memmove(g->jobs, g->jobs + 1, --g->njobs * sizeof(*g->jobs));
		job_end(g, j);
	}
}
