// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perfetto's native trace format: a protobuf `Trace` of `TracePacket`s
 * carrying TrackEvents (protos/perfetto/trace/ in Perfetto's repository; the
 * field numbers used are the constants below, and tests/perfetto_subset.proto
 * declares the same subset for `protoc --decode`).  Streamed like the JSON
 * writer: each call is written when it ends, memory is bounded by threads,
 * call depth and the names in use, never by the number of calls.
 *
 * The ordering problem.  Calls arrive when they end, children before their
 * parents, but a TrackEvent slice is a BEGIN and an END event on the thread's
 * track, and the incremental clock that keeps packets small (each timestamp
 * a delta from the previous packet of its sequence) needs the timestamps of
 * one packet sequence to never go back.  Perfetto's trace processor sorts
 * every event of a file by timestamp before it builds slices (ties keep file
 * order), so the events of one track may come from several sequences.  So a
 * thread has several sequences ("lanes"): a call goes to the lane of its
 * depth when that lane's last timestamp is not after the call's begin (calls
 * at one depth of one thread never overlap, so this is the rule), else to
 * the first lane that fits, else to a new one.  Its BEGIN and END are written
 * together.  Once sorted, the BEGINs and ENDs of a thread nest as the calls
 * did.
 *
 * Ties.  Two real entries never share a nanosecond, but a call whose entry
 * was not recorded (BP_CALL_NO_ENTRY, attach) is given its caller's begin, or
 * the start of the recording, and arrives before the call that encloses it:
 * in file order its BEGIN would come first and Perfetto would nest the two
 * the wrong way round.  Those calls are held back (a handful per thread: the
 * frames that were live when the recording started) and written right after
 * their caller's BEGIN, or at the end for those without a traced caller,
 * outermost first.
 *
 * What maps to what: a call or BPFPROF_SPAN is a slice on its thread's track
 * (category "call" / "span"); --args registers, the return value,
 * BPFPROF_INFO and the unfinished / began_before_recording / entry_lost / unwound /
 * end_inferred flags are debug annotations of its BEGIN; an on-CPU sample is
 * an instant named after its leaf function with the stack as an annotation;
 * an off-CPU interval is a slice "[off-cpu] where"; a fork / wakeup / data
 * edge is a flow between two instants (flow_ids, terminating_flow_ids); a
 * mark, event, capture start/stop or USDT probe is an instant; a
 * BPFPROF_EVENT value also feeds a counter track of its process; lost records
 * are instants on a global "lost records" track.  Track descriptors name
 * every process and thread when first used and again at the end, when the
 * names are final.
 */
#include "internal.h"


static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

bool pf_set_has(const struct pf_set *s, uint64_t key)
{
	size_t i;

	if (!s->cap)
		return false;
	for (i = hash64(key) & (s->cap - 1); s->keys[i]; i = (i + 1) & (s->cap - 1))
		if (s->keys[i] == key)
			return true;
	return false;
}

void pf_set_add(struct pf_set *s, uint64_t key)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		struct pf_set n = { .cap = s->cap ? s->cap * 2 : 16 };

		n.keys = xcalloc(n.cap, sizeof(*n.keys));
		for (i = 0; i < s->cap; i++)
			if (s->keys[i])
				pf_set_add(&n, s->keys[i]);
		free(s->keys);
		*s = n;
	}
	for (i = hash64(key) & (s->cap - 1); s->keys[i]; i = (i + 1) & (s->cap - 1))
		if (s->keys[i] == key)
			return;
	s->keys[i] = key;
	s->n++;
}

static void out_flush(struct exporter *e)
{
	struct perfetto_priv *pr = e->priv;

	if (pr->olen)
		fwrite_unlocked(pr->out, 1, pr->olen, e->out);
	pr->olen = 0;
}

/* Room for n bytes at the end of the output buffer (n <= OUT_SIZE). */
static uint8_t *out_room(struct exporter *e, size_t n)
{
	struct perfetto_priv *pr = e->priv;

	if (pr->olen + n > OUT_SIZE)
		out_flush(e);
	return pr->out + pr->olen;
}

/* Writes one TracePacket (field 1 of Trace) whose payload is p[0..n). */
static void put_packet(struct exporter *e, const uint8_t *p, size_t n)
{
	struct perfetto_priv *pr = e->priv;
	uint8_t hdr[11], *h = hdr;

	*h++ = F_TRACE_PACKET << 3 | PB_LEN;
	h = pb_put_varint(h, n);
	if (n + (h - hdr) > OUT_SIZE / 2) {	/* a big one (a deep stack): straight out */
		out_flush(e);
		fwrite_unlocked(hdr, 1, h - hdr, e->out);
		fwrite_unlocked(p, 1, n, e->out);
		return;
	}
	memcpy(out_room(e, n + (h - hdr)), hdr, h - hdr);
	pr->olen += h - hdr;
	memcpy(pr->out + pr->olen, p, n);
	pr->olen += n;
}

void pf_put_pkt_buf(struct exporter *e, const struct pb_buf *b)
{
	put_packet(e, b->data, b->len);
}

/* {iid, name}: EventName, EventCategory and DebugAnnotationName alike. */
static void intern_entry(struct perfetto_priv *pr, uint32_t field, uint64_t iid, const char *name)
{
	pb_reset(&pr->tmp);
	pb_uint(&pr->tmp, F_IID, iid);
	pb_str(&pr->tmp, F_IID_NAME, name);
	pb_msg(&pr->in, field, &pr->tmp);
}

static struct pf_track *find_track(struct perfetto_priv *pr, uint64_t uuid)
{
	size_t i;

	if (!pr->track_hash_cap)
		return NULL;
	for (i = hash64(uuid) & (pr->track_hash_cap - 1); pr->track_hash[i];
	     i = (i + 1) & (pr->track_hash_cap - 1))
		if (pr->tracks[pr->track_hash[i] - 1].uuid == uuid)
			return &pr->tracks[pr->track_hash[i] - 1];
	return NULL;
}

static void hash_track(struct perfetto_priv *pr, size_t idx)
{
	size_t i;

	for (i = hash64(pr->tracks[idx].uuid) & (pr->track_hash_cap - 1); pr->track_hash[i];
	     i = (i + 1) & (pr->track_hash_cap - 1))
		;
	pr->track_hash[i] = idx + 1;
}

/* The track of uuid, made (*added) if new. */
struct pf_track *pf_find_or_add_track(struct exporter *e, uint64_t uuid, uint32_t pid,
				      uint32_t tid, bool *added)
{
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t = find_track(pr, uuid);
	size_t i;

	*added = !t;
	if (t)
		return t;
	if (pr->ntracks == pr->tracks_cap) {
		pr->tracks_cap = pr->tracks_cap ? pr->tracks_cap * 2 : 64;
		pr->tracks = xrealloc(pr->tracks, pr->tracks_cap * sizeof(*pr->tracks));
		pr->last_track = NULL;	/* moved */
	}
	if ((pr->ntracks + 1) * 2 > pr->track_hash_cap) {
		free(pr->track_hash);
		pr->track_hash_cap = pr->track_hash_cap ? pr->track_hash_cap * 2 : 128;
		pr->track_hash = xcalloc(pr->track_hash_cap, sizeof(*pr->track_hash));
		for (i = 0; i < pr->ntracks; i++)
			hash_track(pr, i);
	}
	t = &pr->tracks[pr->ntracks];
	memset(t, 0, sizeof(*t));
	t->uuid = uuid;
	t->pid = pid;
	t->tid = tid;
	hash_track(pr, pr->ntracks++);
	return t;
}

/* The thread's track, its descriptors written on first use. */
struct pf_track *pf_thread_track(struct exporter *e, const struct bp_session *s, uint32_t pid,
				     uint32_t tid)
{
	uint64_t uuid = tid == UINT32_MAX ? UUID_LOSS : UUID_THREAD(pid, tid);
	bool added;
	struct pf_track *t = pf_find_or_add_track(e, uuid, pid, tid, &added);

	if (!added)
		return t;
	if (tid == UINT32_MAX) {
		pf_write_named_desc(e, UUID_LOSS, 0, "bpfprof: lost records", false);
	} else {
		pf_ensure_process(e, s, pid);
		pf_write_thread_desc(e, s, pid, tid);
	}
	return t;
}

void pf_write_trace_clock(struct exporter *e, const struct bp_session *s);

/*
 * A lane of the track whose clock has not passed `ts`.  Calls: lane `want`
 * (the call's depth) if it fits, else the first that does, else a new one
 * (lanes up to `want` are made, so depth d keeps lane d).  Other events
 * (samples, marks, flows) have lanes of their own, so they never push a
 * call off its depth's lane: want = -1.
 */
struct pf_lane *pf_lane_for(struct exporter *e, const struct bp_session *s, struct pf_track *t,
				long want, uint64_t ts)
{
	struct pf_lane **lanes = want < 0 ? &t->aux : &t->lanes;
	size_t *n = want < 0 ? &t->naux : &t->nlanes, i, to;

	if (want >= 0 && (size_t)want < *n && (*lanes)[want].last <= ts)
		return &(*lanes)[want];
	for (i = 0; i < *n; i++)
		if ((*lanes)[i].last <= ts)
			return &(*lanes)[i];
	/* every existing lane is past ts, so lane `want` is a new one if it exists at all */
	to = want >= 0 && (size_t)want >= *n ? (size_t)want + 1 : *n + 1;
	*lanes = xrealloc(*lanes, to * sizeof(**lanes));
	for (i = *n; i < to; i++)
		pf_lane_init(e, s, t, &(*lanes)[i]);
	*n = to;
	return &(*lanes)[to - 1];
}

/* Makes sure the lane knows an interned entry, adding it to pr->in if not. */
void pf_need(struct perfetto_priv *pr, struct pf_lane *l, uint64_t kind, uint64_t iid,
		 const char *name)
{
	uint32_t field = kind == KEY_NAME ? F_IN_EVENT_NAMES :
			 kind == KEY_CAT ? F_IN_CATEGORIES : F_IN_ANNOT_NAMES;

	if (pf_set_has(&l->interned, kind | iid))
		return;
	pf_set_add(&l->interned, kind | iid);
	if (kind == KEY_CAT)
		l->cats |= 1u << iid;
	if (kind == KEY_NAME && iid < NAME_BITS) {
		if (iid / 64 >= l->nnames) {
			size_t n = iid / 64 + 1;

			l->names = xrealloc(l->names, n * sizeof(*l->names));
			memset(l->names + l->nnames, 0, (n - l->nnames) * sizeof(*l->names));
			l->nnames = n;
		}
		l->names[iid / 64] |= 1ULL << (iid % 64);
	}
	intern_entry(pr, field, iid, name);
}


/* Starts an event: pr->te and pr->in empty. */
void pf_ev_begin(struct perfetto_priv *pr)
{
	pb_reset(&pr->te);
	pb_reset(&pr->in);
}

/*
 * Finishes the event built in pr->te (type, name, annotations) as a packet
 * of lane l at time ts, with the interned entries it needs.
 */
void pf_ev_write(struct exporter *e, struct pf_lane *l, uint64_t ts)
{
	struct perfetto_priv *pr = e->priv;

	pb_reset(&pr->pkt);
	/* always written: a packet without a timestamp would take the latest one */
	pb_tag(&pr->pkt, F_PKT_TIMESTAMP, PB_VARINT);
	pb_varint(&pr->pkt, ts - l->last);
	l->last = ts;
	pb_uint(&pr->pkt, F_PKT_SEQ_ID, l->seq);
	if (pr->in.len)
		pb_msg(&pr->pkt, F_PKT_INTERNED, &pr->in);
	pb_msg(&pr->pkt, F_PKT_TRACK_EVENT, &pr->te);
	pf_put_pkt_buf(e, &pr->pkt);
}

void pf_te_type(struct perfetto_priv *pr, int type)
{
	pb_uint(&pr->te, F_TE_TYPE, type);
}

void pf_te_cat(struct perfetto_priv *pr, struct pf_lane *l, uint32_t cat)
{
	pf_need(pr, l, KEY_CAT, cat, cat_names[cat]);
	pb_uint(&pr->te, F_TE_CATEGORY_IIDS, cat);
}

void pf_te_func_name(struct perfetto_priv *pr, struct pf_lane *l, const struct bp_session *s,
			 uint32_t func)
{
	pf_need(pr, l, KEY_NAME, (uint64_t)func + 1, session__func_name(s, func));
	pb_uint(&pr->te, F_TE_NAME_IID, (uint64_t)func + 1);
}

/* An END on lane l at ts, written in place (the packet is < 128 bytes: a 1-byte length). */
void pf_write_end(struct exporter *e, struct pf_lane *l, uint64_t ts)
{
	struct perfetto_priv *pr = e->priv;
	uint8_t *start = out_room(e, 64), *p = start + 2;

	*p++ = F_PKT_TIMESTAMP << 3 | PB_VARINT;
	p = pb_put_varint(p, ts - l->last);
	l->last = ts;
	*p++ = F_PKT_SEQ_ID << 3 | PB_VARINT;
	p = pb_put_varint(p, l->seq);
	*p++ = F_PKT_TRACK_EVENT << 3 | PB_LEN;
	*p++ = 2;
	*p++ = F_TE_TYPE << 3 | PB_VARINT;
	*p++ = TYPE_SLICE_END;
	start[0] = F_TRACE_PACKET << 3 | PB_LEN;
	start[1] = (uint8_t)(p - start - 2);
	pr->olen += p - start;
}

static bool is_span(const struct bp_session *s, uint32_t func)
{
	return func < s->nfuncs && (s->funcs[func].flags & BP_FUNC_SPAN);
}

uint64_t pf_info_iid(struct perfetto_priv *pr, const char *key)
{
	size_t i;

	for (i = 0; i < pr->ninfo_keys; i++)
		if (strcmp(pr->info_keys[i], key) == 0)
			return NANNOTS + i;
	pr->info_keys = xrealloc(pr->info_keys, (pr->ninfo_keys + 1) * sizeof(*pr->info_keys));
	pr->info_keys[pr->ninfo_keys] = xstrdup(key);
	return NANNOTS + pr->ninfo_keys++;
}

/* The BEGIN of a call with annotations (flags, args, infos): the general path. */
static void write_begin_slow(struct exporter *e, const struct bp_session *s, struct pf_lane *l,
			     const struct bp_call *c)
{
	struct perfetto_priv *pr = e->priv;
	uint32_t i, j;

	pf_ev_begin(pr);
	pf_te_type(pr, TYPE_SLICE_BEGIN);
	pf_te_cat(pr, l, is_span(s, c->func) ? CAT_SPAN : CAT_CALL);
	pf_te_func_name(pr, l, s, c->func);
	if (c->flags & BP_CALL_UNFINISHED)
		pf_an_bool(pr, l, AN_UNFINISHED);
	if (c->flags & BP_CALL_NO_ENTRY)
		pf_an_bool(pr, l, AN_NO_ENTRY);
	if (c->flags & BP_CALL_ENTRY_LOST)
		pf_an_bool(pr, l, AN_ENTRY_LOST);
	if (c->flags & BP_CALL_UNWOUND)
		pf_an_bool(pr, l, AN_UNWOUND);
	if (c->flags & (BP_CALL_NO_RETPROBE | BP_CALL_DROPPED))
		pf_an_bool(pr, l, AN_END_INFERRED);
	if (c->flags & BP_CALL_SUSPENDED)
		pf_an_bool(pr, l, AN_SUSPENDED);
	if (c->flags & BP_CALL_RESUMED)
		pf_an_bool(pr, l, AN_RESUMED);
	if (c->flags & BP_CALL_RAISED)
		pf_an_bool(pr, l, AN_RAISED);
	if (c->flags & (BP_CALL_HAS_ARGS | BP_CALL_HAS_RET))
		pf_write_args(pr, l, s, c);
	/* BPFPROF_INFO: a repeated key keeps its last value, as in the JSON */
	for (i = 0; i < c->ninfos; i++) {
		const struct bp_info *in = &c->infos[i];

		for (j = i + 1; j < c->ninfos && strcmp(c->infos[j].key, in->key); j++)
			;
		if (j < c->ninfos)
			continue;
		if (in->is_str)
			pf_an_str(pr, l, pf_info_iid(pr, in->key), in->str);
		else
			pf_an_int(pr, l, pf_info_iid(pr, in->key), in->value);
	}
	pf_ev_write(e, l, c->begin);
}

/*
 * A plain call's BEGIN, the hot path (millions of calls): once the lane
 * knows the name and category, the packet is written in place by hand.
 */
static void write_begin(struct exporter *e, const struct bp_session *s, struct pf_lane *l,
			const struct bp_call *c)
{
	struct perfetto_priv *pr = e->priv;
	uint32_t cat = is_span(s, c->func) ? CAT_SPAN : CAT_CALL;
	uint64_t iid = (uint64_t)c->func + 1;
	uint8_t *start, *p, *te;

	if ((c->flags & ~BP_CALL_HAS_INFOS) || c->ninfos || !(l->cats & 1u << cat) ||
	    iid / 64 >= l->nnames || !(l->names[iid / 64] & 1ULL << (iid % 64))) {
		write_begin_slow(e, s, l, c);
		return;
	}
	/* < 128 bytes: 1-byte lengths for the packet and its TrackEvent */
	start = out_room(e, 64);
	p = start + 2;
	*p++ = F_PKT_TIMESTAMP << 3 | PB_VARINT;
	p = pb_put_varint(p, c->begin - l->last);
	l->last = c->begin;
	*p++ = F_PKT_SEQ_ID << 3 | PB_VARINT;
	p = pb_put_varint(p, l->seq);
	*p++ = F_PKT_TRACK_EVENT << 3 | PB_LEN;
	te = p++;
	*p++ = F_TE_CATEGORY_IIDS << 3 | PB_VARINT;
	*p++ = (uint8_t)cat;	/* < 128 */
	*p++ = F_TE_TYPE << 3 | PB_VARINT;
	*p++ = TYPE_SLICE_BEGIN;
	*p++ = F_TE_NAME_IID << 3 | PB_VARINT;
	p = pb_put_varint(p, iid);
	*te = (uint8_t)(p - te - 1);
	start[0] = F_TRACE_PACKET << 3 | PB_LEN;
	start[1] = (uint8_t)(p - start - 2);
	pr->olen += p - start;
}

static void hold(struct pf_track *t, const struct bp_call *c)
{
	struct pf_held *h;

	if (t->nheld == t->held_cap) {
		t->held_cap = t->held_cap ? t->held_cap * 2 : 8;
		t->held = xrealloc(t->held, t->held_cap * sizeof(*t->held));
	}
	h = &t->held[t->nheld++];
	h->c = *c;
	h->infos = NULL;
	if (c->ninfos) {
		h->infos = xmalloc(c->ninfos * sizeof(*h->infos));
		memcpy(h->infos, c->infos, c->ninfos * sizeof(*h->infos));
	}
	h->c.infos = h->infos;
}

/* Outermost first: earlier begin, then later end (the encloser), then later arrival. */
static int held_cmp(const void *a, const void *b)
{
	const struct pf_held *x = a, *y = b;

	if (x->c.begin != y->c.begin)
		return x->c.begin < y->c.begin ? -1 : 1;
	if (x->c.end != y->c.end)
		return x->c.end > y->c.end ? -1 : 1;
	return x->c.id > y->c.id ? -1 : x->c.id < y->c.id;
}

static void write_call_tree(struct exporter *e, const struct bp_session *s, struct pf_track *t,
			    const struct bp_call *c);

/*
 * Writes the held calls whose caller is `parent` (0: every held call),
 * outermost first.  They are moved out of the thread's list first, since
 * writing them may release their own held callees.
 */
static void release_held(struct exporter *e, const struct bp_session *s, struct pf_track *t,
			 uint64_t parent)
{
	struct pf_held *out = NULL;
	size_t n = 0, i, k = 0;

	for (i = 0; i < t->nheld; i++)
		n += !parent || t->held[i].c.parent_id == parent;
	if (!n)
		return;
	out = xmalloc(n * sizeof(*out));
	for (i = 0, n = 0; i < t->nheld; i++) {
		if (!parent || t->held[i].c.parent_id == parent)
			out[n++] = t->held[i];
		else
			t->held[k++] = t->held[i];
	}
	t->nheld = k;
	qsort(out, n, sizeof(*out), held_cmp);
	for (i = 0; i < n; i++) {
		write_call_tree(e, s, t, &out[i].c);
		free(out[i].infos);
	}
	free(out);
}

/* BEGIN, the held calls it encloses, END. */
static void write_call_tree(struct exporter *e, const struct bp_session *s, struct pf_track *t,
			    const struct bp_call *c)
{
	uint64_t end = c->end > c->begin ? c->end : c->begin;
	struct pf_lane *l = pf_lane_for(e, s, t, c->depth, c->begin);
	size_t li;

	write_begin(e, s, l, c);
	if (t->nheld) {
		/* writing them may add lanes and move the array: keep the index */
		li = l - t->lanes;
		release_held(e, s, t, c->id);
		l = &t->lanes[li];
	}
	/* the held calls may have used this lane: its clock is still <= end */
	pf_write_end(e, l, end);
}

static int write_call(struct exporter *e, const struct bp_session *s, const struct bp_call *c)
{
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t = pr->last_track;

	if (!t || t->tid != c->tid || t->pid != c->pid)
		t = pr->last_track = pf_thread_track(e, s, c->pid, c->tid);

	if (c->flags & BP_CALL_NO_ENTRY) {
		hold(t, c);
		if (t->nheld > MAX_HELD)
			release_held(e, s, t, 0);
		return 0;
	}
	write_call_tree(e, s, t, c);
	return 0;
}

static int perfetto_begin(struct exporter *e, const struct bp_session *s)
{
	struct perfetto_priv *pr = e->priv;

	(void)s;
	pr->out = xmalloc(OUT_SIZE);
	return 0;
}

static int perfetto_event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	switch (ev->kind) {
	case BP_EV_CALL: {
		int err = write_call(e, s, &ev->call);

		return err ? err : pf_coro_call(e, s, &ev->call);
	}
	case BP_EV_LOSS:
		pf_write_loss(e, s, &ev->loss);
		break;
	case BP_EV_SAMPLE:
		pf_write_sample(e, s, &ev->sample);
		break;
	case BP_EV_EDGE:
		pf_coro_edge(e, &ev->edge);
		pf_write_edge(e, s, &ev->edge);
		break;
	case BP_EV_ANNOT:
		if (ev->annot.kind == BP_ANNOT_TASK)
			pf_coro_annot(e, &ev->annot);	/* a track, not an instant */
		else
			pf_write_annot(e, s, &ev->annot);
		break;
	default:
		break;
	}
	return 0;
}

static int perfetto_end(struct exporter *e, const struct bp_session *s)
{
	struct perfetto_priv *pr = e->priv;
	size_t i;

	pf_write_trace_clock(e, s);
	pf_coro_end(e, s);
	/* calls without a traced caller that were held back: outermost first */
	for (i = 0; i < pr->ntracks; i++)
		release_held(e, s, &pr->tracks[i], 0);
	/* descriptors again, with the names as they are now (exec renames) */
	for (i = 0; i < s->nprocs; i++)
		if (pf_set_has(&pr->procs, (uint64_t)s->procs[i].pid + 1))
			pf_write_process_desc(e, s, s->procs[i].pid);
	for (i = 0; i < pr->ntracks; i++)
		if (pr->tracks[i].tid != UINT32_MAX && !pr->tracks[i].task)
			pf_write_thread_desc(e, s, pr->tracks[i].pid, pr->tracks[i].tid);
	out_flush(e);
	return 0;
}

static void perfetto_free(struct exporter *e)
{
	struct perfetto_priv *pr = e->priv;
	size_t i, j;

	if (!pr)
		return;
	for (i = 0; i < pr->ntracks; i++) {
		struct pf_track *t = &pr->tracks[i];

		for (j = 0; j < t->nlanes; j++) {
			free(t->lanes[j].interned.keys);
			free(t->lanes[j].names);
		}
		for (j = 0; j < t->naux; j++) {
			free(t->aux[j].interned.keys);
			free(t->aux[j].names);
		}
		free(t->aux);
		for (j = 0; j < t->nheld; j++)
			free(t->held[j].infos);
		free(t->lanes);
		free(t->held);
	}
	free(pr->tracks);
	free(pr->track_hash);
	free(pr->out);
	free(pr->procs.keys);
	free(pr->counters);
	coro__free(pr->coro);
	for (i = 0; i < pr->ninfo_keys; i++)
		free(pr->info_keys[i]);
	free(pr->info_keys);
	pb_free(&pr->pkt);
	pb_free(&pr->te);
	pb_free(&pr->in);
	pb_free(&pr->an);
	pb_free(&pr->sub);
	pb_free(&pr->tmp);
}

const struct exporter_ops perfetto_exporter = {
	.name = "perfetto",
	.suffix = ".pftrace",
	.suffix2 = ".perfetto-trace",
	.help = "Perfetto protobuf trace (TrackEvent): for millions of calls",
	.priv_size = sizeof(struct perfetto_priv),
	.begin = perfetto_begin,
	.event = perfetto_event,
	.end = perfetto_end,
	.free = perfetto_free,
};
