// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The event filter (see filter.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "base/log.h"
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

/* The pids of the recording, "1234, 1240, ..." (up to 8), into buf. */
static void list_pids(const struct bp_session *s, char *buf, size_t len)
{
	size_t i, used = 0;

	snprintf(buf, len, "none");
	for (i = 0; i < s->nprocs && used < len; i++) {
		if (i == 8) {
			snprintf(buf + used, len - used, ", ...");
			break;
		}
		used += snprintf(buf + used, len - used, "%s%" PRIu32, i ? ", " : "",
				 s->procs[i].pid);
	}
}

int filter__check(const struct event_filter *f, const struct bp_session *s, const char *what)
{
	char pids[128];
	size_t i, k;
	bool found;

	if (!f)
		return 0;
	for (i = 0; i < f->npids; i++) {
		for (k = 0, found = false; k < s->nprocs && !found; k++)
			found = s->procs[k].pid == (uint32_t)f->pids[i];
		for (k = 0; k < s->nthreads && !found; k++)
			found = s->threads[k].pid == (uint32_t)f->pids[i];
		if (!found) {
			list_pids(s, pids, sizeof(pids));
			p_err("pid %d is not in %s (its processes: %s)", (int)f->pids[i], what, pids);
			return -ESRCH;
		}
	}
	for (i = 0; i < f->ntids; i++) {
		for (k = 0, found = false; k < s->nthreads && !found; k++)
			found = s->threads[k].tid == (uint32_t)f->tids[i];
		if (!found) {
			p_err("thread %d is not in %s (see 'bpfprof report' for its threads)",
			      (int)f->tids[i], what);
			return -ESRCH;
		}
	}
	return 0;
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
