// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * speedscope's own file format (https://www.speedscope.app/file-format-schema.json):
 * one "evented" profile per thread, with an open ("O") and a close ("C")
 * event per call, in nanoseconds since the start of the recording.
 *
 * speedscope replays each profile as a stack: events must be in time order
 * and every close must match the innermost open frame, or the import fails.
 * Calls arrive when they END, children before their parents, so nothing can
 * be written before the end: calls are buffered per thread and each thread's
 * calls are sorted at end().
 *
 * Memory: while recording, a small buffer per thread (at most BLOCK_MAX
 * records); full buffers go to one anonymous temporary file as blocks, each
 * pointing back to the thread's previous block, so any number of threads
 * needs one file descriptor.  At end(), one thread's calls at a time are
 * read back into memory (24 bytes per call), sorted and written.
 *
 * Lost records cannot be placed on a per-thread stack: their total is in the
 * file's name.  Frames are the functions called, with the module as "file".
 * Times are those of the Chrome trace and the CSV (ns since the recording
 * began); each profile's startValue is its thread's first call, so a thread's
 * view does not open on the idle time before it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exporter.h"
#include "json.h"
#include "log.h"

#define BLOCK_MIN	16	/* first buffer of a thread: most threads make few calls */
#define BLOCK_MAX	256	/* records per block on disk */
#define NO_BLOCK	UINT64_MAX

/* One call as buffered: fixed size, so blocks can be read back as arrays. */
struct rec {
	uint64_t begin, end;	/* ns since t0 */
	uint32_t func;
	uint32_t depth;
};

/* On disk before every block's records. */
struct block_hdr {
	uint64_t prev;		/* file offset of the thread's previous block, or NO_BLOCK */
	uint32_t n;
	uint32_t pad;
};

struct sthread {
	uint32_t tid, pid;
	uint64_t ncalls;	/* buffered + on disk */
	uint64_t last_block;	/* offset of the newest block on disk, or NO_BLOCK */
	struct rec *buf;
	uint32_t nbuf, capbuf;
};

struct speedscope_priv {
	struct sthread *threads;	/* sorted by tid */
	size_t nthreads, capthreads;
	size_t last;			/* index of the last thread looked up: calls come in runs */
	FILE *tmp;
	uint64_t tmp_size;
	int32_t *frame_of;		/* function id -> frame index, -1 = not used */
	size_t nframe_of;
	uint32_t *frames;		/* frame index -> function id */
	size_t nframes;
	uint64_t lost;
};

static struct sthread *find_thread(struct speedscope_priv *p, uint32_t tid, uint32_t pid)
{
	size_t lo = 0, hi = p->nthreads;
	struct sthread *t;

	if (p->last < p->nthreads && p->threads[p->last].tid == tid)
		return &p->threads[p->last];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->threads[mid].tid == tid) {
			p->last = mid;
			return &p->threads[mid];
		}
		if (p->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (p->nthreads == p->capthreads) {
		p->capthreads = p->capthreads ? p->capthreads * 2 : 16;
		p->threads = xrealloc(p->threads, p->capthreads * sizeof(*p->threads));
	}
	memmove(&p->threads[lo + 1], &p->threads[lo], (p->nthreads - lo) * sizeof(*p->threads));
	p->nthreads++;
	t = &p->threads[lo];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	t->last_block = NO_BLOCK;
	p->last = lo;
	return t;
}

static int flush_thread(struct speedscope_priv *p, struct sthread *t)
{
	struct block_hdr h = { .prev = t->last_block, .n = t->nbuf };

	if (!t->nbuf)
		return 0;
	if (!p->tmp) {
		p->tmp = tmpfile();
		if (!p->tmp)
			return -errno;
	}
	if (fwrite(&h, sizeof(h), 1, p->tmp) != 1 ||
	    fwrite(t->buf, sizeof(*t->buf), t->nbuf, p->tmp) != t->nbuf)
		return errno ? -errno : -EIO;
	t->last_block = p->tmp_size;
	p->tmp_size += sizeof(h) + (uint64_t)t->nbuf * sizeof(*t->buf);
	t->nbuf = 0;
	return 0;
}

static void use_frame(struct speedscope_priv *p, uint32_t func)
{
	if (func >= p->nframe_of) {
		size_t n = p->nframe_of ? p->nframe_of : 64;

		while (n <= func)
			n *= 2;
		p->frame_of = xrealloc(p->frame_of, n * sizeof(*p->frame_of));
		memset(p->frame_of + p->nframe_of, 0xff, (n - p->nframe_of) * sizeof(*p->frame_of));
		p->nframe_of = n;
	}
	if (p->frame_of[func] >= 0)
		return;
	if ((p->nframes & (p->nframes - 1)) == 0)
		p->frames = xrealloc(p->frames, (p->nframes ? p->nframes * 2 : 64) *
					       sizeof(*p->frames));
	p->frame_of[func] = (int32_t)p->nframes;
	p->frames[p->nframes++] = func;
}

static int add_call(struct speedscope_priv *p, const struct bp_call *c)
{
	struct sthread *t = find_thread(p, c->tid, c->pid);
	struct rec *r;
	int err;

	if (t->nbuf == t->capbuf) {
		if (t->capbuf == BLOCK_MAX) {
			err = flush_thread(p, t);
			if (err)
				return err;
		} else {
			t->capbuf = t->capbuf ? t->capbuf * 2 : BLOCK_MIN;
			t->buf = xrealloc(t->buf, t->capbuf * sizeof(*t->buf));
		}
	}
	use_frame(p, c->func);
	r = &t->buf[t->nbuf++];
	r->begin = c->begin;
	r->end = c->end > c->begin ? c->end : c->begin;
	r->func = c->func;
	r->depth = c->depth;
	t->ncalls++;
	return 0;
}

static int speedscope_event(struct exporter *e, const struct bp_session *s,
			    const struct bp_event *ev)
{
	struct speedscope_priv *p = e->priv;

	switch (ev->kind) {
	case BP_EV_CALL:
		return add_call(p, &ev->call);
	case BP_EV_LOSS:
		p->lost += ev->loss.count;
		return 0;
	default:
		return 0;
	}
}

/* Reads all of a thread's calls into one array (disk blocks, then the buffer). */
static int load_thread(struct speedscope_priv *p, struct sthread *t, struct rec **out)
{
	struct rec *v = xcalloc(t->ncalls ? t->ncalls : 1, sizeof(*v));
	uint64_t off = t->last_block, fill = t->ncalls;
	struct block_hdr h;

	fill -= t->nbuf;
	memcpy(v + fill, t->buf, t->nbuf * sizeof(*v));
	while (off != NO_BLOCK) {
		if (fseeko(p->tmp, (off_t)off, SEEK_SET) || fread(&h, sizeof(h), 1, p->tmp) != 1)
			goto fail;
		if (h.n > fill)
			goto fail;	/* cannot happen unless the file was damaged */
		fill -= h.n;
		if (fread(v + fill, sizeof(*v), h.n, p->tmp) != h.n)
			goto fail;
		off = h.prev;
	}
	*out = v;
	return 0;
fail:
	free(v);
	return errno ? -errno : -EIO;
}

/*
 * Parents first: by begin, then the outer call (smaller depth) of two that
 * begin together, then the longer; the function id makes it deterministic.
 */
static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return 0;
}

struct open_frame {
	uint64_t end;		/* clamped into the parent */
	uint32_t frame;
	uint32_t depth;
};

static void write_ev(FILE *f, char type, uint32_t frame, uint64_t at, bool *first)
{
	fprintf(f, "%s{\"type\":\"%c\",\"frame\":%" PRIu32 ",\"at\":%" PRIu64 "}",
		*first ? "" : ",", type, frame, at);
	*first = false;
}

static void profile_name(FILE *f, const struct bp_session *s, const struct sthread *t)
{
	const struct bp_thread *bt = session__find_thread(s, t->tid);
	char name[sizeof(bt->name) + 1] = "";
	char *buf = NULL;

	if (bt) {
		/* comm is 16 bytes and need not be NUL-terminated when full. */
		memcpy(name, bt->name, sizeof(bt->name));
		name[sizeof(bt->name)] = '\0';
	}
	if (asprintf(&buf, "%s (pid %" PRIu32 ", tid %" PRIu32 ")", name[0] ? name : "thread",
		     t->pid, t->tid) < 0) {
		fputs("\"thread\"", f);
		return;
	}
	json_str(f, buf);
	free(buf);
}

/*
 * One thread's evented profile.  The stack replays the calls in begin order;
 * a call closes the open frames it is not inside (by depth, or because they
 * ended before it began), and is clamped into its parent, so that clock
 * oddities or a parent closed early (unfinished, unwound) still give
 * speedscope a well-nested, time-ordered stream.
 */
static int write_thread(struct exporter *e, const struct bp_session *s, struct sthread *t,
			const struct rec *v, uint64_t n)
{
	struct speedscope_priv *p = e->priv;
	struct open_frame *stack = NULL;
	size_t sp = 0, cap = 0;
	uint64_t start = n ? v[0].begin : 0, end = start, now = start, i;
	bool first = true;
	FILE *f = e->out;

	for (i = 0; i < n; i++)
		if (v[i].end > end)
			end = v[i].end;
	fputs("{\"type\":\"evented\",\"name\":", f);
	profile_name(f, s, t);
	fprintf(f, ",\"unit\":\"nanoseconds\",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64
		",\"events\":[\n", start, end);

	for (i = 0; i < n; i++) {
		const struct rec *r = &v[i];
		uint64_t at, rend;

		while (sp && (stack[sp - 1].depth >= r->depth || stack[sp - 1].end <= r->begin)) {
			sp--;
			now = stack[sp].end > now ? stack[sp].end : now;
			write_ev(f, 'C', stack[sp].frame, now, &first);
		}
		at = r->begin > now ? r->begin : now;
		rend = r->end;
		if (sp && rend > stack[sp - 1].end)
			rend = stack[sp - 1].end;
		if (rend < at)
			rend = at;
		if (sp == cap) {
			cap = cap ? cap * 2 : 64;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		stack[sp].end = rend;
		stack[sp].frame = (uint32_t)p->frame_of[r->func];
		stack[sp].depth = r->depth;
		sp++;
		now = at;
		write_ev(f, 'O', (uint32_t)p->frame_of[r->func], at, &first);
		if (i % 1024 == 1023)
			putc('\n', f);	/* keep lines of a reasonable length */
	}
	while (sp) {
		sp--;
		now = stack[sp].end > now ? stack[sp].end : now;
		write_ev(f, 'C', stack[sp].frame, now, &first);
	}
	fputs("\n]}", f);
	free(stack);
	return 0;
}

static int speedscope_end(struct exporter *e, const struct bp_session *s)
{
	struct speedscope_priv *p = e->priv;
	size_t i, active = 0;
	FILE *f = e->out;
	char *name = NULL;
	int err = 0;

	/* The busiest thread opens first. */
	for (i = 1; i < p->nthreads; i++)
		if (p->threads[i].ncalls > p->threads[active].ncalls)
			active = i;
	if (p->tmp && fflush(p->tmp))
		return -errno;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"bpfprof 0.1\",\"name\":", f);
	if (p->lost && asprintf(&name, "%s (%" PRIu64 " records lost)",
				s->cmdline ? s->cmdline : "bpfprof", p->lost) >= 0) {
		json_str(f, name);
		free(name);
	} else {
		json_str(f, s->cmdline ? s->cmdline : "bpfprof");
	}
	fprintf(f, ",\"activeProfileIndex\":%zu,\"shared\":{\"frames\":[", active);
	for (i = 0; i < p->nframes; i++) {
		uint32_t func = p->frames[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		json_str(f, session__func_name(s, func));
		if (func < s->nfuncs && s->funcs[func].module < s->nmodules) {
			fputs(",\"file\":", f);
			json_str(f, s->modules[s->funcs[func].module].path);
		}
		putc('}', f);
	}
	fputs("\n]},\"profiles\":[\n", f);

	for (i = 0; i < p->nthreads && !err; i++) {
		struct sthread *t = &p->threads[i];
		struct rec *v = NULL;

		err = load_thread(p, t, &v);
		if (err)
			break;
		qsort(v, t->ncalls, sizeof(*v), cmp_rec);
		if (i)
			fputs(",\n", f);
		err = write_thread(e, s, t, v, t->ncalls);
		free(v);
	}
	if (err)
		return err;
	/* speedscope needs a profile to show: an empty recording gets an empty one. */
	if (!p->nthreads)
		fprintf(f, "{\"type\":\"evented\",\"name\":\"no calls\",\"unit\":\"nanoseconds\","
			"\"startValue\":0,\"endValue\":%" PRIu64 ",\"events\":[]}", s->duration);
	fputs("\n]}\n", f);
	return 0;
}

static void speedscope_free(struct exporter *e)
{
	struct speedscope_priv *p = e->priv;
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nthreads; i++)
		free(p->threads[i].buf);
	free(p->threads);
	if (p->tmp)
		fclose(p->tmp);
	free(p->frame_of);
	free(p->frames);
}

const struct exporter_ops speedscope_exporter = {
	.name = "speedscope",
	.suffix = ".speedscope.json",
	.help = "speedscope JSON, one evented profile per thread (speedscope.app)",
	.priv_size = sizeof(struct speedscope_priv),
	.event = speedscope_event,
	.end = speedscope_end,
	.free = speedscope_free,
};
