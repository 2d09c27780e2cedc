// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Python frames in the shadow stacks (records of python.bpf.c).
 *
 * A Python call is a frame on its thread's stack like a native call, pushed
 * at BP_PY_CALL and popped at the return, yield or raise of the same
 * interpreter frame (matched by the frame's address, not by the stack
 * pointer: every Python call made by the same interpreter loop shares its
 * native stack pointer).  Its `sp` is the interpreter loop's, so native
 * calls it makes (deeper) nest inside it, and Python frames of a nested
 * loop (a callback from C) nest inside the native call.
 *
 * A generator or coroutine is one frame suspended and resumed many times:
 * each run is a slice; the one that ends at a yield/await is flagged
 * suspended, the next one resumed, and a "resume" edge joins them.
 *
 * Code objects are named per process by BP_REC_PYCODE; functions are
 * interned by (file, qualified name, first line), so every exporter shows
 * `Class.method` in module `path/to/file.py`.  -F/-N py:GLOB filters act
 * here: a frame not selected is not pushed, and its end is ignored.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "base/utf8.h"
#include "base/hashtab.h"
#include "base/log.h"
#include "base/util.h"

struct py_code {
	uint64_t code;		/* 0: empty slot */
	uint32_t pid;
	uint32_t func;
	bool shown;
};

struct py_name {
	char *key;		/* "file\0qualname\0line" flattened to "file\x1fqualname\x1fline" */
	uint32_t func;
	bool shown;
};

/*
 * The last suspension of a generator frame: the far end of its resume edge.
 * Keyed by (pid, frame), removed when the frame resumes or starts anew (its
 * address taken by another generator): every suspended frame has its entry,
 * so every resume has its edge (model/coro.h joins a coroutine's slices by them).
 */
struct py_susp {
	uint64_t frame;		/* 0: empty slot */
	uint64_t call, ts;
	uint32_t pid, tid, func, pad;
};

/* A thread's Python frames, waiting for its next sample. */
struct py_tstate {
	uint32_t n;
	uint32_t task_at;	/* frames[task_at] is the outermost coroutine of task */
	uint32_t trio;		/* task is a trio Task */
	uint32_t pad;
	uint64_t task, awaited_by[BP_PY_MAX_AWAITERS];
	uint64_t frames[BP_PY_MAX_FRAMES];
};

struct py_decoder {
	struct py_code *codes;
	size_t codes_cap, codes_used;
	struct py_name *names;
	size_t names_cap, names_used;
	struct py_susp *susp;
	size_t susp_cap, susp_used;
	char **inc, **exc;
	size_t ninc, nexc;
	uint64_t nunnamed;	/* records whose code was never named (its record lost) */
	uint8_t *is_eval;	/* per session function: 0 unknown, 1 the interpreter loop, 2 not */
	size_t nis_eval;
	struct py_seen {
		uint32_t pid;
		uint32_t samples;	/* of the process, until it is found to be CPython */
		bool python;
	} *seen;
	size_t nseen;
};

static struct py_decoder *py_get(struct decoder *d)
{
	if (!d->py)
		d->py = xcalloc(1, sizeof(*d->py));
	return d->py;
}

void decoder__set_python_filter(struct decoder *d, char **inc, size_t ninc, char **exc, size_t nexc)
{
	struct py_decoder *p = py_get(d);
	size_t i;

	for (i = 0; i < ninc; i++)
		strv_push(&p->inc, &p->ninc, xstrdup(inc[i]));
	for (i = 0; i < nexc; i++)
		strv_push(&p->exc, &p->nexc, xstrdup(exc[i]));
}

void dec_py_free(struct decoder *d)
{
	struct py_decoder *p = d->py;
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->names_cap; i++)
		free(p->names[i].key);
	for (i = 0; i < p->ninc; i++)
		free(p->inc[i]);
	for (i = 0; i < p->nexc; i++)
		free(p->exc[i]);
	free(p->inc);
	free(p->exc);
	free(p->names);
	free(p->codes);
	free(p->susp);
	free(p->is_eval);
	free(p->seen);
	free(p);
	d->py = NULL;
}

/* "QUALNAME" or "FILE:QUALNAME" (FILE against the base name or the whole path). */
static bool pattern_matches(const char *pat, const char *file, const char *qualname)
{
	const char *colon = strrchr(pat, ':'), *base = strrchr(file, '/');
	char fpat[512];

	if (!colon)
		return !fnmatch(pat, qualname, 0);
	snprintf(fpat, sizeof(fpat), "%.*s", (int)(colon - pat), pat);
	if (fnmatch(colon + 1, qualname, 0))
		return false;
	return !fnmatch(fpat, file, 0) || !fnmatch(fpat, base ? base + 1 : file, 0);
}

static bool selected(const struct py_decoder *p, const char *file, const char *qualname)
{
	bool in = !p->ninc;
	size_t i;

	for (i = 0; i < p->ninc && !in; i++)
		in = pattern_matches(p->inc[i], file, qualname);
	for (i = 0; i < p->nexc && in; i++)
		in = !pattern_matches(p->exc[i], file, qualname);
	return in;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static uint64_t hash_code(uint32_t pid, uint64_t code)
{
	return ((code >> 4) ^ ((uint64_t)pid << 40)) * 0x9e3779b97f4a7c15ull;
}

static bool name_empty(const void *slot)
{
	return !((const struct py_name *)slot)->key;
}

static uint64_t name_hash(const void *slot)
{
	return hash_str(((const struct py_name *)slot)->key);
}

static const struct hashtab_ops names_ops = {
	sizeof(struct py_name), 256, name_empty, name_hash,
};

static bool code_empty(const void *slot)
{
	return !((const struct py_code *)slot)->code;
}

static uint64_t code_hash(const void *slot)
{
	const struct py_code *c = slot;

	return hash_code(c->pid, c->code);
}

static const struct hashtab_ops codes_ops = {
	sizeof(struct py_code), 1024, code_empty, code_hash,
};

static bool susp_empty(const void *slot)
{
	return !((const struct py_susp *)slot)->frame;
}

static uint64_t susp_hash(const void *slot)
{
	const struct py_susp *x = slot;

	return hash_code(x->pid, x->frame);
}

static const struct hashtab_ops susp_ops = {
	sizeof(struct py_susp), 256, susp_empty, susp_hash,
};

/* The slot of (pid, frame): its entry, or the empty slot where it would go. */
static size_t susp_index(const struct py_decoder *p, uint32_t pid, uint64_t frame)
{
	size_t i;

	for (i = hashtab__first(hash_code(pid, frame), p->susp_cap); p->susp[i].frame;
	     i = hashtab__next(i, p->susp_cap))
		if (p->susp[i].frame == frame && p->susp[i].pid == pid)
			break;
	return i;
}

/* Takes the suspension of (pid, frame) out into *out; false if there is none. */
static bool susp_take(struct py_decoder *p, uint32_t pid, uint64_t frame, struct py_susp *out)
{
	size_t i;

	if (!p->susp_cap)
		return false;
	i = susp_index(p, pid, frame);
	if (!p->susp[i].frame)
		return false;
	*out = p->susp[i];
	hashtab__remove(p->susp, p->susp_cap, i, &susp_ops);
	p->susp_used--;
	return true;
}

static struct py_susp *susp_put(struct py_decoder *p, uint32_t pid, uint64_t frame)
{
	size_t i;

	hashtab__reserve((void **)&p->susp, &p->susp_cap, p->susp_used, &susp_ops);
	i = susp_index(p, pid, frame);
	if (!p->susp[i].frame)
		p->susp_used++;
	p->susp[i].frame = frame;
	p->susp[i].pid = pid;
	return &p->susp[i];
}

static struct py_name *name_slot(struct py_decoder *p, const char *key)
{
	size_t i;

	hashtab__reserve((void **)&p->names, &p->names_cap, p->names_used, &names_ops);
	for (i = hashtab__first(hash_str(key), p->names_cap);
	     p->names[i].key && strcmp(p->names[i].key, key); i = hashtab__next(i, p->names_cap))
		;
	return &p->names[i];
}

static struct py_code *code_slot(struct py_decoder *p, uint32_t pid, uint64_t code, bool add)
{
	size_t i;

	if (add)
		hashtab__reserve((void **)&p->codes, &p->codes_cap, p->codes_used, &codes_ops);
	if (!p->codes_cap)
		return NULL;
	for (i = hashtab__first(hash_code(pid, code), p->codes_cap); p->codes[i].code;
	     i = hashtab__next(i, p->codes_cap))
		if (p->codes[i].code == code && p->codes[i].pid == pid)
			return &p->codes[i];
	if (!add)
		return NULL;
	p->codes[i].code = code;
	p->codes[i].pid = pid;
	p->codes_used++;
	return &p->codes[i];
}

/* The session function of (file, qualname, line), created on first use with `flags`. */
static struct py_name *intern_as(struct decoder *d, const char *file, const char *qualname,
				 uint32_t line, uint32_t flags)
{
	struct py_decoder *p = py_get(d);
	struct bp_func f = { .nparams = -1, .flags = flags };
	char key[1024];
	struct py_name *n;

	snprintf(key, sizeof(key), "%s\x1f%s\x1f%u", file, qualname, line);
	n = name_slot(p, key);
	if (n->key)
		return n;
	f.name = (char *)qualname;
	f.module = session__add_module(d->s, file);
	f.file = (char *)file;
	f.line = line;
	n->key = xstrdup(key);
	n->func = session__add_func(d->s, &f);
	n->shown = selected(p, file, qualname);
	p->names_used++;
	return n;
}

static struct py_name *intern(struct decoder *d, const char *file, const char *qualname,
			      uint32_t line)
{
	return intern_as(d, file, qualname, line, BP_FUNC_PYTHON);
}

uint32_t dec_py_marker(struct decoder *d, const char *file, const char *name, uint32_t flags)
{
	return intern_as(d, file, name, 0, flags | BP_FUNC_MARKER)->func;
}

int dec_on_pycode(struct decoder *d, const struct bp_rec_pycode *r)
{
	struct py_decoder *p = py_get(d);
	char name[BP_PY_NAME_LEN * 3 + 1], file[BP_PY_FILE_LEN * 3 + 1];
	struct py_code *c;
	struct py_name *n;

	if (r->name_len > BP_PY_NAME_LEN || r->file_len > BP_PY_FILE_LEN || !r->code)
		return -EINVAL;
	if (r->flags & BP_PYCODE_BAD_NAME)
		snprintf(name, sizeof(name), "[unreadable name] code 0x%llx",
			 (unsigned long long)r->code);
	else
		utf8_from_units(r->name, r->name_len, r->name_kind, name, sizeof(name));
	if (r->flags & BP_PYCODE_BAD_FILE)
		snprintf(file, sizeof(file), "[unreadable file]");
	else
		utf8_from_units(r->file, r->file_len, r->file_kind, file, sizeof(file));
	n = intern(d, file, name, r->firstlineno);
	if (r->flags & BP_PYCODE_GENERATOR)
		d->s->funcs[n->func].flags |= BP_FUNC_GENERATOR;
	if (r->flags & BP_PYCODE_COROUTINE)
		d->s->funcs[n->func].flags |= BP_FUNC_COROUTINE;
	if (r->flags & BP_PYCODE_ASYNC_GEN)
		d->s->funcs[n->func].flags |= BP_FUNC_ASYNC_GEN;
	c = code_slot(p, r->h.pid_tgid >> 32, r->code, true);
	c->func = n->func;
	c->shown = n->shown;
	/* a function dropped by the governor: this code object of it too */
	if (d->py_drop && decoder__dropped(d, n->func))
		d->py_drop(d->py_drop_ctx, c->pid, c->code);
	return 0;
}

void dec_py_drop_codes(struct decoder *d, uint32_t func)
{
	struct py_decoder *p = d->py;
	size_t i;

	for (i = 0; p && i < p->codes_cap; i++)
		if (p->codes[i].code && p->codes[i].func == func)
			d->py_drop(d->py_drop_ctx, p->codes[i].pid, p->codes[i].code);
}

/* Pops every frame above index i (they ended unseen: an exception, a lost record). */
static int pop_above(struct decoder *d, struct tstate *t, uint32_t i)
{
	int err = 0;

	while (t->depth > i + 1 && !err)
		err = dec_pop_emit(d, t, t->last_ts, BP_CALL_UNWOUND);
	return err;
}

static int py_start(struct decoder *d, struct tstate *t, const struct bp_rec_py *r, uint32_t func,
		    uint64_t ts)
{
	struct py_decoder *p = d->py;
	struct bp_edge e = { .kind = BP_EDGE_RESUME };
	struct py_susp s;
	uint32_t i;
	int err = 0;

	/* frames entered deeper than the interpreter loop that runs this one are gone */
	while (t->depth && !err) {
		const struct frame *top = &t->stack[t->depth - 1];

		if (top->sp >= r->sp || !dec_same_stack(top->sp, r->sp))
			break;
		err = dec_pop_emit(d, t, t->last_ts, BP_CALL_UNWOUND);
	}
	/* and Python frames above its caller: they ended without a record */
	for (i = t->depth; r->previous && i-- > 0 && !err;) {
		if (t->stack[i].pyframe != r->previous)
			continue;
		for (uint32_t j = i + 1; j < t->depth; j++) {
			if (t->stack[j].pyframe) {
				err = pop_above(d, t, j - 1);
				break;
			}
		}
		break;
	}
	if (err)
		return err;
	dec_push(d, t, func, ts, r->sp, d->next_id++, false);
	t->stack[t->depth - 1].pyframe = r->frame;
	err = dec_pytask_start(d, t, r, ts);	/* its task, and the edge that led to it */
	if (err)
		return err;
	if (!susp_take(p, t->pid, r->frame, &s) || !s.call || r->h.flags == BP_PY_CALL)
		s.call = 0;	/* a new frame at the address of one that never resumed */
	if (r->h.flags == BP_PY_CALL)
		return 0;
	t->stack[t->depth - 1].flags |= BP_CALL_RESUMED;
	if (!s.call)
		return 0;
	e.src_call = s.call;
	e.src_ts = s.ts;
	e.src_pid = s.pid;
	e.src_tid = s.tid;
	e.src_func = s.func;
	e.dst_call = t->stack[t->depth - 1].id;
	e.dst_ts = ts;
	e.dst_pid = t->pid;
	e.dst_tid = t->tid;
	e.dst_func = func;
	return dec_emit_edge(d, &e);
}

static int py_end(struct decoder *d, struct tstate *t, const struct bp_rec_py *r, uint32_t func,
		  bool shown, uint64_t ts)
{
	struct py_decoder *p = d->py;
	uint32_t flags = r->h.flags == BP_PY_YIELD ? BP_CALL_SUSPENDED :
			 r->h.flags == BP_PY_RAISE ? BP_CALL_RAISED : 0;
	uint64_t id = 0;
	uint32_t i;
	int err;

	dec_pytask_end(d, t, r);
	for (i = t->depth; i-- > 0;)
		if (t->stack[i].pyframe == r->frame)
			break;
	if (i < t->depth) {
		err = pop_above(d, t, i);
		if (err)
			return err;
		id = t->stack[i].id;
		err = dec_pop_emit(d, t, ts, flags);
	} else if (shown) {
		/* it began before the recording (attach) or its start was lost */
		struct frame f;

		err = dec_losses_known(d);
		if (err)
			return err;
		memset(&f, 0, sizeof(f));
		f.id = id = d->next_id++;
		f.func = func;
		f.sp = r->sp;
		f.flags = BP_CALL_NO_ENTRY;
		f.info_first = t->ninfos;
		f.begin = t->depth ? t->stack[t->depth - 1].begin : t->first_ts;
		if (d->had_loss) {
			/* its start may be among the lost records: after the thread's last one */
			f.begin = t->last_ts;
			f.flags = BP_CALL_ENTRY_LOST;
		}
		f.path = session__path(d->s, t->depth ? t->stack[t->depth - 1].path : 0, func);
		err = dec_emit_call(d, t, &f, t->depth, ts, flags);
	} else {
		return 0;
	}
	if (err || r->h.flags != BP_PY_YIELD)
		return err;
	{
		struct py_susp *s = susp_put(p, t->pid, r->frame);

		s->call = id;
		s->ts = ts;
		s->tid = t->tid;
		s->func = func;
	}
	return 0;
}

int dec_on_py(struct decoder *d, const struct bp_rec_py *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	struct py_decoder *p = py_get(d);
	struct tstate *t = dec_thread_state(d, tid, pid, ts);
	struct py_code *c = code_slot(p, pid, r->code, false);
	uint32_t func;
	bool shown;
	int err;

	if (c) {
		func = c->func;
		shown = c->shown;
	} else {
		char name[64];

		/* its BP_REC_PYCODE was lost: named by address, never silently dropped */
		snprintf(name, sizeof(name), "[python code 0x%llx]", (unsigned long long)r->code);
		func = intern(d, "[python]", name, 0)->func;
		shown = !p->ninc;
		p->nunnamed++;
	}
	err = dec_wake_due(d, t, ts);
	if (err)
		return err;
	switch (r->h.flags) {
	case BP_PY_CALL:
	case BP_PY_RESUME:
	case BP_PY_THROW:
		err = shown ? py_start(d, t, r, func, ts) : 0;
		break;
	case BP_PY_RETURN:
	case BP_PY_YIELD:
	case BP_PY_RAISE:
		err = py_end(d, t, r, func, shown, ts);
		break;
	default:
		return -EINVAL;
	}
	if (!err && ts > t->last_ts)
		t->last_ts = ts;
	return err;
}

void decoder__set_python_hooks(struct decoder *d, decoder_py_proc_fn proc,
			       decoder_py_namer_fn namer, void *ctx)
{
	d->py_proc = proc;
	d->py_namer = namer;
	d->py_ctx = ctx;
}

int dec_on_pystack(struct decoder *d, const struct bp_rec_pystack *r, size_t size, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	struct tstate *t;

	if (size < offsetof(struct bp_rec_pystack, frames) || r->n > BP_PY_MAX_FRAMES ||
	    size < offsetof(struct bp_rec_pystack, frames) + 8ull * r->n)
		return -EINVAL;
	t = dec_thread_state(d, tid, pid, ts);
	if (!t->py)
		t->py = xcalloc(1, sizeof(*t->py));
	t->py->n = r->n;
	t->py->task = r->task_at < r->n ? r->task : 0;
	t->py->task_at = r->task_at;
	t->py->trio = !!(r->h.flags & BP_PYSTACK_TRIO);
	memcpy(t->py->awaited_by, r->awaited_by, sizeof(r->awaited_by));
	memcpy(t->py->frames, r->frames, 8ull * r->n);
	return 0;
}

/* Is session function f the interpreter loop (whose frame runs Python frames)? */
static bool is_eval(struct py_decoder *p, const struct bp_session *s, uint32_t f)
{
	if (f >= s->nfuncs)
		return false;
	if (f >= p->nis_eval) {
		size_t n = s->nfuncs + 64;

		p->is_eval = xrealloc(p->is_eval, n);
		memset(p->is_eval + p->nis_eval, 0, n - p->nis_eval);
		p->nis_eval = n;
	}
	if (!p->is_eval[f])
		p->is_eval[f] = s->funcs[f].name && !strcmp(s->funcs[f].name,
							    "_PyEval_EvalFrameDefault") ? 1 : 2;
	return p->is_eval[f] == 1;
}

/* The session function of a code object met in a sample: named once, by the caller's reader. */
static uint32_t sampled_code(struct decoder *d, uint32_t pid, uint64_t code)
{
	struct py_decoder *p = d->py;
	struct py_code *c = code_slot(p, pid, code, false);
	char name[256], file[512];
	uint32_t line = 0;

	if (c)
		return c->func;
	if (!d->py_namer || d->py_namer(d->py_ctx, pid, code, name, sizeof(name), file,
					sizeof(file), &line)) {
		snprintf(name, sizeof(name), "[python code 0x%llx]", (unsigned long long)code);
		snprintf(file, sizeof(file), "[python]");
		line = 0;
	}
	c = code_slot(p, pid, code, true);
	c->func = intern(d, file, name, line)->func;
	c->shown = true;
	return c->func;
}

/* Asks the caller to look at a process met in samples: at its 1st, 10th and 100th sample. */
static void note_process(struct decoder *d, uint32_t pid)
{
	struct py_decoder *p = py_get(d);
	size_t i;

	if (!d->py_proc)
		return;
	for (i = 0; i < p->nseen && p->seen[i].pid != pid; i++)
		;
	if (i == p->nseen) {
		p->seen = xrealloc(p->seen, (p->nseen + 1) * sizeof(*p->seen));
		memset(&p->seen[p->nseen], 0, sizeof(p->seen[0]));
		p->seen[p->nseen++].pid = pid;
	}
	if (p->seen[i].python)
		return;
	p->seen[i].samples++;
	if (p->seen[i].samples == 1 || p->seen[i].samples == 10 || p->seen[i].samples == 100)
		d->py_proc(d->py_ctx, pid);
}

void dec_py_forget_process(struct decoder *d, uint32_t pid)
{
	struct py_decoder *p = d->py;
	size_t i;

	for (i = 0; p && i < p->nseen; i++)
		if (p->seen[i].pid == pid)
			p->seen[i] = p->seen[--p->nseen];
}

#define SPLICE_MAX 512

uint32_t dec_py_splice(struct decoder *d, struct tstate *t, uint32_t pid, uint32_t path)
{
	uint32_t funcs[SPLICE_MAX], out[SPLICE_MAX + BP_PY_MAX_FRAMES];
	struct py_decoder *p = py_get(d);
	struct py_tstate *py = t->py;
	size_t n, k, m = 0, g = 0, i;

	note_process(d, pid);
	if (!py || !py->n)
		return path;
	for (i = 0; i < p->nseen; i++)
		if (p->seen[i].pid == pid)
			p->seen[i].python = true;	/* frames came: no need to look again */
	n = session__path_funcs(d->s, path, funcs, SPLICE_MAX);
	/*
	 * From the innermost frame out: each native interpreter-loop frame
	 * gives way to the Python frames it runs, the group up to and
	 * including the first of its C activation (is_entry).
	 */
	for (k = n; k-- > 0;) {
		if (!is_eval(p, d->s, funcs[k]) || g >= py->n) {
			out[m++] = funcs[k];
			continue;
		}
		do {
			if ((py->frames[g] & 3) == 3)
				continue;	/* an entry shim ends the group, shows nothing */
			out[m++] = sampled_code(d, pid, py->frames[g] & ~3ull);
			if (py->task && g == py->task_at)	/* its task, the awaiting ones */
				m += dec_pytask_frames(d, pid, py->task, py->trio, py->awaited_by,
						       out + m, SPLICE_MAX + BP_PY_MAX_FRAMES - m);
		} while (!(py->frames[g++] & 1) && g < py->n && m < SPLICE_MAX + BP_PY_MAX_FRAMES);
	}
	py->n = 0;
	path = 0;
	while (m-- > 0)
		path = session__path(d->s, path, out[m]);
	return path;
}

int decoder__py_call(const void *rec, size_t size, uint64_t *ts)
{
	const struct bp_rec_hdr *h = rec;

	if (size < sizeof(struct bp_rec_py) || h->type != BP_REC_PY)
		return 0;
	*ts = h->ts;
	return h->flags == BP_PY_CALL ? 1 : h->flags == BP_PY_RETURN ? -1 : 0;
}
