/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Naming a CPython code object from BPF, once per process: a BP_REC_PYCODE
 * record with its qualified name, file and first line, read while the
 * process lives (a short program is gone by the time userspace would read
 * its memory, and its frames would stay unnamed).  Shared by python.bpf.c
 * (exact calls) and python_stack.bpf.h (sampled and off-CPU stacks); each
 * object keeps its own map of what it named.  BPF-only; after common.bpf.h.
 */
#ifndef BPFPROF_PYTHON_CODE_BPF_H
#define BPFPROF_PYTHON_CODE_BPF_H

#include "python.h"

/* A pointer-sized read of user memory: 0 when it fails. */
static __always_inline __u64 rd64(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

struct code_key {
	__u32 tgid;
	__u32 pad;
	__u64 code;
};

/* What a code object looked like when it was named: another object at the same address differs. */
struct code_seen {
	__u64 qualname;
	__u64 filename;
	__u32 line;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct code_key);
	__type(value, struct code_seen);
} py_codes SEC(".maps");

/*
 * Copies the characters of a compact str object: 0, or -1 when it cannot be
 * read (not compact, not ready, a page not present).
 */
static __always_inline int read_str(const struct bp_py_cfg *c, __u64 obj, char *buf, __u32 cap,
				    __u16 *len, __u8 *kind)
{
	__u32 state = 0, n, k;
	__u64 length = 0, data;

	*len = 0;
	*kind = 1;
	if (!obj || bpf_probe_read_user(&state, sizeof(state), (void *)(obj + c->str_state)) ||
	    bpf_probe_read_user(&length, sizeof(length), (void *)(obj + c->str_length)))
		return -1;
	/* state: interned:2 kind:3 compact:1 ascii:1 ready:1 */
	k = (state >> 2) & 7;
	if (!(state & (1 << 5)) || (k != 1 && k != 2 && k != 4))
		return -1;
	data = obj + ((state & (1 << 6)) ? c->str_ascii_data : c->str_compact_data);
	n = length * k > cap ? cap : length * k;
	n -= n % k;
	if (n > BP_PY_FILE_LEN)
		n = BP_PY_FILE_LEN;
	if (n && bpf_probe_read_user(buf, n & 0xff, (void *)data))
		return -1;
	*len = n;
	*kind = k;
	return 0;
}

static __always_inline void name_code(const struct bp_py_cfg *c, __u32 tgid, __u64 id, __u64 code)
{
	struct code_key key = { .tgid = tgid, .code = code };
	struct code_seen now = {}, *seen;
	struct bp_rec_pycode *r;
	__u32 cpu;

	now.qualname = rd64(code + c->code_qualname);
	now.filename = rd64(code + c->code_filename);
	bpf_probe_read_user(&now.line, sizeof(now.line), (void *)(code + c->code_firstlineno));
	seen = bpf_map_lookup_elem(&py_codes, &key);
	if (seen && seen->qualname == now.qualname && seen->filename == now.filename &&
	    seen->line == now.line)
		return;
	cpu = bpf_get_smp_processor_id();
	/* reserved before the map says "named": the name precedes every use in the stream */
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return;
	}
	rec_hdr(&r->h, BP_REC_PYCODE, 0, cpu, id);
	r->code = code;
	r->firstlineno = now.line;
	r->flags = 0;
	r->pad[0] = r->pad[1] = 0;
	{
		__u32 co = 0;

		/* CO_GENERATOR 0x20, CO_COROUTINE 0x80, CO_ITERABLE_COROUTINE 0x100, CO_ASYNC_GENERATOR 0x200 */
		bpf_probe_read_user(&co, sizeof(co), (void *)(code + c->code_flags));
		if (c->code_flags) {
			if (co & 0x20)
				r->flags |= BP_PYCODE_GENERATOR;
			if (co & 0x180)
				r->flags |= BP_PYCODE_COROUTINE;
			if (co & 0x200)
				r->flags |= BP_PYCODE_ASYNC_GEN;
		}
	}
	if (read_str(c, now.qualname, r->name, BP_PY_NAME_LEN, &r->name_len, &r->name_kind))
		r->flags |= BP_PYCODE_BAD_NAME;
	if (read_str(c, now.filename, r->file, BP_PY_FILE_LEN, &r->file_len, &r->file_kind))
		r->flags |= BP_PYCODE_BAD_FILE;
	bpf_map_update_elem(&py_codes, &key, &now, BPF_ANY);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* What an asyncio Task's name was when sent: a set_name() changes it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct code_key);
	__type(value, __u64);
} py_tasks SEC(".maps");

/*
 * The asyncio Task stepping the coroutine whose frame is `frame`, when the
 * caller frame `previous` is asyncio's Handle._run (its self, a Handle, has
 * as _callback the Task's step wrapper (task at +16) or its wakeup method
 * (m_self at +24)); trusted only if the Task's task_coro is this very
 * coroutine, so a wrong guess reads nothing.  0 when not.
 */
static __always_inline __u64 task_of(const struct bp_py_cfg *c, __u64 frame, __u64 previous)
{
	__u64 cb, coro, task;
	__u8 owner = 0;

	if (!c->task_coro || !previous)
		return 0;
	bpf_probe_read_user(&owner, 1, (void *)(frame + c->frame_owner));
	if (owner != c->owned_by_generator)
		return 0;
	cb = rd64(rd64(previous + c->frame_localsplus) + c->handle_callback);
	if (!cb)
		return 0;
	coro = frame - c->gen_iframe;
	task = rd64(cb + 16);
	if (!task || rd64(task + c->task_coro) != coro) {
		task = rd64(cb + 24);
		if (!task || rd64(task + c->task_coro) != coro)
			return 0;
	}
	return task;
}

/*
 * The Task awaiting `task` (`await task` in its coroutine): the first done
 * callback of `task` is that Task's wakeup method (m_self at +24), and that
 * Task waits on `task` (task_fut_waiter); 0 when not (a gather, a TaskGroup,
 * a callback added by other code, nothing).
 */
static __always_inline __u64 awaiter_of(const struct bp_py_cfg *c, __u64 task)
{
	__u64 cb, waiter;

	if (!c->fut_callback0 || !c->task_fut_waiter || !task)
		return 0;
	cb = rd64(task + c->fut_callback0);
	waiter = cb ? rd64(cb + 24) : 0;
	if (!waiter || rd64(waiter + c->task_fut_waiter) != task)
		return 0;
	return waiter;
}

#define TRIO_LOCALS	32

/* Is `frame` a plain generator's (CO_GENERATOR, not a coroutine or async generator)? */
static __always_inline bool is_plain_gen(const struct bp_py_cfg *c, __u64 frame)
{
	__u64 code = rd64(frame + c->frame_code);
	__u32 flags = 0;
	__u8 owner = 0;

	bpf_probe_read_user(&owner, 1, (void *)(frame + c->frame_owner));
	return owner == c->owned_by_generator && code &&
	       !bpf_probe_read_user(&flags, sizeof(flags), (void *)(code + c->code_flags)) &&
	       (flags & 0x3a0) == 0x20;
}

/*
 * The trio Task whose coroutine starts in `frame`, when the caller frame
 * `previous` is a plain generator's (trio's unrolled_run, which steps each
 * task as task.context.run(task.coro.send, ...)): the first of its first
 * TRIO_LOCALS locals whose `coro` slot is this very coroutine (the local
 * `task`).  0 when not.
 */
static __always_inline __u64 trio_task_of(const struct bp_py_cfg *c, __u64 frame, __u64 previous)
{
	__u64 coro = frame - c->gen_iframe, t;
	__u8 owner = 0;
	__u32 i;

	if (!c->trio_task_coro || !previous)
		return 0;
	bpf_probe_read_user(&owner, 1, (void *)(frame + c->frame_owner));
	if (owner != c->owned_by_generator || !is_plain_gen(c, previous))
		return 0;
	for (i = 0; i < TRIO_LOCALS; i++) {
		t = rd64(previous + c->frame_localsplus + 8 * i);
		if (t && rd64(t + c->trio_task_coro) == coro)
			return t;
	}
	return 0;
}

/*
 * The trio Task running the coroutine that the generator frame `gen`
 * (trio's unrolled_run) steps now, for sampled stacks: the first of gen's
 * first TRIO_LOCALS locals whose `coro` slot is a coroutine whose frame
 * runs just inside gen (its `previous` link is gen: a suspended frame's is
 * NULL).  0 when not.
 */
static __always_inline __u64 trio_running(const struct bp_py_cfg *c, __u64 gen)
{
	__u64 t, coro;
	__u32 i;

	if (!c->trio_task_coro || !is_plain_gen(c, gen))
		return 0;
	for (i = 0; i < TRIO_LOCALS; i++) {
		t = rd64(gen + c->frame_localsplus + 8 * i);
		coro = t ? rd64(t + c->trio_task_coro) : 0;
		if (coro && rd64(coro + c->gen_iframe + c->frame_previous) == gen)
			return t;
	}
	return 0;
}

/*
 * The trio Task awaiting the trio Task `task`: its parent nursery's parent
 * task while that one waits in the nursery's __aexit__ for its children
 * (_parent_waiting_in_aexit is True: a bool's ob_size is 1).  The chain
 * stops at trio's init task (its own parent nursery is None, not an object
 * of the nursery's type) and at anything not looking like a Task (another
 * type than `task`'s).  0 when not.
 */
static __always_inline __u64 trio_awaiter_of(const struct bp_py_cfg *c, __u64 task)
{
	__u64 nursery, values, waiting, parent, up;

	if (!c->trio_task_nursery || !task)
		return 0;
	nursery = rd64(task + c->trio_task_nursery);
	values = nursery ? rd64(nursery + (__s64)c->obj_values) : 0;
	waiting = values ? rd64(values + c->trio_nursery_waiting) : 0;
	if (!waiting || rd64(waiting + 16) != 1)
		return 0;
	parent = rd64(values + c->trio_nursery_parent);
	if (!parent || rd64(parent + 8) != rd64(task + 8))
		return 0;
	up = rd64(parent + c->trio_task_nursery);
	if (!up || rd64(up + 8) != rd64(nursery + 8))
		return 0;	/* the init task: its parent nursery is None */
	return parent;
}

/*
 * Names the Task `task` (BP_REC_PYTASK): at its first step (`first`: a new
 * Task may have an old one's address, and its name an old name's), and
 * again when its name object changed (set_name).
 */
static __always_inline void name_task(const struct bp_py_cfg *c, __u32 tgid, __u64 id,
				      __u64 task, __u32 name_off, bool first)
{
	struct code_key key = { .tgid = tgid, .code = task };
	struct bp_rec_pytask *r;
	__u64 name, *seen;
	__u32 cpu;

	name = rd64(task + name_off);
	seen = bpf_map_lookup_elem(&py_tasks, &key);
	if (seen && *seen == name && !first)
		return;
	cpu = bpf_get_smp_processor_id();
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return;
	}
	rec_hdr(&r->h, BP_REC_PYTASK, 0, cpu, id);
	r->task = task;
	r->pad = 0;
	r->bad = read_str(c, name, r->name, BP_PY_NAME_LEN, &r->name_len, &r->name_kind) ? 1 : 0;
	bpf_map_update_elem(&py_tasks, &key, &name, BPF_ANY);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* task_of(), or at a coroutine's first start trio_task_of(); named (name_task()). */
static __always_inline __u64 find_task(const struct bp_py_cfg *c, __u32 tgid, __u64 id,
				       __u64 frame, __u64 previous, bool first)
{
	__u64 task = task_of(c, frame, previous);

	if (task) {
		name_task(c, tgid, id, task, c->task_name, first);
	} else if (first) {
		task = trio_task_of(c, frame, previous);
		if (task)
			name_task(c, tgid, id, task, c->trio_task_name, true);
	}
	return task;
}

#endif
