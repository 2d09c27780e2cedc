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

#endif
