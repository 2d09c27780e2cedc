// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * speedscope's own file format (https://www.speedscope.app/file-format-schema.json):
 * one "evented" profile per thread that made traced calls, with an open
 * ("O") and a close ("C") event per call, in nanoseconds since the start of
 * the recording; and per thread with stack samples, a "sampled" profile
 * "<thread> (cpu samples)" (each sample its stack, outermost frame first,
 * weighted by the sampling period) and one "<thread> (off-cpu)" for the
 * blocked intervals (weighted by the time blocked), so that speedscope's
 * flame graph, left heavy and sandwich views work on them as on perf data.
 * The profiles of a thread follow each other: calls, cpu, off-cpu.
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
 * Samples are kept in memory until end() (24 bytes each, the stack being an
 * interned path): O(samples), unlike the calls.  That is acceptable here:
 * a sampler makes a thousand samples per second and cpu, not millions of
 * calls, and this format holds every sample anyway.
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
#include "base/json.h"
#include "base/log.h"

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

/* One stack sample as kept until end(). */
struct srec {
	uint64_t ts;		/* ns since t0 */
	uint64_t weight;	/* ns */
	uint32_t path;		/* the stack: session.paths */
	uint32_t off;		/* an off-cpu interval */
};

struct sthread {
	uint32_t tid, pid;
	uint64_t ncalls;	/* buffered + on disk */
	uint64_t last_block;	/* offset of the newest block on disk, or NO_BLOCK */
	struct rec *buf;
	uint32_t nbuf, capbuf;
	struct srec *samples;	/* on-cpu and off-cpu, as they came */
	size_t nsamples, capsamples;
	uint64_t ncpu, noff;	/* of each kind */
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
	bool *path_seen;		/* path id -> its functions have frames */
	size_t npath_seen;
	uint32_t *stack;		/* MAX_STACK functions of one sample */
	uint64_t lost;
};

/* Frames of one sample written out; deeper stacks keep their innermost frames. */
#define MAX_STACK	1024

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

/*
 * Gives every function of the path a frame.  Paths share their prefixes, so
 * the walk stops at the first node already done: O(distinct paths) overall.
 */
static void use_path_frames(struct speedscope_priv *p, const struct bp_session *s, uint32_t path)
{
	uint32_t q;

	if (path >= p->npath_seen) {
		size_t n = p->npath_seen ? p->npath_seen : 1024;

		while (n <= path)
			n *= 2;
		p->path_seen = xrealloc(p->path_seen, n * sizeof(*p->path_seen));
		memset(p->path_seen + p->npath_seen, 0, (n - p->npath_seen) * sizeof(*p->path_seen));
		p->npath_seen = n;
	}
	for (q = path; q && q < s->npaths && !p->path_seen[q]; q = s->paths[q].parent) {
		p->path_seen[q] = true;
		use_frame(p, s->paths[q].func);
		if (s->paths[q].parent >= q)
			break;	/* a corrupt link: paths point to older nodes */
	}
}

static int add_sample(struct speedscope_priv *p, const struct bp_session *s,
		      const struct bp_sample *sm)
{
	struct sthread *t = find_thread(p, sm->tid, sm->pid);
	struct srec *r;

	if (t->nsamples == t->capsamples) {
		t->capsamples = t->capsamples ? t->capsamples * 2 : 64;
		t->samples = xrealloc(t->samples, t->capsamples * sizeof(*t->samples));
	}
	r = &t->samples[t->nsamples++];
	r->ts = sm->ts;
	r->weight = sm->weight;
	r->path = sm->path < s->npaths ? sm->path : 0;
	r->off = !!(sm->flags & BP_SAMPLE_F_OFFCPU);
	if (r->off)
		t->noff++;
	else
		t->ncpu++;
	use_path_frames(p, s, r->path);
	return 0;
}

static int speedscope_event(struct exporter *e, const struct bp_session *s,
			    const struct bp_event *ev)
{
	struct speedscope_priv *p = e->priv;

	switch (ev->kind) {
	case BP_EV_CALL:
		return add_call(p, &ev->call);
	case BP_EV_SAMPLE:
		return add_sample(p, s, &ev->sample);
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

static void profile_name(FILE *f, const struct bp_session *s, const struct sthread *t,
			 const char *suffix)
{
	const struct bp_thread *bt = session__find_thread(s, t->tid);
	char name[sizeof(bt->name) + 1] = "";
	char *buf = NULL;

	if (bt) {
		/* comm is 16 bytes and need not be NUL-terminated when full. */
		memcpy(name, bt->name, sizeof(bt->name));
		name[sizeof(bt->name)] = '\0';
	}
	if (asprintf(&buf, "%s (pid %" PRIu32 ", tid %" PRIu32 ")%s", name[0] ? name : "thread",
		     t->pid, t->tid, suffix) < 0) {
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
	profile_name(f, s, t, "");
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

/* Time order, so that speedscope's time-ordered view reads as the thread ran. */
static int cmp_srec(const void *a, const void *b)
{
	const struct srec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->path != y->path)
		return x->path < y->path ? -1 : 1;
	return 0;
}

/*
 * One thread's samples of one kind (off: off-cpu) as a sampled profile:
 * "samples" lists each stack as frame indices, outermost first, "weights"
 * its weight in ns; the profile spans the summed weights (speedscope lays
 * sampled profiles out by weight, not by time).
 */
static void write_sampled(struct exporter *e, const struct bp_session *s, const struct sthread *t,
			  uint32_t off)
{
	struct speedscope_priv *p = e->priv;
	uint64_t sum = 0, i;
	size_t n, k, col = 0;
	FILE *f = e->out;

	for (i = 0; i < t->nsamples; i++)
		if (t->samples[i].off == off)
			sum += t->samples[i].weight;
	fputs("{\"type\":\"sampled\",\"name\":", f);
	profile_name(f, s, t, off ? " (off-cpu)" : " (cpu samples)");
	fprintf(f, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%" PRIu64
		",\"samples\":[\n", sum);
	for (i = 0; i < t->nsamples; i++) {
		if (t->samples[i].off != off)
			continue;
		n = session__path_funcs(s, t->samples[i].path, p->stack, MAX_STACK);
		fputs(col++ ? ",[" : "[", f);
		for (k = 0; k < n; k++)
			fprintf(f, "%s%" PRId32, k ? "," : "", p->frame_of[p->stack[k]]);
		putc(']', f);
		if (col % 64 == 0)
			putc('\n', f);
	}
	fputs("\n],\"weights\":[\n", f);
	col = 0;
	for (i = 0; i < t->nsamples; i++) {
		if (t->samples[i].off != off)
			continue;
		fprintf(f, "%s%" PRIu64, col++ ? "," : "", t->samples[i].weight);
		if (col % 64 == 0)
			putc('\n', f);
	}
	fputs("\n]}", f);
}

/*
 * The profile speedscope opens first: the calls of the thread that made the
 * most, or without calls the cpu samples of the most sampled thread, or
 * else its off-cpu time.  Profiles are numbered in the order written.
 */
static size_t active_profile(const struct speedscope_priv *p)
{
	uint64_t best[3] = { 0, 0, 0 };	/* calls, cpu samples, off-cpu intervals */
	size_t at[3] = { 0, 0, 0 }, idx = 0, i;
	int k;

	for (i = 0; i < p->nthreads; i++) {
		const struct sthread *t = &p->threads[i];
		uint64_t n[3] = { t->ncalls, t->ncpu, t->noff };

		for (k = 0; k < 3; k++) {
			if (!n[k])
				continue;
			if (n[k] > best[k]) {
				best[k] = n[k];
				at[k] = idx;
			}
			idx++;
		}
	}
	for (k = 0; k < 3; k++)
		if (best[k])
			return at[k];
	return 0;
}

static int speedscope_end(struct exporter *e, const struct bp_session *s)
{
	struct speedscope_priv *p = e->priv;
	size_t i, nprofiles = 0;
	FILE *f = e->out;
	char *name = NULL;
	int err = 0;

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
	fprintf(f, ",\"activeProfileIndex\":%zu,\"shared\":{\"frames\":[", active_profile(p));
	for (i = 0; i < p->nframes; i++) {
		uint32_t func = p->frames[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		if (func < s->nfuncs && s->funcs[func].flags & BP_FUNC_DROPPED) {
			char *dn = NULL;

			/* no annotations in the format: the governor's drop is in the name */
			if (asprintf(&dn, "%s" BP_DROPPED_SUFFIX, session__func_name(s, func)) < 0)
				return -ENOMEM;
			json_str(f, dn);
			free(dn);
		} else {
			json_str(f, session__func_name(s, func));
		}
		if (func < s->nfuncs && s->funcs[func].module < s->nmodules) {
			fputs(",\"file\":", f);
			json_str(f, s->modules[s->funcs[func].module].path);
		}
		putc('}', f);
	}
	fputs("\n]},\"profiles\":[\n", f);

	p->stack = xcalloc(MAX_STACK, sizeof(*p->stack));
	for (i = 0; i < p->nthreads && !err; i++) {
		struct sthread *t = &p->threads[i];
		struct rec *v = NULL;

		if (t->ncalls) {
			err = load_thread(p, t, &v);
			if (err)
				break;
			qsort(v, t->ncalls, sizeof(*v), cmp_rec);
			if (nprofiles++)
				fputs(",\n", f);
			err = write_thread(e, s, t, v, t->ncalls);
			free(v);
		}
		if (t->nsamples)
			qsort(t->samples, t->nsamples, sizeof(*t->samples), cmp_srec);
		if (t->ncpu) {
			if (nprofiles++)
				fputs(",\n", f);
			write_sampled(e, s, t, 0);
		}
		if (t->noff) {
			if (nprofiles++)
				fputs(",\n", f);
			write_sampled(e, s, t, 1);
		}
	}
	if (err)
		return err;
	/* speedscope needs a profile to show: an empty recording gets an empty one. */
	if (!nprofiles)
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
	for (i = 0; i < p->nthreads; i++) {
		free(p->threads[i].buf);
		free(p->threads[i].samples);
	}
	free(p->threads);
	if (p->tmp)
		fclose(p->tmp);
	free(p->frame_of);
	free(p->frames);
	free(p->path_seen);
	free(p->stack);
}

static uint64_t speedscope_held(struct exporter *e)
{
	const struct speedscope_priv *p = e->priv;

	return p ? p->tmp_size : 0;
}

const struct exporter_ops speedscope_exporter = {
	.name = "speedscope",
	.suffix = ".speedscope.json",
	.help = "speedscope JSON: per thread, its calls (evented), cpu and off-cpu samples "
		"(sampled) (speedscope.app)",
	.priv_size = sizeof(struct speedscope_priv),
	.event = speedscope_event,
	.end = speedscope_end,
	.free = speedscope_free,
	.held = speedscope_held,
};
