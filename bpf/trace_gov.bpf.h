/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of trace.bpf.c (included once, there): the overhead governor's
 * filter of the call probes (gov_accept()).
 */
#ifndef BPFPROF_TRACE_GOV_BPF_H
#define BPFPROF_TRACE_GOV_BPF_H

/*
 * The overhead governor (user/cost/governor.c) spreads functions over
 * groups, each with its own pair of uprobe_multi links; dropping functions
 * re-creates one group's links without them.  Every probe cookie names its
 * group and the generation of its link (bpf/events.h); gov_groups[group]
 * says which generation is recorded.  Nothing is missed or counted twice
 * while old and new links of a group are both attached: the kernel runs a
 * hit's consumers newest first (consumer_add() puts a new one at the head
 * of the uprobe's list), and a return whose entry went through the old link
 * reaches the new link's return consumer too (non-session return consumers
 * are called for every pending return instance of the uprobe).  So:
 *   A. new links attached, word = old generation: the new handler records
 *      nothing and clears the thread's mark; the old handler records.
 *   X. word = new | old: the new handler records and sets the thread's
 *      mark; the old handler, always after it in the same hit, sees the mark,
 *      clears it and records nothing; a dropped function's old handler
 *      records nothing.  Lasts until the old links are destroyed.
 *   then word = new generation only.
 * A hit that straddles A -> X (new handler in A, old in X) is recorded once
 * by the old handler: the mark was cleared.  Only one move happens while
 * both links exist: X ends after the old links are gone.
 */
__u32 gov_groups[BP_GOV_GROUPS];

/* The thread's note between the two handlers of one hit. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} gov_marks SEC(".maps");

/* Functions dropped by the governor: their old link records nothing during X. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} gov_dropped SEC(".maps");

/*
 * Hits of dropped functions on old links not yet gone (their removal waits
 * for a grace period): what the drop does not save yet, for the estimate.
 */
__u64 gov_dropped_hits;

/* A hit on a link whose generation is not the stable one of its group (see above). */
static __noinline int gov_slow(__u64 cookie, __u32 w)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 gen = (cookie >> BP_GOV_GEN_SHIFT) & BP_GOV_GEN_MASK, old1 = w >> 16;
	__u32 func = (__u32)cookie;
	__u32 *m;

	if (!old1) {
		/*
		 * A: a link being made; or an old link still there after X
		 * (its removal is under way): it records nothing
		 */
		if (bpf_map_lookup_elem(&gov_dropped, &func))
			__sync_fetch_and_add(&gov_dropped_hits, 1);
		m = bpf_task_storage_get(&gov_marks, task, 0, 0);
		if (m)
			*m = 0;
		return 0;
	}
	if (gen == (w & 0xffff)) {
		m = bpf_task_storage_get(&gov_marks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (m)
			*m = 1;
		return 1;
	}
	if (gen != old1 - 1)
		return 0;
	if (bpf_map_lookup_elem(&gov_dropped, &func)) {
		__sync_fetch_and_add(&gov_dropped_hits, 1);
		return 0;
	}
	m = bpf_task_storage_get(&gov_marks, task, 0, 0);
	if (m && *m) {
		*m = 0;
		return 0;
	}
	return 1;
}

/* Is this hit recorded?  One load and a compare unless its group is being re-linked. */
static __always_inline bool gov_accept(__u64 cookie)
{
	__u32 w = gov_groups[(cookie >> BP_GOV_GROUP_SHIFT) & (BP_GOV_GROUPS - 1)];

	return w == ((cookie >> BP_GOV_GEN_SHIFT) & BP_GOV_GEN_MASK) || gov_slow(cookie, w);
}

#endif
