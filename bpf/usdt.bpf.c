// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * USDT probes: the bpfprof.h annotations (marks, info, events, spans, the
 * --gated capture window) and any probe named with -U.  One program serves
 * them all; the attach cookie says which probe fired.  It shares the call
 * tracer's ring buffer and process set (the loader reuses trace.bpf.c's
 * maps), so annotations land in the same ordered stream as the calls.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "events.h"
#include "common.bpf.h"
#include "str_where.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool gated = false;	/* START/STOP open and close the window */


/*
 * Labels on pages of a file mapped read-only that the read found absent,
 * by address space and address: where they lie.  An annotation's label is
 * a literal the program passes and never reads itself, so its page is
 * often never faulted in, and the failed read (a fault taken and fixed
 * up) and bpf_find_vma() came at every hit: half of what a hit cost
 * (hotmarks: 2.0-2.9 us a hit, strncpy_from_user the costliest symbol of
 * its samples).  A read-only page holds its file's bytes, present or not:
 * the next hits take the place from here and read nothing.  (An unmap and
 * another file mapped at the same address in the same process would be
 * read at the old place, as long as the entry lives.)
 */
struct unread_key {
	__u64 mm;	/* an exec gives a new one */
	__u64 addr;
	__u32 tgid;	/* with mm: a later process reusing the freed mm is another key */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct unread_key);
	__type(value, struct bp_usdt_where);
} unread SEC(".maps");

#define VM_WRITE	0x2	/* include/linux/mm.h (a macro: not in BTF) */

/* str_where_cb(), also saying (in pad) whether the mapping is read-only */
static long where_ro_cb(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct bp_usdt_where *w = ctx;

	str_where_cb(task, vma, ctx);
	w->pad = w->ino && !(BPF_CORE_READ(vma, vm_flags) & VM_WRITE);
	return 0;
}

static __u32 read_str(char *dst, __u64 addr, struct bp_usdt_where *out)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct unread_key k = { .mm = (__u64)task->mm, .addr = addr,
				.tgid = bpf_get_current_pid_tgid() >> 32 };
	struct bp_usdt_where w = { .off = addr }, *known;	/* bpf_find_vma wants it on the stack */

	dst[0] = 0;
	known = bpf_map_lookup_elem(&unread, &k);
	if (known) {
		*out = *known;
		return 1;
	}
	if (bpf_probe_read_user_str(dst, BP_USDT_STR, (void *)addr) > 0)
		return 0;
	dst[0] = 0;
	bpf_find_vma(task, addr, where_ro_cb, &w, 0);
	if (!w.ino)
		w.off = 0;
	if (w.pad) {
		w.pad = 0;
		bpf_map_update_elem(&unread, &k, &w, BPF_ANY);
	}
	*out = w;
	return 1;
}

SEC("usdt")
int usdt_probe(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_usdt_cookie(ctx);
	__u32 tgid = id >> 32, kind = cookie & 0xff, cpu = bpf_get_smp_processor_id();
	struct bp_rec_usdt *r;
	__u8 *state = NULL;
	long v;
	int i, n;

	if (paused)
		return 0;
	if (!trace_all) {
		state = bpf_map_lookup_elem(&tgids, &tgid);
		if (!state)
			return 0;
	}
	/* the window is process-wide: any thread opens or closes it */
	if (gated && state && (kind == BP_USDT_START || kind == BP_USDT_STOP)) {
		*state = kind == BP_USDT_START ? BP_TGID_RECORDING : BP_TGID_GATED;
		set_recording(tgid, kind == BP_USDT_START);
	}
	else if (state && *state != BP_TGID_RECORDING)
		return 0;

	batch_flush();	/* the calls around the probe come in order */
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	rec_hdr(&r->h, BP_REC_USDT, kind, cpu, id);
	r->cookie = cookie;
	r->sp = PT_REGS_SP(ctx);
	r->s0[0] = 0;
	r->s1[0] = 0;
	__builtin_memset(r->where, 0, sizeof(r->where));
	n = bpf_usdt_arg_cnt(ctx);
	r->nargs = n < 0 ? 0 : n;
	r->unread = 0;
	for (i = 0; i < 6; i++) {
		v = 0;
		if (i < n)
			bpf_usdt_arg(ctx, i, &v);
		r->args[i] = v;
	}
	/* -U probes: the arguments said to be strings, in order, into s0 and s1 */
	if (kind == BP_USDT_OTHER) {
		__u32 mask = BP_USDT_STR_ARGS(cookie), slot = 0;

		for (i = 0; i < 6 && slot < BP_USDT_MAX_STR_ARGS; i++) {
			if (!(mask & (1u << i)) || i >= n)
				continue;
			if (read_str(slot ? r->s1 : r->s0, r->args[i], &r->where[slot]))
				r->unread |= slot ? BP_USDT_S1_UNREAD : BP_USDT_S0_UNREAD;
			slot++;
		}
	}
	/* the bpfprof.h probes pass their label/key/name as the first argument */
	if (kind != BP_USDT_OTHER && kind != BP_USDT_START && kind != BP_USDT_STOP && n > 0 &&
	    read_str(r->s0, r->args[0], &r->where[0]))
		r->unread |= BP_USDT_S0_UNREAD;
	if (kind == BP_USDT_INFO_STR && n > 1 && read_str(r->s1, r->args[1], &r->where[1]))
		r->unread |= BP_USDT_S1_UNREAD;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}
