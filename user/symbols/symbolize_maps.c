// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Each process's code mappings, as the symbolizer knows them: /proc/PID/maps
 * where the process is there to read, the BP_REC_MMAP records sent from BPF
 * at its mmaps and execs (so a process gone before its stacks are decoded
 * keeps its libraries), its parent's at fork.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "internal.h"
#include "procmaps.h"
#include "model/session.h"
#include "symbolize.h"
#include "unwind.h"
#include "base/log.h"

static int file_index(struct symbolizer *sy, uint32_t pid, const char *path)
{
	char full[4200];
	struct stat st;
	size_t i;

	/* Through /proc/PID/root: the process may live in another mount namespace. */
	snprintf(full, sizeof(full), "/proc/%u/root%s", pid, path);
	if (stat(full, &st) && stat(path, &st))
		return -1;
	for (i = 0; i < sy->nfiles; i++)
		if (sy->files[i].dev == st.st_dev && sy->files[i].ino == st.st_ino &&
		    sy->files[i].size == st.st_size &&
		    sy->files[i].mtime.tv_sec == st.st_mtim.tv_sec &&
		    sy->files[i].mtime.tv_nsec == st.st_mtim.tv_nsec)
			return i;
	sy->files = xrealloc(sy->files, (sy->nfiles + 1) * sizeof(*sy->files));
	memset(&sy->files[sy->nfiles], 0, sizeof(*sy->files));
	sy->files[sy->nfiles].path = xstrdup(path);
	sy->files[sy->nfiles].dev = st.st_dev;
	sy->files[sy->nfiles].ino = st.st_ino;
	sy->files[sy->nfiles].mtime = st.st_mtim;
	sy->files[sy->nfiles].size = st.st_size;
	sy->files[sy->nfiles].module = session__add_module(sy->s, path);
	sy->files[sy->nfiles].err = 1;	/* symbols not read yet */
	return sy->nfiles++;
}

static struct proc_maps *proc_of(struct symbolizer *sy, uint32_t pid)
{
	size_t i;

	for (i = 0; i < sy->nprocs; i++)
		if (sy->procs[i].pid == pid)
			return &sy->procs[i];
	return NULL;
}

/*
 * The file of the old mapping at the same start, offset and path (-1: none;
 * both lists in address order): a BP_REC_MMAP record changes one mapping,
 * the others' files need no stat again.
 */
static int known_file(const struct symbolizer *sy, const struct mapping *old, size_t nold,
		      size_t *at, const struct procmap *pm)
{
	while (*at < nold && old[*at].start < pm->start)
		(*at)++;
	return *at < nold && old[*at].start == pm->start && old[*at].pgoff == pm->pgoff &&
	       old[*at].file >= 0 && !strcmp(sy->files[old[*at].file].path, pm->path) ?
	       old[*at].file : -1;
}

/* The mappings of pm are text (taken) from now on. */
static void set_maps(struct symbolizer *sy, struct proc_maps *pm, char *text)
{
	struct mapping *old = pm->v;
	size_t j, nold = pm->n, at = 0;
	char *line, *nl;

	if (pm->text && !strcmp(pm->text, text)) {
		free(text);
		return;
	}
	pm->v = NULL;
	pm->n = 0;
	free(pm->text);
	pm->text = text;
	pm->gen++;
	text = xstrdup(text);	/* parsed in place */
	for (line = text; *line; line = nl + 1) {
		struct procmap pmap;
		struct mapping *m;

		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line) - 1;
		else
			*nl = 0;
		if (!procmaps__parse(line, &pmap) || pmap.perms[2] != 'x')
			continue;	/* only executable mappings hold code */
		pm->v = xrealloc(pm->v, (pm->n + 1) * sizeof(*pm->v));
		m = &pm->v[pm->n++];
		m->start = pmap.start;
		m->end = pmap.end;
		m->pgoff = pmap.pgoff;
		m->file = -1;
		m->special = NULL;
		if (pmap.path[0] == '/') {
			m->file = known_file(sy, old, nold, &at, &pmap);
			if (m->file < 0)
				m->file = file_index(sy, pm->pid, pmap.path);
		}
		if (m->file < 0)	/* anonymous, [vdso], or a file gone since */
			m->special = xstrdup(pmap.path[0] ? pmap.path : "[anon]");
	}
	free(text);
	for (j = 0; j < nold; j++)
		free(old[j].special);
	free(old);
}

static void read_maps(struct symbolizer *sy, struct proc_maps *pm)
{
	char *text = procmaps__read(pm->pid);

	/*
	 * Gone, or exited and not yet reaped (a zombie's maps read empty: a
	 * stack of its last moments decoded then would wipe its mappings):
	 * what was read before, and what BP_REC_MMAP told, is the best there is.
	 */
	if (!text || !*text)
		free(text);
	else
		set_maps(sy, pm, text);
}

void symbolizer__preload(struct symbolizer *sy, uint32_t pid)
{
	struct proc_maps *pm = proc_of(sy, pid);

	if (!pm) {
		sy->procs = xrealloc(sy->procs, (sy->nprocs + 1) * sizeof(*sy->procs));
		pm = &sy->procs[sy->nprocs++];
		memset(pm, 0, sizeof(*pm));
		pm->pid = pid;
	}
	read_maps(sy, pm);
}

struct proc_maps *symbolizer_proc(struct symbolizer *sy, uint32_t pid)
{
	if (!proc_of(sy, pid))
		symbolizer__preload(sy, pid);
	return proc_of(sy, pid);
}

void symbolizer__mapped(struct symbolizer *sy, uint32_t pid, const struct procmap *m)
{
	struct proc_maps *pm = symbolizer_proc(sy, pid);

	set_maps(sy, pm, procmaps__insert(pm->text, m));
}

void symbolizer__forked(struct symbolizer *sy, uint32_t parent, uint32_t child)
{
	struct proc_maps *pc;

	if (proc_of(sy, child))
		return;
	if (!proc_of(sy, parent))
		symbolizer__preload(sy, parent);
	if (!proc_of(sy, parent)->text)
		return;	/* the parent is gone too: the child's own /proc, when asked */
	sy->procs = xrealloc(sy->procs, (sy->nprocs + 1) * sizeof(*sy->procs));
	pc = &sy->procs[sy->nprocs++];
	memset(pc, 0, sizeof(*pc));
	pc->pid = child;
	set_maps(sy, pc, xstrdup(proc_of(sy, parent)->text));
}

void symbolizer__forget(struct symbolizer *sy, uint32_t pid)
{
	struct proc_maps *pm = proc_of(sy, pid);

	/*
	 * exec: the new image is mapped now.  Gone already: the old image's
	 * mappings (a forked child's copy of its parent's) are wrong from here
	 * on, and the new image's BP_REC_MMAP records follow this exec's.
	 */
	if (pm) {
		char *text = procmaps__read(pid);

		if (!text || !*text) {
			free(text);
			text = xstrdup("");
		}
		set_maps(sy, pm, text);
	}
	unwinder__forget(sy->uw, pid);
}

const struct mapping *symbolizer_find_map(struct symbolizer *sy, uint32_t pid, uint64_t addr)
{
	struct proc_maps *pm = symbolizer_proc(sy, pid);
	size_t i;

	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < pm->n; i++)
			if (addr >= pm->v[i].start && addr < pm->v[i].end)
				return &pm->v[i];
		/* dlopen'd since: re-read, but not forever for a wild address */
		if (pass || pm->reread > 64)
			break;
		pm->reread++;
		read_maps(sy, pm);
	}
	return NULL;
}
