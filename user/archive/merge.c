// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Merging several archives (runs, hosts) into one recording on one time axis
 * (the merge command's work; user/cmd/merge.c is its options).
 *
 * Event times are relative to each archive's t0 (CLOCK_MONOTONIC of its
 * host), and realtime_offset = REALTIME - MONOTONIC at its start, so an
 * event's wall time is t0 + realtime_offset + ts.  The merged recording
 * takes t0 and realtime_offset from the input that started first; every
 * other input's times move by the difference of the wall-clock starts.
 *
 * Two passes: the first reads every input's tables (event blocks are stepped
 * over, not decompressed) and builds the merged tables and the id maps; the
 * second streams each input's events, remapped, into the output.
 *
 * Functions are shared when module path, address, file offset and name all
 * match (the same binary traced twice); call paths are re-interned.  Processes
 * are never shared: a pid or tid an earlier input already uses gets a fresh
 * number, and the process name keeps the original, "calltree (host2:1234)".
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "archive.h"
#include "merge.h"
#include "replay.h"
#include "base/log.h"
#include "model/session.h"

/* uint32 -> uint32, open addressing; keys stored + 1 so 0 marks a free slot. */
struct idmap {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

static size_t idmap_slot(const struct idmap *m, uint32_t key)
{
	return (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 32) & (m->cap - 1);
}

static bool idmap_get(const struct idmap *m, uint32_t key, uint32_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	for (i = idmap_slot(m, key); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == (uint64_t)key + 1) {
			*val = m->vals[i];
			return true;
		}
	}
	return false;
}

static void idmap_put(struct idmap *m, uint32_t key, uint32_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct idmap old = *m;

		m->cap = m->cap ? m->cap * 2 : 64;
		m->keys = xcalloc(m->cap, sizeof(*m->keys));
		m->vals = xcalloc(m->cap, sizeof(*m->vals));
		m->n = 0;
		for (i = 0; i < old.cap; i++)
			if (old.keys[i])
				idmap_put(m, old.keys[i] - 1, old.vals[i]);
		free(old.keys);
		free(old.vals);
	}
	for (i = idmap_slot(m, key); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == (uint64_t)key + 1) {
			m->vals[i] = val;
			return;
		}
	}
	m->keys[i] = (uint64_t)key + 1;
	m->vals[i] = val;
	m->n++;
}

static void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

struct input {
	const char *path;
	char *host;		/* for renamed processes */
	int64_t shift;		/* ns added to every time: >= 0 */
	uint32_t *funcmap;	/* input function -> merged function */
	size_t nfuncs;
	uint32_t *pathmap;	/* input call path -> merged call path */
	size_t npaths;
	struct idmap ids;	/* pid/tid -> merged pid/tid */
};

struct merge {
	struct bp_session m;
	struct input *in;
	size_t nin;
	struct idmap used;	/* pids/tids the merged recording already has */
	uint32_t next_fresh;	/* above every pid/tid of every input */
	/* functions of the merged session, hashed for sharing */
	uint32_t *fhash;	/* index + 1, 0 = free */
	size_t fhash_cap;
	/* changes each input's tables before they are merged (symbolize), or NULL */
	void (*tables)(void *ctx, struct bp_session *s);
	void *tables_ctx;
};

static uint64_t func_key(const struct bp_func *f)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */
	const char *c;

	for (c = f->name; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	return h ^ (f->addr * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)f->module << 48) ^ f->offset;
}

static bool func_same(const struct bp_func *a, const struct bp_func *b)
{
	return a->module == b->module && a->addr == b->addr && a->offset == b->offset &&
	       !strcmp(a->name, b->name);
}

/* The merged function equal to f (module already remapped), added if new. */
static uint32_t merge_func(struct merge *g, const struct bp_func *f)
{
	size_t i = func_key(f) & (g->fhash_cap - 1);

	for (; g->fhash[i]; i = (i + 1) & (g->fhash_cap - 1))
		if (func_same(&g->m.funcs[g->fhash[i] - 1], f))
			return g->fhash[i] - 1;
	g->fhash[i] = session__add_func(&g->m, f) + 1;
	return g->fhash[i] - 1;
}

/* The merged id of an input's pid/tid: its own unless an earlier input took it. */
static uint32_t map_id(struct merge *g, struct input *in, uint32_t id)
{
	uint32_t v, dummy;

	if (idmap_get(&in->ids, id, &v))
		return v;
	v = idmap_get(&g->used, id, &dummy) ? g->next_fresh++ : id;
	idmap_put(&in->ids, id, v);
	idmap_put(&g->used, v, 1);
	return v;
}

static char *join_unique(char *acc, const char *add)
{
	char *out;
	size_t n;
	const char *p;

	if (!add || !*add)
		return acc;
	if (!acc)
		return xstrdup(add);
	/* Already in the comma-separated list? */
	n = strlen(add);
	for (p = acc; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, add, n) && (p[n] == ',' || !p[n]))
			return acc;
	}
	if (asprintf(&out, "%s,%s", acc, add) < 0)
		out = NULL;
	if (!out) {
		p_err("out of memory");
		exit(1);
	}
	free(acc);
	return out;
}

static int64_t wall_start(const struct bp_session *s)
{
	return (int64_t)(s->t0 + (uint64_t)s->realtime_offset);
}

/* Pass 1, one input: tables into the merged session, and its maps. */
static void merge_tables(struct merge *g, struct input *in, const struct bp_session *s,
			 size_t idx)
{
	struct bp_session *m = &g->m;
	uint32_t *modmap = xcalloc(s->nmodules + 1, sizeof(*modmap));
	size_t i;

	for (i = 0; i < s->nmodules; i++) {
		modmap[i] = session__add_module(m, s->modules[i].path);
		session__module_build_id(m, modmap[i], s->modules[i].build_id);
	}
	in->nfuncs = s->nfuncs;
	in->funcmap = xcalloc(s->nfuncs + 1, sizeof(*in->funcmap));
	for (i = 0; i < s->nfuncs; i++) {
		struct bp_func f = s->funcs[i];

		f.module = modmap[f.module];
		in->funcmap[i] = merge_func(g, &f);
	}
	free(modmap);

	/* Paths: parents come first in the table, so theirs are mapped already. */
	in->npaths = s->npaths ? s->npaths : 1;
	in->pathmap = xcalloc(in->npaths, sizeof(*in->pathmap));
	for (i = 1; i < s->npaths; i++)
		in->pathmap[i] = session__path(m, in->pathmap[s->paths[i].parent],
					       in->funcmap[s->paths[i].func]);

	/* Processes first: a pid keeps its number for the threads that follow. */
	for (i = 0; i < s->nprocs; i++) {
		const struct bp_process *p = &s->procs[i];
		uint32_t pid = map_id(g, in, p->pid), ppid = 0;
		struct bp_process *mp;
		char *name = NULL;

		/* A parent outside this input (the shell, bpfprof) means nothing here. */
		if (!idmap_get(&in->ids, p->ppid, &ppid))
			ppid = 0;
		mp = session__process(m, pid);
		mp->ppid = ppid;
		if (pid != p->pid) {
			if (asprintf(&name, "%s (%s:%" PRIu32 ")", p->name && *p->name ? p->name :
				     "pid", in->host, p->pid) < 0)
				name = NULL;
		}
		free(mp->name);
		mp->name = name ? name : p->name ? xstrdup(p->name) : NULL;
	}
	for (i = 0; i < s->nthreads; i++) {
		const struct bp_thread *t = &s->threads[i];
		uint32_t pid = map_id(g, in, t->pid), tid = map_id(g, in, t->tid);
		struct bp_thread *mt = session__thread(m, tid, pid);

		memcpy(mt->name, t->name, sizeof(mt->name));
		mt->first_ts = t->first_ts + in->shift;
		mt->last_ts = t->last_ts + in->shift;
		mt->exited = t->exited;
	}

	if (s->ncpus > m->ncpus) {
		m->lost_per_cpu = xrealloc(m->lost_per_cpu, s->ncpus * sizeof(*m->lost_per_cpu));
		memset(m->lost_per_cpu + m->ncpus, 0,
		       (s->ncpus - m->ncpus) * sizeof(*m->lost_per_cpu));
		m->ncpus = s->ncpus;
	}
	for (i = 0; s->lost_per_cpu && i < s->ncpus; i++)
		m->lost_per_cpu[i] += s->lost_per_cpu[i];
	m->lost_total += s->lost_total;
	for (i = 0; i < SESSION_NCOUNTERS; i++)
		m->counters[i] += s->counters[i];
	if (s->duration + in->shift > m->duration)
		m->duration = s->duration + in->shift;
	if (idx == 0) {
		m->cmdline = s->cmdline ? xstrdup(s->cmdline) : NULL;
	} else if (s->cmdline) {
		char *c;

		if (asprintf(&c, "%s; %s", m->cmdline ? m->cmdline : "", s->cmdline) >= 0) {
			free(m->cmdline);
			m->cmdline = c;
		}
	}
	m->hostname = join_unique(m->hostname, s->hostname);
	m->kernel = join_unique(m->kernel, s->kernel);
}

static uint32_t max_id(const struct bp_session *s)
{
	uint32_t mx = 0;
	size_t i;

	for (i = 0; i < s->nthreads; i++) {
		mx = s->threads[i].tid > mx ? s->threads[i].tid : mx;
		mx = s->threads[i].pid > mx ? s->threads[i].pid : mx;
	}
	for (i = 0; i < s->nprocs; i++)
		mx = s->procs[i].pid > mx ? s->procs[i].pid : mx;
	return mx;
}

static int pass1(struct merge *g)
{
	struct bp_session *tabs;
	size_t i, base = 0, nfuncs = 0;
	uint32_t mx = 0;
	int err = 0;

	tabs = xcalloc(g->nin, sizeof(*tabs));
	for (i = 0; i < g->nin; i++) {
		err = archive__read_tables(g->in[i].path, &tabs[i]);
		if (err)
			goto cleanup;
		if (g->tables)
			g->tables(g->tables_ctx, &tabs[i]);
		nfuncs += tabs[i].nfuncs;
		if (max_id(&tabs[i]) > mx)
			mx = max_id(&tabs[i]);
		if (wall_start(&tabs[i]) < wall_start(&tabs[base]))
			base = i;
	}
	g->m.t0 = tabs[base].t0;
	g->m.realtime_offset = tabs[base].realtime_offset;
	/* one recording's timing note stays true of it; several may each say another */
	if (g->nin == 1 && tabs[0].timing)
		g->m.timing = xstrdup(tabs[0].timing);
	g->next_fresh = mx + 1;
	for (g->fhash_cap = 64; g->fhash_cap < 2 * nfuncs + 2; g->fhash_cap *= 2)
		;
	g->fhash = xcalloc(g->fhash_cap, sizeof(*g->fhash));
	for (i = 0; i < g->nin; i++) {
		struct input *in = &g->in[i];

		in->shift = wall_start(&tabs[i]) - wall_start(&tabs[base]);
		if (tabs[i].hostname && *tabs[i].hostname)
			in->host = xstrdup(tabs[i].hostname);
		else if (asprintf(&in->host, "input%zu", i + 1) < 0)
			in->host = xstrdup("?");
		merge_tables(g, in, &tabs[i], i);
	}
cleanup:
	for (i = 0; i < g->nin; i++)
		session__free(&tabs[i]);
	free(tabs);
	return err;
}

/* Pass 2, one input: its events, remapped, into the output. */
struct pass2_ctx {
	struct merge *g;
	struct input *in;
	replay_fn fn;
	void *ctx;
	uint64_t id_base, top;
};

static int changed(const struct input *in)
{
	/* The same file as in pass 1: only a file changed meanwhile fails here. */
	p_err("%s: changed while merging", in->path);
	return -EAGAIN;
}

static int remap_event(void *ctx, const struct bp_session *s, const struct bp_event *orig)
{
	struct pass2_ctx *x = ctx;
	struct merge *g = x->g;
	struct input *in = x->in;
	struct bp_event ev = *orig;

	if (ev.kind == BP_EV_CALL) {
		struct bp_call *c = &ev.call;

		if (c->func >= in->nfuncs || c->path >= in->npaths)
			return changed(in);
		c->id += x->id_base;
		if (c->parent_id)
			c->parent_id += x->id_base;
		if (c->task)
			c->task += x->id_base;
		if (c->id > x->top)
			x->top = c->id;
		c->begin += in->shift;
		c->end += in->shift;
		c->pid = map_id(g, in, c->pid);
		c->tid = map_id(g, in, c->tid);
		c->func = in->funcmap[c->func];
		c->path = in->pathmap[c->path];
	} else if (ev.kind == BP_EV_LOSS) {
		ev.loss.ts += in->shift;
	} else if (ev.kind == BP_EV_SAMPLE) {
		struct bp_sample *sm = &ev.sample;

		if (sm->path >= in->npaths)
			return changed(in);
		sm->ts += in->shift;
		sm->pid = map_id(g, in, sm->pid);
		sm->tid = map_id(g, in, sm->tid);
		sm->path = in->pathmap[sm->path];
	} else if (ev.kind == BP_EV_EDGE) {
		struct bp_edge *ed = &ev.edge;

		if (ed->src_func >= in->nfuncs || ed->dst_func >= in->nfuncs)
			return changed(in);
		/* Edges name calls by id: the same offset as the calls'. */
		if (ed->src_call)
			ed->src_call += x->id_base;
		if (ed->dst_call)
			ed->dst_call += x->id_base;
		ed->src_ts += in->shift;
		ed->dst_ts += in->shift;
		ed->src_pid = map_id(g, in, ed->src_pid);
		ed->src_tid = map_id(g, in, ed->src_tid);
		ed->dst_pid = map_id(g, in, ed->dst_pid);
		ed->dst_tid = map_id(g, in, ed->dst_tid);
		ed->src_func = in->funcmap[ed->src_func];
		ed->dst_func = in->funcmap[ed->dst_func];
	} else if (ev.kind == BP_EV_ANNOT) {
		struct bp_annot *an = &ev.annot;

		if (an->call)
			an->call += x->id_base;
		an->ts += in->shift;
		an->pid = map_id(g, in, an->pid);
		an->tid = map_id(g, in, an->tid);
	}
	return x->fn(x->ctx, &g->m, &ev);
}

static int pass2(struct merge *g, struct input *in, replay_fn fn, void *ctx, uint64_t *id_base)
{
	struct pass2_ctx x = { .g = g, .in = in, .fn = fn, .ctx = ctx, .id_base = *id_base,
			       .top = *id_base };
	struct bp_session s;
	int err;

	session__init(&s);
	err = replay__run(in->path, false, NULL, &s, NULL, remap_event, &x, NULL);
	/* Call ids stay unique: the next input's start above this one's. */
	*id_base = x.top;
	session__free(&s);
	return err;
}

int merge__run(const char *const *paths, size_t n, struct bp_session *s,
	       int (*begin)(void *ctx, struct bp_session *s), replay_fn fn, void *ctx)
{
	return merge__run_tables(paths, n, s, NULL, NULL, begin, fn, ctx);
}

int merge__run_tables(const char *const *paths, size_t n, struct bp_session *s,
		      void (*tables)(void *tctx, struct bp_session *in), void *tctx,
		      int (*begin)(void *ctx, struct bp_session *s), replay_fn fn, void *ctx)
{
	struct merge g = { .tables = tables, .tables_ctx = tctx };
	uint64_t id_base = 0;
	size_t i;
	int err;

	session__init(&g.m);
	g.nin = n;
	g.in = xcalloc(g.nin, sizeof(*g.in));
	for (i = 0; i < g.nin; i++)
		g.in[i].path = paths[i];
	err = pass1(&g);
	if (err)
		goto cleanup;
	err = begin ? begin(ctx, &g.m) : 0;
	for (i = 0; i < g.nin && !err; i++)
		err = pass2(&g, &g.in[i], fn, ctx, &id_base);
cleanup:
	for (i = 0; i < g.nin; i++) {
		free(g.in[i].host);
		free(g.in[i].funcmap);
		free(g.in[i].pathmap);
		idmap_free(&g.in[i].ids);
	}
	free(g.in);
	free(g.fhash);
	idmap_free(&g.used);
	*s = g.m;
	return err;
}
