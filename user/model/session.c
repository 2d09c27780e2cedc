// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "session.h"
#include "base/util.h"

void session__init(struct bp_session *s)
{
	memset(s, 0, sizeof(*s));
}

void session__free(struct bp_session *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nmodules; i++) {
		free(s->modules[i].path);
		free(s->modules[i].build_id);
	}
	for (i = 0; i < s->nfuncs; i++) {
		free(s->funcs[i].name);
		free(s->funcs[i].file);
		free(s->funcs[i].sig);
	}
	for (i = 0; i < s->nprocs; i++)
		free(s->procs[i].name);
	free(s->modules);
	free(s->funcs);
	free(s->timing);
	free(s->paths);
	free(s->path_hash);
	free(s->threads);
	free(s->procs);
	for (i = 0; i < s->nprobes; i++)
		free(s->probes[i]);
	free(s->probes);
	free(s->lost_per_cpu);
	free(s->cmdline);
	free(s->hostname);
	free(s->kernel);
	memset(s, 0, sizeof(*s));
}

/* Grows an array by one element when n is a power of two (amortised doubling). */
static void *grow(void *arr, size_t n, size_t elem)
{
	if (n == 0 || (n & (n - 1)) == 0)
		arr = xrealloc(arr, (n ? n * 2 : 8) * elem);
	return arr;
}

uint32_t session__add_module(struct bp_session *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->nmodules; i++)
		if (strcmp(s->modules[i].path, path) == 0)
			return i;
	s->modules = grow(s->modules, s->nmodules, sizeof(*s->modules));
	s->modules[s->nmodules].path = xstrdup(path);
	s->modules[s->nmodules].build_id = NULL;
	return s->nmodules++;
}

void session__module_build_id(struct bp_session *s, uint32_t mid, const char *id)
{
	if (mid < s->nmodules && id && *id && !s->modules[mid].build_id)
		s->modules[mid].build_id = xstrdup(id);
}

uint32_t session__add_func(struct bp_session *s, const struct bp_func *f)
{
	s->funcs = grow(s->funcs, s->nfuncs, sizeof(*s->funcs));
	s->funcs[s->nfuncs] = *f;
	s->funcs[s->nfuncs].name = xstrdup(f->name);
	s->funcs[s->nfuncs].file = f->file ? xstrdup(f->file) : NULL;
	s->funcs[s->nfuncs].sig = f->sig ? xstrdup(f->sig) : NULL;
	return s->nfuncs++;
}

static size_t thread_pos(const struct bp_session *s, uint32_t tid)
{
	return lower_bound(s->nthreads, s->threads[at].tid < tid);
}

struct bp_thread *session__find_thread(const struct bp_session *s, uint32_t tid)
{
	size_t i = thread_pos(s, tid);

	return i < s->nthreads && s->threads[i].tid == tid ? &s->threads[i] : NULL;
}

/* The returned pointer is valid until the next thread is added. */
size_t session__prune_threads(struct bp_session *s, uint64_t before)
{
	size_t i, j, n;

	for (i = j = 0; i < s->nthreads; i++) {
		if (s->threads[i].exited && s->threads[i].last_ts < before)
			continue;
		if (i != j)
			s->threads[j] = s->threads[i];
		j++;
	}
	n = s->nthreads - j;
	s->nthreads = j;
	return n;
}

size_t session__prune_procs(struct bp_session *s, bool (*alive)(uint32_t pid, void *ctx),
			    void *ctx)
{
	size_t i, j, t, n;

	for (i = j = 0; i < s->nprocs; i++) {
		bool used = alive(s->procs[i].pid, ctx);

		/* threads are sorted by tid, not pid: a walk per dead process */
		for (t = 0; !used && t < s->nthreads; t++)
			used = s->threads[t].pid == s->procs[i].pid;
		if (!used) {
			free(s->procs[i].name);
			continue;
		}
		if (i != j)
			s->procs[j] = s->procs[i];
		j++;
	}
	n = s->nprocs - j;
	s->nprocs = j;
	return n;
}

struct bp_thread *session__thread(struct bp_session *s, uint32_t tid, uint32_t pid)
{
	size_t i = thread_pos(s, tid);
	struct bp_thread *t;

	if (i < s->nthreads && s->threads[i].tid == tid) {
		t = &s->threads[i];
		if (pid && t->pid != pid)
			t->pid = pid;
		return t;
	}
	s->threads = grow(s->threads, s->nthreads, sizeof(*s->threads));
	memmove(&s->threads[i + 1], &s->threads[i], (s->nthreads - i) * sizeof(*s->threads));
	s->nthreads++;
	t = &s->threads[i];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid ? pid : tid;
	return t;
}

struct bp_process *session__process(struct bp_session *s, uint32_t pid)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	s->procs = grow(s->procs, s->nprocs, sizeof(*s->procs));
	memset(&s->procs[s->nprocs], 0, sizeof(*s->procs));
	s->procs[s->nprocs].pid = pid;
	return &s->procs[s->nprocs++];
}

void session__set_process_name(struct bp_session *s, uint32_t pid, const char *name)
{
	struct bp_process *p = session__process(s, pid);

	free(p->name);
	p->name = xstrdup(name);
}

const char *session__func_name(const struct bp_session *s, uint32_t func)
{
	return func < s->nfuncs ? s->funcs[func].name : "[unknown]";
}

size_t session__task_marker(const struct bp_session *s, uint32_t func, const char **name,
			    bool *awaiter)
{
	static const char task[] = "[task ", by[] = "[awaited by ";
	const char *n = func < s->nfuncs && (s->funcs[func].flags & BP_FUNC_PYTASK) ?
				s->funcs[func].name : NULL;
	size_t len = n ? strlen(n) : 0;

	if (len > sizeof(by) && !strncmp(n, by, sizeof(by) - 1)) {
		*awaiter = true;
		*name = n + sizeof(by) - 1;
		return len - sizeof(by);
	}
	if (len > sizeof(task) && !strncmp(n, task, sizeof(task) - 1)) {
		*awaiter = false;
		*name = n + sizeof(task) - 1;
		return len - sizeof(task);
	}
	return 0;
}

static size_t path_slot(const struct bp_session *s, uint32_t parent, uint32_t func)
{
	uint64_t h = ((uint64_t)parent << 32 | func) * 0x9e3779b97f4a7c15ull;

	return (h >> 32) & (s->path_hash_cap - 1);
}

static void path_rehash(struct bp_session *s)
{
	size_t i;

	free(s->path_hash);
	s->path_hash_cap = s->path_hash_cap ? s->path_hash_cap * 2 : 1024;
	s->path_hash = xcalloc(s->path_hash_cap, sizeof(*s->path_hash));
	for (i = 1; i < s->npaths; i++) {
		size_t j = path_slot(s, s->paths[i].parent, s->paths[i].func);

		while (s->path_hash[j])
			j = (j + 1) & (s->path_hash_cap - 1);
		s->path_hash[j] = i;
	}
}

uint32_t session__path(struct bp_session *s, uint32_t parent, uint32_t func)
{
	size_t j;

	if (!s->npaths) {
		s->paths = grow(s->paths, 0, sizeof(*s->paths));
		s->paths[0].parent = 0;
		s->paths[0].func = UINT32_MAX;
		s->npaths = 1;
	}
	if ((s->npaths + 1) * 2 > s->path_hash_cap)
		path_rehash(s);
	j = path_slot(s, parent, func);
	while (s->path_hash[j]) {
		const struct bp_path *p = &s->paths[s->path_hash[j]];

		if (p->parent == parent && p->func == func)
			return s->path_hash[j];
		j = (j + 1) & (s->path_hash_cap - 1);
	}
	s->paths = grow(s->paths, s->npaths, sizeof(*s->paths));
	s->paths[s->npaths].parent = parent;
	s->paths[s->npaths].func = func;
	s->path_hash[j] = s->npaths;
	return s->npaths++;
}

size_t session__path_funcs(const struct bp_session *s, uint32_t path, uint32_t *funcs, size_t max)
{
	size_t n = 0, i;
	uint32_t p;

	for (p = path; p && p < s->npaths; p = s->paths[p].parent)
		n++;
	if (n > max)
		n = max;	/* keep the innermost frames */
	i = n;
	for (p = path; p && p < s->npaths && i; p = s->paths[p].parent)
		funcs[--i] = s->paths[p].func;
	return n;
}

const char *session__edge_kind(uint32_t kind)
{
	switch (kind) {
	case BP_EDGE_FORK:
		return "fork";
	case BP_EDGE_WAKEUP:
		return "wakeup";
	case BP_EDGE_DATA:
		return "data";
	case BP_EDGE_RESUME:
		return "resume";
	case BP_EDGE_SPAWN:
		return "spawn";
	case BP_EDGE_COMPLETE:
		return "complete";
	default:
		return "unknown";
	}
}

const char *session__func_module(const struct bp_session *s, uint32_t func)
{
	const char *path, *base;

	if (func >= s->nfuncs || s->funcs[func].module >= s->nmodules)
		return "";
	path = s->modules[s->funcs[func].module].path;
	base = strrchr(path, '/');
	return base ? base + 1 : path;
}
