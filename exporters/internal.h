/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The Perfetto exporter's state and field numbers, shared by perfetto.c
 * (packets, slices: the per-call path) and perfetto_tracks.c (track
 * descriptors, samples, edges, annotations, the clock).  Exporter-private.
 */
#ifndef BPFPROF_PERFETTO_INTERNAL_H
#define BPFPROF_PERFETTO_INTERNAL_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "exporter.h"
#include "protobuf.h"
#include "model/coro.h"

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
#define F_DA_UINT		3
#define F_DA_INT		4
#define F_DA_DOUBLE		5
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
#define UUID_TASK(id)			(5ULL << 60 | (id))	/* id: a task's first call id */

/* Categories: interned with fixed iids. */
enum { CAT_CALL = 1, CAT_SPAN, CAT_SAMPLE, CAT_OFFCPU, CAT_EDGE, CAT_MARK, CAT_EVENT,
       CAT_CAPTURE, CAT_USDT, CAT_LOSS, CAT_GOVERNOR, CAT_CORO, NCATS };
static const char *const cat_names[NCATS] = {
	"", "call", "span", "sample", "offcpu", "edge", "mark", "event", "capture", "usdt", "loss",
	"governor", "coroutine",
};

/* Debug annotation names with fixed iids; BPFPROF_INFO keys get theirs after these. */
enum { AN_UNFINISHED = 1, AN_NO_ENTRY, AN_UNWOUND, AN_END_INFERRED, AN_ARG0, AN_ARG1, AN_ARG2,
       AN_ARG3, AN_ARG4, AN_ARG5, AN_RET, AN_MODULE, AN_STACK, AN_WEIGHT, AN_TRUNCATED, AN_CPU,
       AN_COUNT, AN_VALUE, AN_CALL_ID, AN_FROM, AN_TO, AN_FROM_ID, AN_TO_ID, AN_LATENCY,
       AN_ARGS, AN_SUSPENDED, AN_RESUMED, AN_RAISED, AN_RATE, AN_OVERHEAD, AN_ENTRY_LOST,
       AN_SPAN_ID, AN_SLICES, AN_EXEC, AN_WALL, AN_MAX_SLICE, AN_OPEN, AN_TASK, AN_AWAITED_BY,
       AN_AWAIT_CHILD, AN_AWAIT_OTHER, NANNOTS };
static const char *const annot_names[NANNOTS] = {
	"", "unfinished", "began_before_recording", "unwound", "end_inferred", "arg0", "arg1",
	"arg2", "arg3", "arg4", "arg5", "ret", "module", "stack", "weight_ns", "truncated", "cpu",
	"count", "value", "call_id", "from", "to", "from_id", "to_id", "latency_ns", "args",
	"suspended", "resumed", "raised", "calls_per_s", "overhead_pct", "entry_lost",
	"span_id", "slices", "exec_ns", "wall_ns", "max_slice_ns", "open", "task", "awaited_by",
	"await_child_ns", "await_other_ns",
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
	bool task;		/* an asyncio task's track (perfetto_coro.c), under its thread's */
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
	struct coro_joiner *coro;	/* coroutine spans (perfetto_coro.c), NULL until a slice */
};

/* perfetto_coro.c: tasks' tracks holding their coroutines' spans */
struct pf_track *pf_find_or_add_track(struct exporter *e, uint64_t uuid, uint32_t pid,
				      uint32_t tid, bool *added);
int pf_coro_call(struct exporter *e, const struct bp_session *s, const struct bp_call *c);
void pf_coro_edge(struct exporter *e, const struct bp_edge *ed);
void pf_coro_annot(struct exporter *e, const struct bp_annot *a);
void pf_coro_end(struct exporter *e, const struct bp_session *s);


void pf_an_bool(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid);
void pf_an_int(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid, int64_t v);
void pf_an_ptr(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid, uint64_t v);
void pf_an_str(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid, const char *v);
/* a call's --args (perfetto_annots.c); the iid of a BPFPROF_INFO or argument key */
void pf_write_args(struct perfetto_priv *pr, struct pf_lane *l, const struct bp_session *s,
		   const struct bp_call *c);
uint64_t pf_info_iid(struct perfetto_priv *pr, const char *key);
void pf_ensure_process(struct exporter *e, const struct bp_session *s, uint32_t pid);
void pf_ev_begin(struct perfetto_priv *pr);
void pf_ev_write(struct exporter *e, struct pf_lane *l, uint64_t ts);
struct pf_lane *pf_lane_for(struct exporter *e, const struct bp_session *s, struct pf_track *t,
				long want, uint64_t ts);
void pf_lane_init(struct exporter *e, const struct bp_session *s, struct pf_track *t,
		      struct pf_lane *l);
void pf_need(struct perfetto_priv *pr, struct pf_lane *l, uint64_t kind, uint64_t iid,
		 const char *name);
void pf_put_pkt_buf(struct exporter *e, const struct pb_buf *b);
void pf_set_add(struct pf_set *s, uint64_t key);
bool pf_set_has(const struct pf_set *s, uint64_t key);
void pf_te_cat(struct perfetto_priv *pr, struct pf_lane *l, uint32_t cat);
void pf_te_func_name(struct perfetto_priv *pr, struct pf_lane *l, const struct bp_session *s,
			 uint32_t func);
void pf_te_type(struct perfetto_priv *pr, int type);
struct pf_track *pf_thread_track(struct exporter *e, const struct bp_session *s, uint32_t pid,
				     uint32_t tid);
void pf_write_annot(struct exporter *e, const struct bp_session *s, const struct bp_annot *a);
void pf_write_edge(struct exporter *e, const struct bp_session *s, const struct bp_edge *ed);
void pf_write_end(struct exporter *e, struct pf_lane *l, uint64_t ts);
void pf_write_loss(struct exporter *e, const struct bp_session *s, const struct bp_loss *lo);
void pf_write_named_desc(struct exporter *e, uint64_t uuid, uint64_t parent, const char *name,
			     bool counter);
void pf_write_process_desc(struct exporter *e, const struct bp_session *s, uint32_t pid);
void pf_write_sample(struct exporter *e, const struct bp_session *s, const struct bp_sample *sm);
void pf_write_thread_desc(struct exporter *e, const struct bp_session *s, uint32_t pid,
			      uint32_t tid);
void pf_write_trace_clock(struct exporter *e, const struct bp_session *s);

#endif
