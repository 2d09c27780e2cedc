/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the three BPF objects (trace, sample, usdt) share: the ring buffer
 * and the set of traced processes (the loader makes sample and usdt reuse
 * trace's maps, so there is one stream and one set), the per-CPU loss
 * counters and the pause flag in each object's .bss, and the filters built
 * on them.  BPF-only: include after vmlinux.h, bpf_helpers.h and events.h.
 */
#ifndef BPFPROF_COMMON_BPF_H
#define BPFPROF_COMMON_BPF_H

const volatile bool trace_all = false;	/* -a: every process */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* sized by the loader (--buffer-size), or trace's reused */
} rb SEC(".maps");

/* The traced thread groups: tgid -> BP_TGID_RECORDING or BP_TGID_GATED. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

/*
 * Bit tgid set while tgids[tgid] == BP_TGID_RECORDING: the hash is the set
 * of member processes (fork/exit bookkeeping, counted by the loader), this
 * is what the hot path reads.  Mapped by the loader, which sets bits with
 * atomic operations too.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct bp_tgid_bits);
} recording SEC(".maps");

/* Ring buffer reserve failures, per CPU; the loader reads .bss directly. */
__u64 lost[BP_MAX_CPUS];

/* Set by the loader when the recording ends, before the last drain. */
volatile __u32 paused;

/* Is this process being recorded now (traced, and inside its --gated window)? */
static __always_inline bool is_traced(__u32 tgid)
{
	__u32 zero = 0;
	struct bp_tgid_bits *b;

	if (paused)
		return false;
	if (trace_all)
		return true;
	b = bpf_map_lookup_elem(&recording, &zero);
	return b && (b->w[(tgid >> 6) & (BP_TGID_WORDS - 1)] >> (tgid & 63)) & 1;
}

/* Keeps the recording bit of tgid equal to its tgids state. */
static __always_inline void set_recording(__u32 tgid, bool on)
{
	__u32 zero = 0;
	struct bp_tgid_bits *b = bpf_map_lookup_elem(&recording, &zero);
	__u64 bit = 1ull << (tgid & 63);

	if (!b)
		return;
	if (on)
		__sync_fetch_and_or(&b->w[(tgid >> 6) & (BP_TGID_WORDS - 1)], bit);
	else
		__sync_fetch_and_and(&b->w[(tgid >> 6) & (BP_TGID_WORDS - 1)], ~bit);
}

/* Is this process one of ours at all (for fork/exit/exec bookkeeping)? */
static __always_inline bool is_member(__u32 tgid)
{
	return trace_all || bpf_map_lookup_elem(&tgids, &tgid);
}

/* A record's header (events.h: every record starts with one), stamped at ts. */
static __always_inline void rec_hdr_at(struct bp_rec_hdr *h, __u16 type, __u16 flags, __u32 cpu,
				       __u64 pid_tgid, __u64 ts)
{
	h->type = type;
	h->flags = flags;
	h->cpu = cpu;
	h->ts = ts;
	h->pid_tgid = pid_tgid;
}

/* ... stamped now (the clock read between the stores, as the records always were). */
static __always_inline void rec_hdr(struct bp_rec_hdr *h, __u16 type, __u16 flags, __u32 cpu,
				    __u64 pid_tgid)
{
	h->type = type;
	h->flags = flags;
	h->cpu = cpu;
	h->ts = bpf_ktime_get_ns();
	h->pid_tgid = pid_tgid;
}

static __always_inline void count_lost_n(__u32 cpu, __u32 n)
{
	if (cpu < BP_MAX_CPUS)
		__sync_fetch_and_add(&lost[cpu], n);
}

static __always_inline void count_lost(__u32 cpu)
{
	count_lost_n(cpu, 1);
}

/*
 * The per-CPU batches of call records (struct bp_rec_batch), shared like rb.
 *
 * `busy` guards a batch against the contexts that can interrupt its user on
 * the same CPU: an interrupt (the loader's flush runs in one), or, on a
 * preemptible kernel, another task (uprobe programs can be preempted, not
 * migrated).  Whoever finds it set leaves the batch alone: a call record
 * then goes directly to the ring buffer, a flush is skipped.  The holder
 * sets it before reading `n`, so an interrupt between its check and its set
 * (which may send and empty the batch) is seen.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_rec_batch);
} batches SEC(".maps");

#define bp_barrier()	asm volatile("" ::: "memory")
#define BP_ONCE(x)	(*(volatile typeof(x) *)&(x))

/* Takes this CPU's batch, or NULL if an interrupted context holds it. */
static __always_inline struct bp_rec_batch *batch_get(void)
{
	__u32 zero = 0;
	struct bp_rec_batch *b = bpf_map_lookup_elem(&batches, &zero);

	if (!b || BP_ONCE(b->busy))
		return NULL;
	BP_ONCE(b->busy) = 1;
	bp_barrier();
	return b;
}

static __always_inline void batch_put(struct bp_rec_batch *b, __u32 n)
{
	BP_ONCE(b->n) = n;
	bp_barrier();
	BP_ONCE(b->busy) = 0;
}

/* Sends the first n records of a held batch. */
static __always_inline void batch_send(struct bp_rec_batch *b, __u32 n, __u32 cpu)
{
	if (n > BP_BATCH_RECS)
		n = BP_BATCH_RECS;
	if (!n)
		return;
	/* stamped with its last call's time */
	rec_hdr_at(&b->h, BP_REC_BATCH, 0, cpu, 0, b->r[(n - 1) & (BP_BATCH_RECS - 1)].h.ts);
	b->n = n;
	if (bpf_ringbuf_output(&rb, b, sizeof(*b) - (BP_BATCH_RECS - n) * sizeof(b->r[0]),
			       BPF_RB_NO_WAKEUP))
		count_lost_n(cpu, n);
}

/*
 * Sends this CPU's batch now, unless it is empty or held: before a record
 * written directly in a task's context (that task's calls may be in the
 * batch), when a thread leaves the CPU, and on the loader's request.
 */
static __always_inline void batch_flush(void)
{
	__u32 zero = 0;
	struct bp_rec_batch *b = bpf_map_lookup_elem(&batches, &zero);

	if (!b || !BP_ONCE(b->n))
		return;
	b = batch_get();
	if (!b)
		return;
	batch_send(b, BP_ONCE(b->n), bpf_get_smp_processor_id());
	batch_put(b, 0);
}

#endif
