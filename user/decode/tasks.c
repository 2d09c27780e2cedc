// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Process and thread lifetime (fork, exit, exec, names) and stack samples
 * (on-cpu, and off-cpu intervals closed at the switch back).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "base/log.h"
#include "symbols/procmaps.h"
#include "symbols/symbolize.h"
#include "internal.h"

int dec_on_task(struct decoder *d, const struct bp_rec_task *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	char comm[BP_COMM_LEN + 1];
	struct bp_thread *bt;
	struct tstate *t;
	int err = 0;

	memcpy(comm, r->comm, BP_COMM_LEN);
	comm[BP_COMM_LEN] = 0;

	switch (r->h.type) {
	case BP_REC_FORK: {
		uint32_t ptid = (uint32_t)r->parent_pid_tgid;
		struct tstate *pt = dec_thread_state(d, ptid, r->parent_pid_tgid >> 32, ts);

		t = dec_thread_state(d, tid, pid, ts);
		pt = dec_thread_state(d, ptid, r->parent_pid_tgid >> 32, ts);	/* t's insert may move it */
		if (pt->depth) {
			const struct frame *src = &pt->stack[pt->depth - 1];

			memset(&t->pend_fork, 0, sizeof(t->pend_fork));
			t->pend_fork.kind = BP_EDGE_FORK;
			t->pend_fork.src_call = src->id;
			t->pend_fork.src_ts = ts;
			t->pend_fork.src_pid = pt->pid;
			t->pend_fork.src_tid = pt->tid;
			t->pend_fork.src_func = src->func;
		}
		bt = session__thread(d->s, tid, pid);
		memcpy(bt->name, comm, sizeof(bt->name));
		bt->name[sizeof(bt->name) - 1] = 0;
		if (r->h.flags & BP_TASK_NEW_PROCESS) {
			struct bp_process *p = session__process(d->s, pid);

			p->ppid = r->parent_pid_tgid >> 32;
			if (!p->name)
				p->name = xstrdup(comm);
			if (d->sy)	/* a short child's stacks: its parent's mappings */
				symbolizer__forked(d->sy, p->ppid, pid);
		}
		break;
	}
	case BP_REC_COMM:
		t = dec_thread_state(d, tid, pid, ts);
		bt = session__thread(d->s, tid, pid);
		memcpy(bt->name, comm, sizeof(bt->name));
		bt->name[sizeof(bt->name) - 1] = 0;
		if (tid == pid)
			session__set_process_name(d->s, pid, comm);
		break;
	case BP_REC_TASK_EXIT:
		t = dec_thread_state(d, tid, pid, ts);
		err = dec_close_all(d, t, ts, BP_CALL_UNFINISHED);
		bt = session__thread(d->s, tid, pid);
		bt->exited = 1;
		if (!bt->name[0]) {
			memcpy(bt->name, comm, sizeof(bt->name));
			bt->name[sizeof(bt->name) - 1] = 0;
		}
		if (tid == pid && !session__process(d->s, pid)->name)
			session__set_process_name(d->s, pid, comm);
		if (ts > bt->last_ts)
			bt->last_ts = ts;
		/*
		 * Nothing of it can come after its exit, but the end of an
		 * interval whose switch-in was not seen: that is sent at its
		 * last switch-out, after this (BP_SWITCH_LATE).
		 */
		if (!err && t->offcpu_pending)
			t->exited = true;
		else if (!err)
			dec_forget_thread(d, tid);
		return err;
	default:
		return -EINVAL;
	}
	t->last_ts = ts;
	bt = session__find_thread(d->s, tid);
	if (bt && ts > bt->last_ts)
		bt->last_ts = ts;
	return err;
}

int decoder__reap(struct decoder *d, uint64_t before,
		  bool (*gone)(uint32_t tid, uint32_t pid, void *ctx), void *ctx, size_t *n)
{
	uint32_t *tids = NULL;
	size_t i, k = 0;
	int err = 0;

	*n = 0;
	/* first the list: forgetting a thread moves other entries of the table */
	for (i = 0; i < d->tab_cap; i++)
		if (d->tab[i].tid && d->tab[i].last_ts < before &&
		    gone(d->tab[i].tid, d->tab[i].pid, ctx)) {
			if (!tids)
				tids = xcalloc(d->tab_used, sizeof(*tids));
			tids[k++] = d->tab[i].tid;
		}
	for (i = 0; i < k && !err; i++) {
		struct tstate *t = dec_thread_state(d, tids[i], 0, 0);
		struct bp_thread *bt;
		uint64_t end = t->last_ts;

		err = dec_close_all(d, t, end, BP_CALL_UNFINISHED);
		bt = session__find_thread(d->s, tids[i]);
		if (bt)
			bt->exited = 1;
		if (!err) {
			dec_forget_thread(d, tids[i]);
			(*n)++;
		}
	}
	free(tids);
	return err;
}

int dec_on_exec(struct decoder *d, const struct bp_rec_exec *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	char path[BP_PATH_LEN + 1];
	const char *base;
	struct tstate *t;
	int err;

	/* The old image's calls are gone; a non-leader that exec'd took the leader's tid. */
	if (r->old_tid && r->old_tid != tid) {
		t = dec_thread_state(d, r->old_tid, pid, ts);
		err = dec_close_all(d, t, ts, BP_CALL_UNFINISHED);
		if (err)
			return err;
	}
	t = dec_thread_state(d, tid, pid, ts);
	err = dec_close_all(d, t, ts, BP_CALL_UNFINISHED);
	if (err)
		return err;
	t->last_ts = ts;
	memcpy(path, r->filename, BP_PATH_LEN);
	path[BP_PATH_LEN] = 0;
	base = strrchr(path, '/');
	session__set_process_name(d->s, pid, base ? base + 1 : path);
	if (d->sy)
		symbolizer__forget(d->sy, pid);
	dec_py_forget_process(d, pid);
	return 0;
}

/*
 * BP_REC_MMAP: the path from its components (file first), then the mapping
 * to the symbolizer.  A path the BPF walk could not finish is left to /proc.
 */
int dec_on_mmap(struct decoder *d, const struct bp_rec_mmap *r, size_t size)
{
	const char *comp[BP_MMAP_DEPTH];
	char path[BP_MMAP_NAMES + 2];
	struct procmap m = { 0 };
	size_t n = 0, len = 0, i;

	if (size < BP_MMAP_HDR_SIZE + r->len || r->len > BP_MMAP_NAMES)
		return -EINVAL;
	if (!d->sy || (r->h.flags & BP_MMAP_PARTIAL))
		return 0;
	for (i = 0; i < r->len && n < BP_MMAP_DEPTH; i += strnlen(r->names + i, r->len - i) + 1)
		comp[n++] = r->names + i;
	if (i != r->len)
		return -EINVAL;	/* the last name without its NUL, or deeper than the walk goes */
	while (n--)
		len += snprintf(path + len, sizeof(path) - len, "/%s", comp[n]);
	if (!len)
		strcpy(path, "/");
	m.start = r->start;
	m.end = r->end;
	m.pgoff = r->pgoff;
	m.inode = r->ino;
	m.dev_major = r->dev >> 20;
	m.dev_minor = r->dev & 0xfffff;
	snprintf(m.perms, sizeof(m.perms), "%c%c%c%c", r->prot & BP_VM_READ ? 'r' : '-',
		 r->prot & BP_VM_WRITE ? 'w' : '-', r->prot & BP_VM_EXEC ? 'x' : '-',
		 r->prot & BP_VM_SHARED ? 's' : 'p');
	m.path = path;
	symbolizer__mapped(d->sy, r->h.pid_tgid >> 32, &m);
	return 0;
}

static void dec_name_from_comm(struct decoder *d, uint32_t tid, uint32_t pid, const char *c)
{
	char comm[BP_COMM_LEN + 1];
	struct bp_thread *bt = session__thread(d->s, tid, pid);

	if (bt->name[0])
		return;
	memcpy(comm, c, BP_COMM_LEN);
	comm[BP_COMM_LEN] = 0;
	memcpy(bt->name, comm, sizeof(bt->name));
	bt->name[sizeof(bt->name) - 1] = 0;
	if (tid == pid && !session__process(d->s, pid)->name)
		session__set_process_name(d->s, pid, comm);
}

/*
 * BP_REC_USTACK: the same record with a stack copy after the frames (issue 8);
 * NULL without one, or when its length does not fit the record's size.
 */
static const struct bp_ustack *sample_stack(const struct bp_rec_sample *r, size_t size)
{
	size_t off = BP_SAMPLE_HDR_SIZE + 8ull * (r->nuser + r->nkern);
	const struct bp_ustack *us = (const struct bp_ustack *)((const char *)r + off);

	if (r->h.type != BP_REC_USTACK || size < off + sizeof(*us) ||
	    size - off - sizeof(*us) < us->len)
		return NULL;
	return us;
}

int dec_on_sample(struct decoder *d, const struct bp_rec_sample *r, size_t size, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	struct bp_event ev = { .kind = BP_EV_SAMPLE };
	struct tstate *t;
	bool truncated;
	uint32_t path;

	if (size < BP_SAMPLE_HDR_SIZE || r->nuser > BP_MAX_USER_FRAMES ||
	    r->nkern > BP_MAX_KERN_FRAMES || size < BP_SAMPLE_HDR_SIZE + 8ull * (r->nuser + r->nkern))
		return -EINVAL;
	t = dec_thread_state(d, tid, pid, ts);
	/*
	 * Not t->last_ts: that is the time frames without a return are closed
	 * at, and a sample taken while the thread's call batch was held arrives
	 * ahead of calls older than it.
	 */
	dec_name_from_comm(d, tid, pid, r->comm);
	if (!d->sy)
		return 0;
	path = symbolizer__sample(d->sy, pid, tid, (const uint64_t *)r->ips, r->nuser, r->nkern,
				  sample_stack(r, size), &truncated);
	path = dec_py_splice(d, t, pid, path);	/* a CPython thread: its Python frames */
	if (r->h.flags & BP_SAMPLE_OFFCPU) {
		t->offcpu_pending = true;
		t->offcpu_path = path;
		t->offcpu_flags = BP_SAMPLE_F_OFFCPU | (truncated ? BP_SAMPLE_F_TRUNCATED : 0);
		t->offcpu_ts = ts;
		return 0;
	}
	ev.sample.ts = ts;
	ev.sample.weight = r->period;
	ev.sample.pid = pid;
	ev.sample.tid = tid;
	ev.sample.path = path;
	ev.sample.cpu = r->h.cpu;
	ev.sample.flags = truncated ? BP_SAMPLE_F_TRUNCATED : 0;
	d->s->nsamples++;
	if (truncated)
		d->s->ntruncated++;
	return d->sink(d->ctx, &ev);
}

int dec_on_switch(struct decoder *d, const struct bp_rec_switch *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	struct bp_event ev = { .kind = BP_EV_SAMPLE };
	struct tstate *t = dec_find_thread(d, tid);	/* an exited one too (BP_SWITCH_LATE) */
	int err;

	if (!t)
		t = dec_thread_state(d, tid, pid, ts);
	if (ts > t->last_ts)
		t->last_ts = ts;
	if (!t->offcpu_pending)
		return 0;	/* its start was lost or came before the recording */
	t->offcpu_pending = false;
	/*
	 * The interval is [switch-in - blocked, switch-in], both taken by the
	 * switch program: the stack record's own time comes after its stack
	 * copy (tens of us here), and a slice starting there ended that much
	 * after the thread ran again -- past the end of the call it blocked in.
	 */
	ev.sample.ts = ts >= r->blocked_ns ? ts - r->blocked_ns : t->offcpu_ts;
	ev.sample.weight = r->blocked_ns;
	ev.sample.pid = pid;
	ev.sample.tid = tid;
	ev.sample.path = t->offcpu_path;
	ev.sample.cpu = r->h.cpu;
	ev.sample.flags = t->offcpu_flags;
	d->s->noffcpu++;
	err = d->sink(d->ctx, &ev);
	if (t->exited)
		dec_forget_thread(d, tid);
	return err;
}
