// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The event filter (see filter.h). */
#include <stdlib.h>
#include "filter.h"

static bool has_id(const pid_t *ids, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((uint32_t)ids[i] == id)
			return true;
	return false;
}

static bool keep_task(const struct event_filter *f, uint32_t pid, uint32_t tid)
{
	return (!f->npids || has_id(f->pids, f->npids, pid)) &&
	       (!f->ntids || has_id(f->tids, f->ntids, tid));
}

bool filter__none(const struct event_filter *f)
{
	return !f || (!f->npids && !f->ntids && !f->min_time);
}

bool filter__keep(const struct event_filter *f, const struct bp_event *ev)
{
	uint64_t dur;

	if (!f)
		return true;
	switch (ev->kind) {
	case BP_EV_CALL:
		dur = ev->call.end > ev->call.begin ? ev->call.end - ev->call.begin : 0;
		if (dur < f->min_time)
			return false;
		return keep_task(f, ev->call.pid, ev->call.tid);
	case BP_EV_SAMPLE:
		return keep_task(f, ev->sample.pid, ev->sample.tid);
	case BP_EV_ANNOT:
		return keep_task(f, ev->annot.pid, ev->annot.tid);
	case BP_EV_EDGE:
		return keep_task(f, ev->edge.src_pid, ev->edge.src_tid) ||
		       keep_task(f, ev->edge.dst_pid, ev->edge.dst_tid);
	default:
		return true;	/* losses concern every process */
	}
}

void filter__tables(const struct event_filter *f, struct bp_session *s)
{
	size_t i, j, k;

	if (!f || (!f->npids && !f->ntids))
		return;
	for (i = j = 0; i < s->nthreads; i++) {
		const struct bp_thread *t = &s->threads[i];

		if ((f->npids && !has_id(f->pids, f->npids, t->pid)) ||
		    (f->ntids && !has_id(f->tids, f->ntids, t->tid)))
			continue;
		s->threads[j++] = *t;	/* order kept: still sorted by tid */
	}
	s->nthreads = j;
	for (i = j = 0; i < s->nprocs; i++) {
		struct bp_process *p = &s->procs[i];
		bool keep = f->npids ? has_id(f->pids, f->npids, p->pid) : true;

		if (keep && f->ntids) {
			keep = false;
			for (k = 0; k < s->nthreads && !keep; k++)
				keep = s->threads[k].pid == p->pid;
		}
		if (!keep) {
			free(p->name);
			continue;
		}
		s->procs[j++] = *p;
	}
	s->nprocs = j;
}

void filter__free(struct event_filter *f)
{
	free(f->pids);
	free(f->tids);
	f->pids = f->tids = NULL;
	f->npids = f->ntids = 0;
}
