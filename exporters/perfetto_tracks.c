// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perfetto exporter, the rest of the trace: process and thread track
 * descriptors, lanes, losses, samples, flows, annotations and counters, the
 * clock snapshot (see perfetto.c for the format and the ordering rules).
 */
#include "internal.h"
static const char *process_name(const struct bp_session *s, uint32_t pid, char *buf, size_t sz)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid && s->procs[i].name && s->procs[i].name[0])
			return s->procs[i].name;
	snprintf(buf, sz, "pid %" PRIu32, pid);
	return buf;
}

void pf_write_process_desc(struct exporter *e, const struct bp_session *s, uint32_t pid)
{
	struct perfetto_priv *pr = e->priv;
	char buf[32];

	pb_reset(&pr->sub);
	pb_tag(&pr->sub, F_PD_PID, PB_VARINT);
	pb_varint(&pr->sub, pid);
	pb_str(&pr->sub, F_PD_NAME, process_name(s, pid, buf, sizeof(buf)));
	pb_reset(&pr->tmp);
	pb_uint(&pr->tmp, F_TD_UUID, UUID_PROCESS(pid));
	pb_msg(&pr->tmp, F_TD_PROCESS, &pr->sub);
	pb_reset(&pr->pkt);
	pb_msg(&pr->pkt, F_PKT_TRACK_DESC, &pr->tmp);
	pf_put_pkt_buf(e, &pr->pkt);
}

void pf_write_thread_desc(struct exporter *e, const struct bp_session *s, uint32_t pid,
			      uint32_t tid)
{
	struct perfetto_priv *pr = e->priv;
	const struct bp_thread *t = session__find_thread(s, tid);
	char name[sizeof(t->name) + 1];

	if (t) {
		/* comm is 16 bytes and need not be NUL-terminated when full. */
		memcpy(name, t->name, sizeof(t->name));
		name[sizeof(t->name)] = '\0';
	}
	if (!t || !name[0])
		snprintf(name, sizeof(name), "tid %" PRIu32, tid);
	pb_reset(&pr->sub);
	pb_tag(&pr->sub, F_THD_PID, PB_VARINT);
	pb_varint(&pr->sub, pid);
	pb_tag(&pr->sub, F_THD_TID, PB_VARINT);
	pb_varint(&pr->sub, tid);
	pb_str(&pr->sub, F_THD_NAME, name);
	pb_reset(&pr->tmp);
	pb_uint(&pr->tmp, F_TD_UUID, UUID_THREAD(pid, tid));
	pb_uint(&pr->tmp, F_TD_PARENT_UUID, UUID_PROCESS(pid));
	pb_msg(&pr->tmp, F_TD_THREAD, &pr->sub);
	pb_reset(&pr->pkt);
	pb_msg(&pr->pkt, F_PKT_TRACK_DESC, &pr->tmp);
	pf_put_pkt_buf(e, &pr->pkt);
}

void pf_write_named_desc(struct exporter *e, uint64_t uuid, uint64_t parent, const char *name,
			     bool counter)
{
	struct perfetto_priv *pr = e->priv;

	pb_reset(&pr->tmp);
	pb_uint(&pr->tmp, F_TD_UUID, uuid);
	pb_uint(&pr->tmp, F_TD_PARENT_UUID, parent);
	pb_str(&pr->tmp, F_TD_NAME, name);
	if (counter) {
		pb_reset(&pr->sub);
		pb_msg(&pr->tmp, F_TD_COUNTER, &pr->sub);
	}
	pb_reset(&pr->pkt);
	pb_msg(&pr->pkt, F_PKT_TRACK_DESC, &pr->tmp);
	pf_put_pkt_buf(e, &pr->pkt);
}

void pf_ensure_process(struct exporter *e, const struct bp_session *s, uint32_t pid)
{
	struct perfetto_priv *pr = e->priv;
	uint64_t key = (uint64_t)pid + 1;

	if (pf_set_has(&pr->procs, key))
		return;
	pf_set_add(&pr->procs, key);
	pf_write_process_desc(e, s, pid);
}

/* Starts a new sequence on the track: clears its state, sets its defaults and clock. */
void pf_lane_init(struct exporter *e, const struct bp_session *s, struct pf_track *t,
		      struct pf_lane *l)
{
	struct perfetto_priv *pr = e->priv;

	pf_write_trace_clock(e, s);
	memset(l, 0, sizeof(*l));
	l->seq = ++pr->next_seq;
	pb_reset(&pr->pkt);
	pb_uint(&pr->pkt, F_PKT_SEQ_ID, l->seq);
	pb_uint(&pr->pkt, F_PKT_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	/* defaults: every event of the lane is on the track, timed by the lane's clock */
	pb_reset(&pr->sub);
	pb_uint(&pr->sub, F_TED_TRACK_UUID, t->uuid);
	pb_reset(&pr->tmp);
	pb_uint(&pr->tmp, F_DEF_CLOCK_ID, CLOCK_LANE);
	pb_msg(&pr->tmp, F_DEF_TRACK_EVENT, &pr->sub);
	pb_msg(&pr->pkt, F_PKT_DEFAULTS, &pr->tmp);
	/* the lane's clock reads 0 at the session's t0 and counts ns in deltas */
	pb_reset(&pr->tmp);
	pb_reset(&pr->sub);
	pb_uint(&pr->sub, F_CLK_ID, CLOCK_LANE);
	pb_tag(&pr->sub, F_CLK_TS, PB_VARINT);
	pb_varint(&pr->sub, 0);
	pb_uint(&pr->sub, F_CLK_INCREMENTAL, 1);
	pb_msg(&pr->tmp, F_CS_CLOCKS, &pr->sub);
	pb_reset(&pr->sub);
	pb_uint(&pr->sub, F_CLK_ID, CLOCK_MONOTONIC_ID);
	pb_tag(&pr->sub, F_CLK_TS, PB_VARINT);
	pb_varint(&pr->sub, s->t0);
	pb_msg(&pr->tmp, F_CS_CLOCKS, &pr->sub);
	pb_msg(&pr->pkt, F_PKT_CLOCK_SNAPSHOT, &pr->tmp);
	pf_put_pkt_buf(e, &pr->pkt);
}

void pf_write_loss(struct exporter *e, const struct bp_session *s, const struct bp_loss *lo)
{
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t = pf_thread_track(e, s, 0, UINT32_MAX);
	struct pf_lane *l = pf_lane_for(e, s, t, -1, lo->ts);
	char name[64];

	pf_ev_begin(pr);
	pf_te_type(pr, TYPE_INSTANT);
	pf_te_cat(pr, l, CAT_LOSS);
	snprintf(name, sizeof(name), "lost %" PRIu64 " records", lo->count);
	pb_str(&pr->te, F_TE_NAME, name);
	pf_an_int(pr, l, AN_CPU, lo->cpu);
	pf_an_int(pr, l, AN_COUNT, (int64_t)lo->count);
	pf_ev_write(e, l, lo->ts);
}

/*
 * A sampled stack's asyncio task (its innermost "[task NAME]" marker) as the
 * annotation `task`, the tasks awaiting it as `awaited_by` ("A <- B": A
 * awaits it, B awaits A).
 */
static void sample_task(struct perfetto_priv *pr, struct pf_lane *l, const struct bp_session *s,
			const uint32_t *funcs, size_t n)
{
	char task[128] = "", by[512] = "";
	const char *name;
	size_t i, len, o = 0;
	bool aw;

	for (i = n; i-- > 0;) {
		len = session__task_marker(s, funcs[i], &name, &aw);
		if (!len || aw != !!task[0])
			continue;
		if (!aw)
			snprintf(task, sizeof(task), "%.*s", (int)len, name);
		else if (o < sizeof(by))
			o += snprintf(by + o, sizeof(by) - o, "%s%.*s", o ? " <- " : "", (int)len, name);
	}
	if (task[0])
		pf_an_str(pr, l, AN_TASK, task);
	if (by[0])
		pf_an_str(pr, l, AN_AWAITED_BY, by);
}

void pf_write_sample(struct exporter *e, const struct bp_session *s, const struct bp_sample *sm)
{
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t = pf_thread_track(e, s, sm->pid, sm->tid);
	bool off = sm->flags & BP_SAMPLE_F_OFFCPU;
	struct pf_lane *l = pf_lane_for(e, s, t, -1, sm->ts);
	uint32_t funcs[256];
	size_t n = session__path_funcs(s, sm->path, funcs, 256), i;
	char *stack = NULL;
	size_t slen = 0;
	FILE *m;

	pf_ev_begin(pr);
	pf_te_type(pr, off ? TYPE_SLICE_BEGIN : TYPE_INSTANT);
	pf_te_cat(pr, l, off ? CAT_OFFCPU : CAT_SAMPLE);
	/* off-CPU: named after where the program blocked, its innermost user frame */
	i = n;
	if (off)
		while (i > 1 && funcs[i - 1] < s->nfuncs &&
		       (s->funcs[funcs[i - 1]].flags & BP_FUNC_KERNEL))
			i--;
	if (!i) {
		pb_str(&pr->te, F_TE_NAME, off ? "[off-cpu] [no stack]" : "[no stack]");
	} else if (off) {
		char name[600];
		uint64_t iid = OFFCPU_IID + funcs[i - 1];

		if (!pf_set_has(&l->interned, KEY_NAME | iid)) {
			snprintf(name, sizeof(name), "[off-cpu] %s", session__func_name(s, funcs[i - 1]));
			pf_need(pr, l, KEY_NAME, iid, name);
		}
		pb_uint(&pr->te, F_TE_NAME_IID, iid);
	} else {
		pf_te_func_name(pr, l, s, funcs[i - 1]);
	}
	pf_an_int(pr, l, AN_WEIGHT, (int64_t)sm->weight);
	sample_task(pr, l, s, funcs, n);
	if (sm->flags & BP_SAMPLE_F_TRUNCATED)
		pf_an_bool(pr, l, AN_TRUNCATED);
	/* the stack, outermost first, as folded-stack text */
	m = open_memstream(&stack, &slen);
	if (m) {
		for (i = 0; i < n; i++)
			fprintf(m, "%s%s", i ? ";" : "", session__func_name(s, funcs[i]));
		if (fclose(m) == 0)
			pf_an_str(pr, l, AN_STACK, stack);
		free(stack);
	}
	pf_ev_write(e, l, sm->ts);
	if (off)
		pf_write_end(e, l, sm->ts + sm->weight);
}

/* One end of an edge: an instant named by its kind, on the thread's lane at ts; its event open. */
static struct pf_lane *edge_end(struct exporter *e, const struct bp_session *s,
				const struct bp_edge *ed, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct perfetto_priv *pr = e->priv;
	struct pf_lane *l = pf_lane_for(e, s, pf_thread_track(e, s, pid, tid), -1, ts);

	pf_ev_begin(pr);
	pf_te_type(pr, TYPE_INSTANT);
	pf_te_cat(pr, l, CAT_EDGE);
	pb_str(&pr->te, F_TE_NAME, session__edge_kind(ed->kind));
	return l;
}

/*
 * An edge: an instant at the cause on the source thread starts flow `id`,
 * one where the effect begins on the destination thread ends it; Perfetto
 * draws the arrow between the two (each inside its enclosing call).
 */
void pf_write_edge(struct exporter *e, const struct bp_session *s, const struct bp_edge *ed)
{
	struct perfetto_priv *pr = e->priv;
	uint64_t id = ++pr->nflows;
	struct pf_lane *l;

	l = edge_end(e, s, ed, ed->src_pid, ed->src_tid, ed->src_ts);
	pb_fixed64(&pr->te, F_TE_FLOW_IDS, id);
	pf_an_str(pr, l, AN_FROM, session__func_name(s, ed->src_func));
	pf_an_int(pr, l, AN_FROM_ID, (int64_t)ed->src_call);
	pf_an_str(pr, l, AN_TO, session__func_name(s, ed->dst_func));
	pf_an_int(pr, l, AN_TO_ID, (int64_t)ed->dst_call);
	if (ed->kind == BP_EDGE_DATA)
		pf_an_ptr(pr, l, AN_VALUE, ed->value);
	if (ed->kind == BP_EDGE_WAKEUP)
		pf_an_int(pr, l, AN_LATENCY, ed->dst_ts > ed->src_ts ? (int64_t)(ed->dst_ts - ed->src_ts) : 0);
	pf_ev_write(e, l, ed->src_ts);

	l = edge_end(e, s, ed, ed->dst_pid, ed->dst_tid, ed->dst_ts);
	pb_fixed64(&pr->te, F_TE_TERM_FLOW_IDS, id);
	pf_ev_write(e, l, ed->dst_ts);
}

/* The counter track of a BPFPROF_EVENT name in a process, described on first use. */
static uint64_t counter_track(struct exporter *e, const struct bp_session *s, uint32_t pid,
			      const char *name)
{
	struct perfetto_priv *pr = e->priv;
	size_t i;

	for (i = 0; i < pr->ncounters; i++)
		if (pr->counters[i].pid == pid && strcmp(pr->counters[i].name, name) == 0)
			return UUID_COUNTER(i);
	pr->counters = xrealloc(pr->counters, (pr->ncounters + 1) * sizeof(*pr->counters));
	pr->counters[i].pid = pid;
	snprintf(pr->counters[i].name, sizeof(pr->counters[i].name), "%.63s", name);
	pr->ncounters++;
	pf_ensure_process(e, s, pid);
	pf_write_named_desc(e, UUID_COUNTER(i), UUID_PROCESS(pid), name, true);
	return UUID_COUNTER(i);
}

void pf_write_annot(struct exporter *e, const struct bp_session *s, const struct bp_annot *a)
{
	static const uint32_t cat[] = { CAT_USDT, CAT_MARK, CAT_EVENT, CAT_CAPTURE, CAT_CAPTURE,
					CAT_USDT, CAT_GOVERNOR };
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t = pf_thread_track(e, s, a->pid, a->tid);
	struct pf_lane *l = pf_lane_for(e, s, t, -1, a->ts);
	char name[sizeof(a->name) + 1];
	uint32_t i;

	memcpy(name, a->name, sizeof(a->name));
	name[sizeof(a->name)] = '\0';
	pf_ev_begin(pr);
	pf_te_type(pr, TYPE_INSTANT);
	pf_te_cat(pr, l, a->kind < 7 ? cat[a->kind] : CAT_USDT);
	pb_str(&pr->te, F_TE_NAME, name);
	if (a->kind == BP_ANNOT_EVENT)
		pf_an_int(pr, l, AN_VALUE, a->value);
	if (a->kind == BP_ANNOT_PROBE) {
		uint32_t nstr = 0;

		for (i = 0; i < a->nargs && i < 6; i++) {
			if ((a->str_args & (1u << i)) && nstr < 2)
				pf_an_str(pr, l, AN_ARG0 + i, a->strs[nstr++]);
			else
				pf_an_int(pr, l, AN_ARG0 + i, a->args[i]);
		}
	}
	if (a->kind == BP_ANNOT_DROP) {
		pf_an_int(pr, l, AN_RATE, a->args[0]);
		pf_an_int(pr, l, AN_COUNT, a->args[1]);
		pf_an_int(pr, l, AN_OVERHEAD, a->args[2]);
	}
	pf_an_int(pr, l, AN_CALL_ID, (int64_t)a->call);
	pf_ev_write(e, l, a->ts);

	if (a->kind == BP_ANNOT_EVENT) {
		uint64_t uuid = counter_track(e, s, a->pid, name);

		pf_ev_begin(pr);
		pf_te_type(pr, TYPE_COUNTER);
		pb_uint(&pr->te, F_TE_TRACK_UUID, uuid);
		pb_tag(&pr->te, F_TE_COUNTER_VALUE, PB_VARINT);
		pb_varint(&pr->te, (uint64_t)a->value);
		pf_ev_write(e, l, a->ts);
	}
}

/*
 * The trace's clock is CLOCK_MONOTONIC, what the events are taken in;
 * REALTIME beside it places the recording in wall-clock time.  Written
 * before the first lane, not at begin(): a live recording knows t0 only
 * once it has started.
 */
void pf_write_trace_clock(struct exporter *e, const struct bp_session *s)
{
	struct perfetto_priv *pr = e->priv;

	if (pr->clock_written)
		return;
	pr->clock_written = true;
	pb_reset(&pr->tmp);
	pb_reset(&pr->sub);
	pb_uint(&pr->sub, F_CLK_ID, CLOCK_MONOTONIC_ID);
	pb_tag(&pr->sub, F_CLK_TS, PB_VARINT);
	pb_varint(&pr->sub, s->t0);
	pb_msg(&pr->tmp, F_CS_CLOCKS, &pr->sub);
	pb_reset(&pr->sub);
	pb_uint(&pr->sub, F_CLK_ID, CLOCK_REALTIME_ID);
	pb_tag(&pr->sub, F_CLK_TS, PB_VARINT);
	pb_varint(&pr->sub, s->t0 + (uint64_t)s->realtime_offset);	/* wraps, never UB */
	pb_msg(&pr->tmp, F_CS_CLOCKS, &pr->sub);
	pb_uint(&pr->tmp, F_CS_PRIMARY, CLOCK_MONOTONIC_ID);
	pb_reset(&pr->pkt);
	pb_msg(&pr->pkt, F_PKT_CLOCK_SNAPSHOT, &pr->tmp);
	pf_put_pkt_buf(e, &pr->pkt);
}
