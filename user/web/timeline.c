// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* view's windowed timeline with level of detail: see timeline.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "archive/replay.h"
#include "base/json.h"
#include "base/log.h"
#include "timeline.h"

struct box {
	uint64_t begin, dur;
	uint32_t thread, depth;
	int32_t name;		/* index into names, -1: several functions */
	uint32_t calls;
};

/* One row of one thread: the box being merged there. */
struct lane {
	uint64_t key;		/* thread index << 32 | depth, + 1 (0: empty slot) */
	bool open;
	struct box blk;
	uint32_t func;		/* the block's function while it has one */
};

struct tl_ctx {
	uint64_t t0, t1, threshold, max_end;
	unsigned int px;
	struct lane *lanes;	/* open addressing */
	size_t nlanes, cap;
	uint64_t *threads;	/* pid << 32 | tid, by index */
	size_t nthreads;
	int32_t *name_of;	/* function -> names index + 1 (0: not yet) */
	size_t nname_of;
	uint32_t *names;	/* names index -> function */
	size_t nnames;
	struct box *boxes;
	size_t nboxes, boxes_cap;
	uint64_t calls, merged;
	bool truncated;
	bool adaptive;		/* no window given: the threshold grows to keep the boxes in budget */
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	return k ^ (k >> 33);
}

static uint32_t thread_index(struct tl_ctx *x, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	size_t i;

	/* few threads: a linear search from the newest is enough */
	for (i = x->nthreads; i-- > 0;)
		if (x->threads[i] == key)
			return (uint32_t)i;
	x->threads = xrealloc(x->threads, (x->nthreads + 1) * sizeof(*x->threads));
	x->threads[x->nthreads] = key;
	return (uint32_t)x->nthreads++;
}

static int32_t name_index(struct tl_ctx *x, uint32_t func)
{
	if (func >= x->nname_of) {
		size_t n = x->nname_of ? x->nname_of : 256;

		while (n <= func)
			n *= 2;
		x->name_of = xrealloc(x->name_of, n * sizeof(*x->name_of));
		memset(x->name_of + x->nname_of, 0, (n - x->nname_of) * sizeof(*x->name_of));
		x->nname_of = n;
	}
	if (!x->name_of[func]) {
		x->names = xrealloc(x->names, (x->nnames + 1) * sizeof(*x->names));
		x->names[x->nnames++] = func;
		x->name_of[func] = (int32_t)x->nnames;
	}
	return x->name_of[func] - 1;
}

static struct lane *lane_of(struct tl_ctx *x, uint32_t thread, uint32_t depth)
{
	uint64_t key = ((uint64_t)thread << 32 | depth) + 1;
	size_t i;

	if ((x->nlanes + 1) * 2 > x->cap) {
		struct lane *old = x->lanes;
		size_t oldcap = x->cap, j;

		x->cap = oldcap ? oldcap * 2 : 256;
		x->lanes = xcalloc(x->cap, sizeof(*x->lanes));
		for (j = 0; j < oldcap; j++) {
			if (!old[j].key)
				continue;
			for (i = mix(old[j].key) & (x->cap - 1); x->lanes[i].key; i = (i + 1) & (x->cap - 1))
				;
			x->lanes[i] = old[j];
		}
		free(old);
	}
	for (i = mix(key) & (x->cap - 1); x->lanes[i].key; i = (i + 1) & (x->cap - 1))
		if (x->lanes[i].key == key)
			return &x->lanes[i];
	x->lanes[i].key = key;
	x->nlanes++;
	return &x->lanes[i];
}

static int cmp_box(const void *a, const void *b)
{
	const struct box *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/*
 * The whole recording in one pass, its length unknown until the end: when
 * the boxes pass half the budget, the threshold is multiplied by 4 and the
 * boxes made so far are merged again under it, as if it had been the
 * threshold from the start (a box under the threshold joins the previous
 * one of its row when it begins within the threshold of its end).
 */
static void coarsen(struct tl_ctx *x)
{
	size_t i, k = 0;

	x->threshold = x->threshold ? x->threshold * 4 : 1000;
	qsort(x->boxes, x->nboxes, sizeof(*x->boxes), cmp_box);
	x->merged = 0;
	for (i = 0; i < x->nboxes; i++) {
		struct box *b = &x->boxes[i], *p = k ? &x->boxes[k - 1] : NULL;

		if (p && p->thread == b->thread && p->depth == b->depth &&
		    (p->calls > 1 || p->dur < x->threshold) && (b->calls > 1 || b->dur < x->threshold) &&
		    b->begin < p->begin + p->dur + x->threshold) {
			if (b->begin + b->dur > p->begin + p->dur)
				p->dur = b->begin + b->dur - p->begin;
			if (p->name != b->name)
				p->name = -1;
			p->calls += b->calls;
			continue;
		}
		x->boxes[k++] = *b;
	}
	x->nboxes = k;
	for (i = 0; i < k; i++)
		if (x->boxes[i].calls > 1)
			x->merged += x->boxes[i].calls;
}

static void put_box(struct tl_ctx *x, const struct box *b)
{
	if (x->adaptive && x->nboxes >= TIMELINE_MAX_BOXES / 2)
		coarsen(x);
	if (x->nboxes == TIMELINE_MAX_BOXES) {
		x->truncated = true;
		return;
	}
	if (x->nboxes == x->boxes_cap) {
		x->boxes_cap = x->boxes_cap ? x->boxes_cap * 2 : 4096;
		x->boxes = xrealloc(x->boxes, x->boxes_cap * sizeof(*x->boxes));
	}
	x->boxes[x->nboxes++] = *b;
	if (b->calls > 1)
		x->merged += b->calls;
}

static void flush(struct tl_ctx *x, struct lane *l)
{
	if (l->open)
		put_box(x, &l->blk);
	l->open = false;
}

static int tl_begin(void *ctx, struct bp_session *s)
{
	struct tl_ctx *x = ctx;

	(void)s;
	if (x->adaptive) {
		x->t0 = 0;
		x->t1 = UINT64_MAX;
		x->threshold = 1000;
		return 0;
	}
	if (x->t1 <= x->t0)
		x->t1 = x->t0 + 1;
	/* one pixel of the window: shorter calls are merged with their neighbours */
	x->threshold = (x->t1 - x->t0) / (x->px ? x->px : 1000);
	return 0;
}

static int tl_event(void *ctx, const struct bp_session *s, const struct bp_event *ev)
{
	struct tl_ctx *x = ctx;
	const struct bp_call *c = &ev->call;
	uint64_t dur;
	struct lane *l;
	struct box b;

	(void)s;
	if (ev->kind != BP_EV_CALL)
		return 0;
	if (c->end > x->max_end)
		x->max_end = c->end;
	if (c->end < x->t0 || c->begin > x->t1)
		return 0;
	x->calls++;
	dur = c->end > c->begin ? c->end - c->begin : 0;
	b.thread = thread_index(x, c->pid, c->tid);
	b.depth = c->depth;
	b.begin = c->begin;
	b.dur = dur;
	b.calls = 1;
	b.name = name_index(x, c->func);
	l = lane_of(x, b.thread, b.depth);
	if (dur >= x->threshold) {
		flush(x, l);
		put_box(x, &b);
		return 0;
	}
	/* a short call: joins the row's block if it follows it closely */
	if (l->open && c->begin < l->blk.begin + l->blk.dur + x->threshold &&
	    c->begin >= l->blk.begin) {
		if (c->end > l->blk.begin + l->blk.dur)
			l->blk.dur = c->end - l->blk.begin;
		l->blk.calls++;
		if (l->func != c->func)
			l->blk.name = -1;
		return 0;
	}
	flush(x, l);
	l->open = true;
	l->blk = b;
	l->func = c->func;
	return 0;
}

static void thread_name(const struct bp_session *s, uint32_t tid, char *buf, size_t sz)
{
	const struct bp_thread *t = session__find_thread(s, tid);

	if (t && t->name[0]) {
		size_t n = strnlen(t->name, sizeof(t->name));

		snprintf(buf, sz, "%.*s", (int)n, t->name);
	} else {
		snprintf(buf, sz, "tid %" PRIu32, tid);
	}
}

int timeline__json(const char *path, const struct timeline_req *rq, char **out, size_t *len)
{
	struct tl_ctx x = { .t0 = rq->t0, .t1 = rq->t1, .px = rq->px, .adaptive = !rq->t1 };
	struct bp_session s;
	FILE *f = NULL;
	size_t i;
	int err;

	*out = NULL;
	*len = 0;
	session__init(&s);
	err = replay__run(path, false, NULL, &s, tl_begin, tl_event, &x, NULL);
	if (err)
		goto cleanup;
	for (i = 0; i < x.cap; i++)
		if (x.lanes[i].key)
			flush(&x, &x.lanes[i]);
	if (x.t1 == UINT64_MAX)
		x.t1 = x.max_end > x.t0 ? x.max_end : x.t0 + 1;
	f = open_memstream(out, len);
	if (!f) {
		err = -ENOMEM;
		goto cleanup;
	}
	fprintf(f, "{\"t0\":%" PRIu64 ",\"t1\":%" PRIu64 ",\"duration\":%" PRIu64
		",\"threshold_ns\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"boxes\":%zu,\"merged\":%" PRIu64
		",\"truncated\":%s,\"names\":[", x.t0, x.t1, s.duration ? s.duration : x.max_end,
		x.threshold, x.calls, x.nboxes, x.merged, x.truncated ? "true" : "false");
	for (i = 0; i < x.nnames; i++) {
		if (i)
			fputc(',', f);
		json_str(f, session__func_name(&s, x.names[i]));
	}
	fputs("],\"threads\":[", f);
	for (i = 0; i < x.nthreads; i++) {
		char name[32];
		uint32_t pid = (uint32_t)(x.threads[i] >> 32), tid = (uint32_t)x.threads[i];

		thread_name(&s, tid, name, sizeof(name));
		fprintf(f, "%s{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":", i ? "," : "", pid, tid);
		json_str(f, name);
		fputc('}', f);
	}
	fputs("],\"ev\":[", f);
	for (i = 0; i < x.nboxes; i++) {
		const struct box *b = &x.boxes[i];

		fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRId32 ",%" PRIu32 "]",
			i ? "," : "", b->thread, b->depth, b->begin, b->dur, b->name, b->calls);
	}
	fputs("]}\n", f);
	if (fclose(f)) {
		f = NULL;
		err = -ENOMEM;
		goto cleanup;
	}
	f = NULL;
cleanup:
	if (err) {
		free(*out);
		*out = NULL;
		*len = 0;
	}
	free(x.lanes);
	free(x.threads);
	free(x.name_of);
	free(x.names);
	free(x.boxes);
	session__free(&s);
	return err;
}
