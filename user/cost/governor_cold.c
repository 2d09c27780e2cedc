// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The breakpoints of new processes (see governor.h): every process that
 * maps a file of probed functions gets an int3 written into its copy of the
 * file's text for each of them, at its exec or dlopen, before it runs a
 * line.  A compiler exec'd once per source file pays it each time: cc1's
 * 39,488 probes cost ~75 ms of system time per process, against 30-100 ms
 * of its own work per file.  The calls' estimate does not see that, and the
 * drops it makes touch only functions that are called.  Here: each process
 * seen calling a file's functions is charged GOV_INSTALL_NS per probe kept
 * on the file; over the limit, once a process of the file has run to its
 * end, the file's functions no process called so far are dropped (those
 * that matter were called in it), named with that reason.
 */
#include <stdlib.h>
#include <string.h>
#include "governor.h"
#include "decode/decode.h"
#include "base/log.h"
#include "base/util.h"

#include "internal.h"

uint32_t gov_file_of(struct governor *g, const char *path)
{
	size_t i;

	for (i = 0; i < g->nfiles; i++)
		if (!strcmp(g->files[i].path, path))
			return (uint32_t)i;
	g->files = xrealloc(g->files, (g->nfiles + 1) * sizeof(*g->files));
	memset(&g->files[g->nfiles], 0, sizeof(*g->files));
	g->files[g->nfiles].path = path;
	return (uint32_t)g->nfiles++;
}

void gov_kept(struct governor *g, uint32_t f, int delta)
{
	uint32_t gi = f < g->cap ? g->group_of[f] : 0;

	if (gi && (delta > 0 || g->files[g->groups[gi].file].nkept))
		g->files[g->groups[gi].file].nkept += delta;
}

void gov_cold_event(struct governor *g, uint32_t f, uint32_t pid)
{
	struct gov_file *fl = &g->files[g->groups[g->group_of[f]].file];
	size_t i;

	if (pid == fl->last_pid)
		return;
	fl->last_pid = pid;
	for (i = fl->npids; i > 0; i--)
		if (fl->pids[i - 1] == pid)
			return;
	if (fl->npids >= GOV_FILE_PIDS_MAX)
		return;
	fl->pids = xrealloc(fl->pids, (fl->npids + 1) * sizeof(*fl->pids));
	fl->pids[fl->npids++] = pid;
	fl->procs_w++;
	g->install_w += (double)fl->nkept * GOV_INSTALL_NS;
}

/* Has one of fl's processes ended (its main thread's exit decoded: every call of it read)? */
static bool one_ended(const struct governor *g, const struct gov_file *fl)
{
	size_t i;

	for (i = 0; i < fl->npids; i++) {
		const struct bp_thread *t = session__find_thread(g->s, fl->pids[i]);

		if (t && t->exited)
			return true;
	}
	return false;
}

/*
 * Are all of group gi's functions (those still in it) never called?  Only
 * such a group is swept: its re-link registers nothing anew, it only goes
 * (the links of a group with called functions would be made again for
 * them, seconds for cc1's thousands of groups, while its processes wait).
 */
static bool whole_cold(const struct governor *g, size_t gi, const uint8_t *open)
{
	const struct gov_group *grp = &g->groups[gi];
	size_t j;

	for (j = 0; j < grp->n; j++) {
		uint32_t f = grp->funcs[j];

		if (g->group_of[f] == gi && !g->dropped[f] && (g->calls[f] || open[f]))
			return false;
	}
	return true;
}

/* Marks fi's never-called functions dropped, into c; returns how many. */
static size_t sweep_file(struct governor *g, uint32_t fi, struct gov_cand *c, double per,
			 const uint8_t *open)
{
	size_t gi, j, n = 0;

	for (gi = 1; gi < g->ngroups; gi++) {
		struct gov_group *grp = &g->groups[gi];

		if (grp->file != fi || __atomic_load_n(&g->busy[gi], __ATOMIC_SEQ_CST))
			continue;	/* a group being re-linked keeps its functions this time */
		if (!whole_cold(g, gi, open))
			continue;	/* its re-link would register its called functions anew */
		for (j = 0; j < grp->n; j++) {
			uint32_t f = grp->funcs[j];

			/* a call open (make's main) has not ended yet: not never called */
			if (g->dropped[f] || g->calls[f] || open[f] || g->group_of[f] != gi)
				continue;
			g->dropped[f] = 1;
			g->ndropped++;
			gov_kept(g, f, -1);
			memset(&c[n], 0, sizeof(c[n]));
			c[n].func = f;
			c[n].cold = true;
			c[n].cost = c[n].save = per;
			n++;
		}
	}
	return n;
}

/* fi's functions probed and not dropped, counted anew (a re-link that failed un-drops some) */
static size_t file_kept(const struct governor *g, uint32_t fi)
{
	size_t gi, j, n = 0;

	for (gi = 1; gi < g->ngroups; gi++)
		for (j = 0; g->groups[gi].file == fi && j < g->groups[gi].n; j++) {
			uint32_t f = g->groups[gi].funcs[j];

			n += g->group_of[f] == gi && !g->dropped[f];
		}
	return n;
}

double gov_sweep_cold(struct governor *g, struct gov_cand **c, size_t *nc, double base)
{
	uint8_t *open = NULL;
	double saved = 0;
	size_t fi, n;

	*c = NULL;
	*nc = 0;
	for (fi = 0; fi < g->nfiles; fi++) {
		struct gov_file *fl = &g->files[fi];
		double per = (double)fl->procs_w * GOV_INSTALL_NS;

		if (fl->swept || !fl->nkept || per * (double)fl->nkept < base * GOV_SMALL_SHARE ||
		    !one_ended(g, fl))
			continue;
		if (!open) {
			open = xcalloc(g->cap ? g->cap : 1, 1);
			decoder__mark_open(g->dec, open, g->cap);
		}
		fl->nkept = file_kept(g, (uint32_t)fi);
		*c = xrealloc(*c, (*nc + fl->nkept + 1) * sizeof(**c));
		n = sweep_file(g, (uint32_t)fi, *c + *nc, per, open);
		fl->swept = true;
		fl->swept_n = n;
		fl->swept_procs = fl->npids;
		p_dbg("governor: %zu functions of %s never called in its first %zu processes dropped "
		      "(%zu new in the window: %.3f s of breakpoints)", n, fl->path, fl->npids,
		      fl->procs_w, per * (double)n / 1e9);
		*nc += n;
		saved += per * (double)n;
	}
	free(open);
	return saved;
}
