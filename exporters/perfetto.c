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
 * BPFPROF_INFO and the unfinished / began_before_recording / unwound /
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
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "exporter.h"
#include "protobuf.h"

/* Trace */
#define F_TRACE_PACKET		1
/* TracePacket */
#define F_PKT_CLOCK_SNAPSHOT	6
#define F_PKT_TIMESTAMP		8
#define F_PKT_SEQ_ID		10	/* trusted_packet_sequence_id */
#define F_PKT_TRACK_EVENT	11
#define F_PKT_INTERNED		12
#define F_PKT_SEQ_FLAGS		13
#define F_PKT_DEFAULTS		59	/* trace_packet_defaults */
#define F_PKT_TRACK_DESC	60
#define SEQ_INCREMENTAL_STATE_CLEARED	1
/* ClockSnapshot, ClockSnapshot.Clock */
#define F_CS_CLOCKS		1
#define F_CS_PRIMARY		2
#define F_CLK_ID		1
#define F_CLK_TS		2
#define F_CLK_INCREMENTAL	3
#define CLOCK_REALTIME_ID	1
#define CLOCK_MONOTONIC_ID	3
#define CLOCK_LANE		64	/* sequence-scoped, incremental, ns */
/* TracePacketDefaults, TrackEventDefaults */
#define F_DEF_CLOCK_ID		58
#define F_DEF_TRACK_EVENT	11
#define F_TED_TRACK_UUID	11
/* TrackEvent */
#define F_TE_CATEGORY_IIDS	3
#define F_TE_DEBUG_ANNOT	4
#define F_TE_TYPE		9
#define F_TE_NAME_IID		10
#define F_TE_TRACK_UUID		11
#define F_TE_NAME		23
#define F_TE_COUNTER_VALUE	30
#define F_TE_FLOW_IDS		47	/* fixed64 */
#define F_TE_TERM_FLOW_IDS	48	/* fixed64 */
#define TYPE_SLICE_BEGIN	1
#define TYPE_SLICE_END		2
#define TYPE_INSTANT		3
#define TYPE_COUNTER		4
/* InternedData: event_categories, event_names, debug_annotation_names; each {iid 1, name 2} */
#define F_IN_CATEGORIES		1
#define F_IN_EVENT_NAMES	2
#define F_IN_ANNOT_NAMES	3
#define F_IID			1
#define F_IID_NAME		2
/* DebugAnnotation */
#define F_DA_NAME_IID		1
#define F_DA_BOOL		2
#define F_DA_INT		4
#define F_DA_STRING		6
#define F_DA_POINTER		7
#define F_DA_NAME		10
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
#define F_TD_UUID		1
#define F_TD_NAME		2
#define F_TD_PROCESS		3
#define F_TD_THREAD		4
#define F_TD_PARENT_UUID	5
#define F_TD_COUNTER		8
#define F_PD_PID		1
#define F_PD_NAME		6
#define F_THD_PID		1
#define F_THD_TID		2
#define F_THD_NAME		5

/* Track uuids: a kind in the top bits, so they never collide. */
#define UUID_PROCESS(pid)		(1ULL << 60 | (uint64_t)(pid))
#define UUID_THREAD(pid, tid)		(2ULL << 60 | (uint64_t)(pid) << 32 | (tid))
#define UUID_COUNTER(i)			(3ULL << 60 | (uint64_t)(i))
#define UUID_LOSS			(4ULL << 60)

/* Categories: interned with fixed iids. */
enum { CAT_CALL = 1, CAT_SPAN, CAT_SAMPLE, CAT_OFFCPU, CAT_EDGE, CAT_MARK, CAT_EVENT,
       CAT_CAPTURE, CAT_USDT, CAT_LOSS, NCATS };
static const char *const cat_names[NCATS] = {
	"", "call", "span", "sample", "offcpu", "edge", "mark", "event", "capture", "usdt", "loss",
};

/* Debug annotation names with fixed iids; BPFPROF_INFO keys get theirs after these. */
enum { AN_UNFINISHED = 1, AN_NO_ENTRY, AN_UNWOUND, AN_END_INFERRED, AN_ARG0, AN_ARG1, AN_ARG2,
       AN_ARG3, AN_ARG4, AN_ARG5, AN_RET, AN_MODULE, AN_STACK, AN_WEIGHT, AN_TRUNCATED, AN_CPU,
       AN_COUNT, AN_VALUE, AN_CALL_ID, AN_FROM, AN_TO, AN_FROM_ID, AN_TO_ID, AN_LATENCY,
       AN_ARGS, AN_SUSPENDED, AN_RESUMED, AN_RAISED, NANNOTS };
static const char *const annot_names[NANNOTS] = {
	"", "unfinished", "began_before_recording", "unwound", "end_inferred", "arg0", "arg1",
	"arg2", "arg3", "arg4", "arg5", "ret", "module", "stack", "weight_ns", "truncated", "cpu",
	"count", "value", "call_id", "from", "to", "from_id", "to_id", "latency_ns", "args",
	"suspended", "resumed", "raised",
};

/* Interning keys of a lane: kind in the top byte, iid below. */
#define KEY_NAME	(1ULL << 56)
#define KEY_CAT		(2ULL << 56)
#define KEY_ANNOT	(3ULL << 56)
/* Event-name iids: function f is f + 1; its off-CPU name "[off-cpu] f" is OFFCPU_IID + f. */
#define OFFCPU_IID	(1ULL << 32)

/* Packets gather in a buffer of this size before one fwrite: most are 12-16 bytes. */
#define OUT_SIZE	(256 << 10)

/* Held-back calls per thread before they are written regardless (see Ties). */
#define MAX_HELD	4096

/* A set of uint64 keys (never 0), open addressing. */
struct pf_set {
	uint64_t *keys;
	size_t cap, n;
};

/* Function names below this many have a bit per lane: the hot path's check. */
#define NAME_BITS	16384

/* One packet sequence: its own interning and incremental clock. */
struct pf_lane {
	uint32_t seq;
	uint32_t cats;		/* bit per category interned */
	uint64_t last;		/* the clock's value: last timestamp written (ns since t0) */
	struct pf_set interned;	/* every interned entry */
	uint64_t *names;	/* bit per function name iid < NAME_BITS interned */
	size_t nnames;		/* words in names[] */
};

struct pf_held {
	struct bp_call c;
	struct bp_info *infos;	/* own copy of c.infos */
};

/* A track that events are written to: a thread, or the global loss track. */
struct pf_track {
	uint64_t uuid;
	uint32_t pid, tid;
	struct pf_lane *lanes;	/* calls */
	size_t nlanes;
	struct pf_lane *aux;	/* everything else */
	size_t naux;
	struct pf_held *held;
	size_t nheld, held_cap;
};

struct pf_counter {
	uint32_t pid;
	char name[64];
};

struct perfetto_priv {
	struct pf_track *tracks;
	size_t ntracks, tracks_cap;
	uint32_t *track_hash;	/* index + 1 into tracks, by uuid */
	size_t track_hash_cap;
	struct pf_set procs;	/* pids whose descriptor is out */
	struct pf_counter *counters;
	size_t ncounters;
	char **info_keys;	/* BPFPROF_INFO keys: annotation iid NANNOTS + index */
	size_t ninfo_keys;
	uint32_t next_seq;
	uint64_t nflows;
	bool clock_written;
	struct pf_track *last_track;	/* the previous call's: calls come in runs per thread */
	uint8_t *out;			/* OUT_SIZE bytes of packets not yet given to stdio */
	size_t olen;
	struct pb_buf pkt, te, in, an, sub, tmp;	/* scratch messages */
};

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static bool set_has(const struct pf_set *s, uint64_t key)
{
	size_t i;

	if (!s->cap)
		return false;
	for (i = hash64(key) & (s->cap - 1); s->keys[i]; i = (i + 1) & (s->cap - 1))
		if (s->keys[i] == key)
			return true;
	return false;
}

static void set_add(struct pf_set *s, uint64_t key)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		struct pf_set n = { .cap = s->cap ? s->cap * 2 : 16 };

		n.keys = xcalloc(n.cap, sizeof(*n.keys));
		for (i = 0; i < s->cap; i++)
			if (s->keys[i])
				set_add(&n, s->keys[i]);
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

static void put_pkt_buf(struct exporter *e, const struct pb_buf *b)
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

static const char *process_name(const struct bp_session *s, uint32_t pid, char *buf, size_t sz)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid && s->procs[i].name && s->procs[i].name[0])
			return s->procs[i].name;
	snprintf(buf, sz, "pid %" PRIu32, pid);
	return buf;
}

static void write_process_desc(struct exporter *e, const struct bp_session *s, uint32_t pid)
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
	put_pkt_buf(e, &pr->pkt);
}

static void write_thread_desc(struct exporter *e, const struct bp_session *s, uint32_t pid,
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
	put_pkt_buf(e, &pr->pkt);
}

static void write_named_desc(struct exporter *e, uint64_t uuid, uint64_t parent, const char *name,
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
	put_pkt_buf(e, &pr->pkt);
}

static void ensure_process(struct exporter *e, const struct bp_session *s, uint32_t pid)
{
	struct perfetto_priv *pr = e->priv;
	uint64_t key = (uint64_t)pid + 1;

	if (set_has(&pr->procs, key))
		return;
	set_add(&pr->procs, key);
	write_process_desc(e, s, pid);
}

/* The thread's track, its descriptors written on first use. */
static struct pf_track *thread_track(struct exporter *e, const struct bp_session *s, uint32_t pid,
				     uint32_t tid)
{
	struct perfetto_priv *pr = e->priv;
	uint64_t uuid = tid == UINT32_MAX ? UUID_LOSS : UUID_THREAD(pid, tid);
	struct pf_track *t = find_track(pr, uuid);
	size_t i;

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
	if (tid == UINT32_MAX) {
		write_named_desc(e, UUID_LOSS, 0, "bpfprof: lost records", false);
	} else {
		ensure_process(e, s, pid);
		write_thread_desc(e, s, pid, tid);
	}
	return t;
}

static void write_trace_clock(struct exporter *e, const struct bp_session *s);

/* Starts a new sequence on the track: clears its state, sets its defaults and clock. */
static void lane_init(struct exporter *e, const struct bp_session *s, struct pf_track *t,
		      struct pf_lane *l)
{
	struct perfetto_priv *pr = e->priv;

	write_trace_clock(e, s);
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
	put_pkt_buf(e, &pr->pkt);
}

/*
 * A lane of the track whose clock has not passed `ts`.  Calls: lane `want`
 * (the call's depth) if it fits, else the first that does, else a new one
 * (lanes up to `want` are made, so depth d keeps lane d).  Other events
 * (samples, marks, flows) have lanes of their own, so they never push a
 * call off its depth's lane: want = -1.
 */
static struct pf_lane *lane_for(struct exporter *e, const struct bp_session *s, struct pf_track *t,
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
		lane_init(e, s, t, &(*lanes)[i]);
	*n = to;
	return &(*lanes)[to - 1];
}

/* Makes sure the lane knows an interned entry, adding it to pr->in if not. */
static void need(struct perfetto_priv *pr, struct pf_lane *l, uint64_t kind, uint64_t iid,
		 const char *name)
{
	uint32_t field = kind == KEY_NAME ? F_IN_EVENT_NAMES :
			 kind == KEY_CAT ? F_IN_CATEGORIES : F_IN_ANNOT_NAMES;

	if (set_has(&l->interned, kind | iid))
		return;
	set_add(&l->interned, kind | iid);
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

static const char *annot_name(const struct perfetto_priv *pr, uint64_t iid)
{
	return iid < NANNOTS ? annot_names[iid] : pr->info_keys[iid - NANNOTS];
}

/* Starts one debug annotation in pr->an, its name interned in the lane. */
static void an_begin(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid)
{
	need(pr, l, KEY_ANNOT, iid, annot_name(pr, iid));
	pb_reset(&pr->an);
	pb_uint(&pr->an, F_DA_NAME_IID, iid);
}

static void an_end(struct perfetto_priv *pr)
{
	pb_msg(&pr->te, F_TE_DEBUG_ANNOT, &pr->an);
}

static void an_bool(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid)
{
	an_begin(pr, l, iid);
	pb_uint(&pr->an, F_DA_BOOL, 1);
	an_end(pr);
}

static void an_int(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid, int64_t v)
{
	an_begin(pr, l, iid);
	pb_tag(&pr->an, F_DA_INT, PB_VARINT);
	pb_varint(&pr->an, (uint64_t)v);
	an_end(pr);
}

static void an_ptr(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid, uint64_t v)
{
	an_begin(pr, l, iid);
	pb_tag(&pr->an, F_DA_POINTER, PB_VARINT);
	pb_varint(&pr->an, v);
	an_end(pr);
}

static void an_str(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid, const char *v)
{
	an_begin(pr, l, iid);
	pb_str(&pr->an, F_DA_STRING, v);
	an_end(pr);
}

/* Starts an event: pr->te and pr->in empty. */
static void ev_begin(struct perfetto_priv *pr)
{
	pb_reset(&pr->te);
	pb_reset(&pr->in);
}

/*
 * Finishes the event built in pr->te (type, name, annotations) as a packet
 * of lane l at time ts, with the interned entries it needs.
 */
static void ev_write(struct exporter *e, struct pf_lane *l, uint64_t ts)
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
	put_pkt_buf(e, &pr->pkt);
}

static void te_type(struct perfetto_priv *pr, int type)
{
	pb_uint(&pr->te, F_TE_TYPE, type);
}

static void te_cat(struct perfetto_priv *pr, struct pf_lane *l, uint32_t cat)
{
	need(pr, l, KEY_CAT, cat, cat_names[cat]);
	pb_uint(&pr->te, F_TE_CATEGORY_IIDS, cat);
}

static void te_func_name(struct perfetto_priv *pr, struct pf_lane *l, const struct bp_session *s,
			 uint32_t func)
{
	need(pr, l, KEY_NAME, (uint64_t)func + 1, session__func_name(s, func));
	pb_uint(&pr->te, F_TE_NAME_IID, (uint64_t)func + 1);
}

/* An END on lane l at ts, written in place (the packet is < 128 bytes: a 1-byte length). */
static void write_end(struct exporter *e, struct pf_lane *l, uint64_t ts)
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

static uint64_t info_iid(struct perfetto_priv *pr, const char *key)
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

	ev_begin(pr);
	te_type(pr, TYPE_SLICE_BEGIN);
	te_cat(pr, l, is_span(s, c->func) ? CAT_SPAN : CAT_CALL);
	te_func_name(pr, l, s, c->func);
	if (c->flags & BP_CALL_UNFINISHED)
		an_bool(pr, l, AN_UNFINISHED);
	if (c->flags & BP_CALL_NO_ENTRY)
		an_bool(pr, l, AN_NO_ENTRY);
	if (c->flags & BP_CALL_UNWOUND)
		an_bool(pr, l, AN_UNWOUND);
	if (c->flags & BP_CALL_NO_RETPROBE)
		an_bool(pr, l, AN_END_INFERRED);
	if (c->flags & BP_CALL_SUSPENDED)
		an_bool(pr, l, AN_SUSPENDED);
	if (c->flags & BP_CALL_RESUMED)
		an_bool(pr, l, AN_RESUMED);
	if (c->flags & BP_CALL_RAISED)
		an_bool(pr, l, AN_RAISED);
	if (c->flags & BP_CALL_HAS_ARGS)
		for (i = 0; i < 6; i++)
			an_ptr(pr, l, AN_ARG0 + i, c->args[i]);
	if (c->flags & BP_CALL_HAS_RET)
		an_ptr(pr, l, AN_RET, c->ret);
	/* BPFPROF_INFO: a repeated key keeps its last value, as in the JSON */
	for (i = 0; i < c->ninfos; i++) {
		const struct bp_info *in = &c->infos[i];

		for (j = i + 1; j < c->ninfos && strcmp(c->infos[j].key, in->key); j++)
			;
		if (j < c->ninfos)
			continue;
		if (in->is_str)
			an_str(pr, l, info_iid(pr, in->key), in->str);
		else
			an_int(pr, l, info_iid(pr, in->key), in->value);
	}
	ev_write(e, l, c->begin);
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
	struct pf_lane *l = lane_for(e, s, t, c->depth, c->begin);
	size_t li;

	write_begin(e, s, l, c);
	if (t->nheld) {
		/* writing them may add lanes and move the array: keep the index */
		li = l - t->lanes;
		release_held(e, s, t, c->id);
		l = &t->lanes[li];
	}
	/* the held calls may have used this lane: its clock is still <= end */
	write_end(e, l, end);
}

static int write_call(struct exporter *e, const struct bp_session *s, const struct bp_call *c)
{
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t = pr->last_track;

	if (!t || t->tid != c->tid || t->pid != c->pid)
		t = pr->last_track = thread_track(e, s, c->pid, c->tid);

	if (c->flags & BP_CALL_NO_ENTRY) {
		hold(t, c);
		if (t->nheld > MAX_HELD)
			release_held(e, s, t, 0);
		return 0;
	}
	write_call_tree(e, s, t, c);
	return 0;
}

static void write_loss(struct exporter *e, const struct bp_session *s, const struct bp_loss *lo)
{
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t = thread_track(e, s, 0, UINT32_MAX);
	struct pf_lane *l = lane_for(e, s, t, -1, lo->ts);
	char name[64];

	ev_begin(pr);
	te_type(pr, TYPE_INSTANT);
	te_cat(pr, l, CAT_LOSS);
	snprintf(name, sizeof(name), "lost %" PRIu64 " records", lo->count);
	pb_str(&pr->te, F_TE_NAME, name);
	an_int(pr, l, AN_CPU, lo->cpu);
	an_int(pr, l, AN_COUNT, (int64_t)lo->count);
	ev_write(e, l, lo->ts);
}

static void write_sample(struct exporter *e, const struct bp_session *s, const struct bp_sample *sm)
{
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t = thread_track(e, s, sm->pid, sm->tid);
	bool off = sm->flags & BP_SAMPLE_F_OFFCPU;
	struct pf_lane *l = lane_for(e, s, t, -1, sm->ts);
	uint32_t funcs[256];
	size_t n = session__path_funcs(s, sm->path, funcs, 256), i;
	char *stack = NULL;
	size_t slen = 0;
	FILE *m;

	ev_begin(pr);
	te_type(pr, off ? TYPE_SLICE_BEGIN : TYPE_INSTANT);
	te_cat(pr, l, off ? CAT_OFFCPU : CAT_SAMPLE);
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

		if (!set_has(&l->interned, KEY_NAME | iid)) {
			snprintf(name, sizeof(name), "[off-cpu] %s", session__func_name(s, funcs[i - 1]));
			need(pr, l, KEY_NAME, iid, name);
		}
		pb_uint(&pr->te, F_TE_NAME_IID, iid);
	} else {
		te_func_name(pr, l, s, funcs[i - 1]);
	}
	an_int(pr, l, AN_WEIGHT, (int64_t)sm->weight);
	if (sm->flags & BP_SAMPLE_F_TRUNCATED)
		an_bool(pr, l, AN_TRUNCATED);
	/* the stack, outermost first, as folded-stack text */
	m = open_memstream(&stack, &slen);
	if (m) {
		for (i = 0; i < n; i++)
			fprintf(m, "%s%s", i ? ";" : "", session__func_name(s, funcs[i]));
		if (fclose(m) == 0)
			an_str(pr, l, AN_STACK, stack);
		free(stack);
	}
	ev_write(e, l, sm->ts);
	if (off)
		write_end(e, l, sm->ts + sm->weight);
}

/*
 * An edge: an instant at the cause on the source thread starts flow `id`,
 * one where the effect begins on the destination thread ends it; Perfetto
 * draws the arrow between the two (each inside its enclosing call).
 */
static void write_edge(struct exporter *e, const struct bp_session *s, const struct bp_edge *ed)
{
	struct perfetto_priv *pr = e->priv;
	const char *kind = session__edge_kind(ed->kind);
	uint64_t id = ++pr->nflows;
	struct pf_track *t;
	struct pf_lane *l;

	t = thread_track(e, s, ed->src_pid, ed->src_tid);
	l = lane_for(e, s, t, -1, ed->src_ts);
	ev_begin(pr);
	te_type(pr, TYPE_INSTANT);
	te_cat(pr, l, CAT_EDGE);
	pb_str(&pr->te, F_TE_NAME, kind);
	pb_fixed64(&pr->te, F_TE_FLOW_IDS, id);
	an_str(pr, l, AN_FROM, session__func_name(s, ed->src_func));
	an_int(pr, l, AN_FROM_ID, (int64_t)ed->src_call);
	an_str(pr, l, AN_TO, session__func_name(s, ed->dst_func));
	an_int(pr, l, AN_TO_ID, (int64_t)ed->dst_call);
	if (ed->kind == BP_EDGE_DATA)
		an_ptr(pr, l, AN_VALUE, ed->value);
	if (ed->kind == BP_EDGE_WAKEUP)
		an_int(pr, l, AN_LATENCY, ed->dst_ts > ed->src_ts ? (int64_t)(ed->dst_ts - ed->src_ts) : 0);
	ev_write(e, l, ed->src_ts);

	t = thread_track(e, s, ed->dst_pid, ed->dst_tid);
	l = lane_for(e, s, t, -1, ed->dst_ts);
	ev_begin(pr);
	te_type(pr, TYPE_INSTANT);
	te_cat(pr, l, CAT_EDGE);
	pb_str(&pr->te, F_TE_NAME, kind);
	pb_fixed64(&pr->te, F_TE_TERM_FLOW_IDS, id);
	ev_write(e, l, ed->dst_ts);
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
	ensure_process(e, s, pid);
	write_named_desc(e, UUID_COUNTER(i), UUID_PROCESS(pid), name, true);
	return UUID_COUNTER(i);
}

static void write_annot(struct exporter *e, const struct bp_session *s, const struct bp_annot *a)
{
	static const uint32_t cat[] = { CAT_USDT, CAT_MARK, CAT_EVENT, CAT_CAPTURE, CAT_CAPTURE,
					CAT_USDT };
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t = thread_track(e, s, a->pid, a->tid);
	struct pf_lane *l = lane_for(e, s, t, -1, a->ts);
	char name[sizeof(a->name) + 1];
	uint32_t i;

	memcpy(name, a->name, sizeof(a->name));
	name[sizeof(a->name)] = '\0';
	ev_begin(pr);
	te_type(pr, TYPE_INSTANT);
	te_cat(pr, l, a->kind < 6 ? cat[a->kind] : CAT_USDT);
	pb_str(&pr->te, F_TE_NAME, name);
	if (a->kind == BP_ANNOT_EVENT)
		an_int(pr, l, AN_VALUE, a->value);
	if (a->kind == BP_ANNOT_PROBE)
		for (i = 0; i < a->nargs && i < 6; i++)
			an_int(pr, l, AN_ARG0 + i, a->args[i]);
	an_int(pr, l, AN_CALL_ID, (int64_t)a->call);
	ev_write(e, l, a->ts);

	if (a->kind == BP_ANNOT_EVENT) {
		uint64_t uuid = counter_track(e, s, a->pid, name);

		ev_begin(pr);
		te_type(pr, TYPE_COUNTER);
		pb_uint(&pr->te, F_TE_TRACK_UUID, uuid);
		pb_tag(&pr->te, F_TE_COUNTER_VALUE, PB_VARINT);
		pb_varint(&pr->te, (uint64_t)a->value);
		ev_write(e, l, a->ts);
	}
}

/*
 * The trace's clock is CLOCK_MONOTONIC, what the events are taken in;
 * REALTIME beside it places the recording in wall-clock time.  Written
 * before the first lane, not at begin(): a live recording knows t0 only
 * once it has started.
 */
static void write_trace_clock(struct exporter *e, const struct bp_session *s)
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
	pb_varint(&pr->sub, (uint64_t)((int64_t)s->t0 + s->realtime_offset));
	pb_msg(&pr->tmp, F_CS_CLOCKS, &pr->sub);
	pb_uint(&pr->tmp, F_CS_PRIMARY, CLOCK_MONOTONIC_ID);
	pb_reset(&pr->pkt);
	pb_msg(&pr->pkt, F_PKT_CLOCK_SNAPSHOT, &pr->tmp);
	put_pkt_buf(e, &pr->pkt);
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
	case BP_EV_CALL:
		return write_call(e, s, &ev->call);
	case BP_EV_LOSS:
		write_loss(e, s, &ev->loss);
		break;
	case BP_EV_SAMPLE:
		write_sample(e, s, &ev->sample);
		break;
	case BP_EV_EDGE:
		write_edge(e, s, &ev->edge);
		break;
	case BP_EV_ANNOT:
		write_annot(e, s, &ev->annot);
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

	write_trace_clock(e, s);
	/* calls without a traced caller that were held back: outermost first */
	for (i = 0; i < pr->ntracks; i++)
		release_held(e, s, &pr->tracks[i], 0);
	/* descriptors again, with the names as they are now (exec renames) */
	for (i = 0; i < s->nprocs; i++)
		if (set_has(&pr->procs, (uint64_t)s->procs[i].pid + 1))
			write_process_desc(e, s, s->procs[i].pid);
	for (i = 0; i < pr->ntracks; i++)
		if (pr->tracks[i].tid != UINT32_MAX)
			write_thread_desc(e, s, pr->tracks[i].pid, pr->tracks[i].tid);
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
