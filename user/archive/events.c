// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The .bpfprof archive reader, events: decoding the events of a block
 * (varints, deltas against the previous event) and archive__next(), which
 * walks the blocks.  Opening, sections and tables are in reader.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "archive.h"
#include "format.h"
#include "internal.h"
#include "base/log.h"

static bool ev_varint(const unsigned char *p, size_t len, size_t *pos, uint64_t *v)
{
	size_t n = varint_get(p + *pos, len - *pos, v);

	*pos += n;
	return n != 0;
}

/* A short string of an event: varint length, bytes; kept up to cap - 1. */
static int ev_str(const unsigned char *p, size_t len, size_t *pos, char *out, size_t cap)
{
	uint64_t n;

	if (!ev_varint(p, len, pos, &n) || n > len - *pos)
		return -1;
	memcpy(out, p + *pos, n < cap - 1 ? n : cap - 1);
	out[n < cap - 1 ? n : cap - 1] = 0;
	*pos += n;
	return 0;
}

static int decode_annot(struct archive_reader *r, const unsigned char *p, size_t len,
			struct bp_annot *a)
{
	uint64_t v[7], x;
	size_t pos = 0, i;

	for (i = 0; i < 7; i++)
		if (!ev_varint(p, len, &pos, &v[i]))
			return corrupt(r, "an annotation in the events block at byte %" PRIu64
				       " is cut short", r->sec_off);
	if (v[1] > UINT32_MAX || v[2] > UINT32_MAX || v[3] > UINT32_MAX || v[6] > 6)
		return corrupt(r, "an annotation is out of range");
	a->ts = r->prev.ts + (uint64_t)unzigzag(v[0]);
	a->pid = v[1];
	a->tid = v[2];
	a->kind = v[3];
	a->call = v[4];
	a->value = unzigzag(v[5]);
	a->nargs = v[6];
	for (i = 0; i < a->nargs; i++) {
		if (!ev_varint(p, len, &pos, &x))
			return corrupt(r, "an annotation's arguments are cut short");
		a->args[i] = unzigzag(x);
	}
	if (ev_str(p, len, &pos, a->name, sizeof(a->name)))
		return corrupt(r, "an annotation's name is cut short");
	/* a probe's string arguments (-U ...(str)): a mask, then at most two strings */
	a->str_args = 0;
	if (pos < len) {
		if (!ev_varint(p, len, &pos, &x) || x > 0x3f || __builtin_popcountll(x) > 2)
			return corrupt(r, "an annotation's string arguments are out of range");
		a->str_args = x;
		for (i = 0; i < (size_t)__builtin_popcountll(x); i++)
			if (ev_str(p, len, &pos, a->strs[i], sizeof(a->strs[i])))
				return corrupt(r, "an annotation's string arguments are cut short");
	}
	r->prev.ts = a->ts;
	return 0;
}

static int decode_call(struct archive_reader *r, const unsigned char *p, size_t len,
		       struct bp_call *c)
{
	const struct bp_session *s = r->s;
	uint64_t v[11];
	int64_t pid, tid;
	size_t pos = 0, i;

	for (i = 0; i < 11; i++)
		if (!ev_varint(p, len, &pos, &v[i]))
			return corrupt(r, "a call event at byte %zu of the events block at byte %"
				       PRIu64 " is cut short", r->blk_pos, r->sec_off);
	c->id = r->prev.id + (uint64_t)unzigzag(v[0]);
	c->parent_id = v[1] ? c->id - v[1] : 0;
	c->begin = r->prev.ts + (uint64_t)unzigzag(v[2]);
	c->end = c->begin + v[3];
	c->self = v[3] - v[4];
	pid = (int64_t)r->prev.pid + unzigzag(v[5]);
	tid = (int64_t)r->prev.tid + unzigzag(v[6]);
	if (pid < 0 || pid > UINT32_MAX || tid < 0 || tid > UINT32_MAX || v[8] > UINT32_MAX ||
	    v[9] > UINT32_MAX)
		return corrupt(r, "a call event at byte %zu of the events block at byte %" PRIu64
			       " is out of range", r->blk_pos, r->sec_off);
	if (v[7] >= s->nfuncs)
		return corrupt(r, "a call names function %" PRIu64 " of %zu", v[7], s->nfuncs);
	if (v[10] && v[10] >= s->npaths)
		return corrupt(r, "a call names call path %" PRIu64 " of %zu", v[10], s->npaths);
	c->pid = pid;
	c->tid = tid;
	c->func = v[7];
	c->depth = v[8];
	c->flags = v[9];
	c->path = v[10];
	/* the registers follow when the flags say they were recorded */
	if (c->flags & BP_CALL_HAS_ARGS)
		for (i = 0; i < 6; i++)
			if (!ev_varint(p, len, &pos, &c->args[i]))
				return corrupt(r, "a call event's arguments are cut short");
	if ((c->flags & BP_CALL_HAS_RET) && !ev_varint(p, len, &pos, &c->ret))
		return corrupt(r, "a call event's return value is cut short");
	if (c->flags & BP_CALL_HAS_INFOS) {
		uint64_t n, is_str, v;

		if (!ev_varint(p, len, &pos, &n) || n > ARCHIVE_MAX_INFOS)
			return corrupt(r, "a call event's infos are cut short or too many");
		for (i = 0; i < n; i++) {
			struct bp_info *in = &r->infos[i];

			memset(in, 0, sizeof(*in));
			if (ev_str(p, len, &pos, in->key, sizeof(in->key)) ||
			    !ev_varint(p, len, &pos, &is_str))
				return corrupt(r, "a call event's info is cut short");
			in->is_str = is_str != 0;
			if (in->is_str ? ev_str(p, len, &pos, in->str, sizeof(in->str)) :
					 !ev_varint(p, len, &pos, &v))
				return corrupt(r, "a call event's info value is cut short");
			if (!in->is_str)
				in->value = unzigzag(v);
		}
		c->infos = r->infos;
		c->ninfos = n;
	}
	if (c->flags & BP_CALL_HAS_XARGS) {
		uint64_t v;

		for (i = 0; i < BP_ARGX_STACK; i++)
			if (!ev_varint(p, len, &pos, &c->x.stack[i]))
				return corrupt(r, "a call event's stack arguments are cut short");
		if (!ev_varint(p, len, &pos, &c->x.ret2))
			return corrupt(r, "a call event's return value is cut short");
		for (i = 0; i < BP_ARGX_NSTR; i++) {
			uint64_t state;

			if (!ev_varint(p, len, &pos, &v) || !ev_varint(p, len, &pos, &state) ||
			    ev_str(p, len, &pos, c->x.str[i], sizeof(c->x.str[i])))
				return corrupt(r, "a call event's string arguments are cut short");
			if ((v >= 10 && v != BP_ARGX_NONE) || state > BP_ARGX_STR_UNREAD)
				return corrupt(r, "a call event's string arguments are out of range");
			c->x.str_slot[i] = v;
			c->x.str_state[i] = state;
		}
		c->x.xmm_mask = 0;
		if (c->flags & BP_CALL_HAS_XMM) {
			if (!ev_varint(p, len, &pos, &v) || v >= 1u << BP_ARGX_XMM)
				return corrupt(r, "a call event's float values are cut short");
			c->x.xmm_mask = v;
			for (i = 0; i < BP_ARGX_XMM; i++)
				if ((v & (1u << i)) && !ev_varint(p, len, &pos, &c->x.xmm[i]))
					return corrupt(r, "a call event's float values are cut short");
		}
	}
	c->task = 0;
	if (c->flags & BP_CALL_IN_TASK) {
		uint64_t v;

		if (!ev_varint(p, len, &pos, &v) || v > c->id)
			return corrupt(r, "a call event's task is cut short or out of range");
		c->task = c->id - v;
	}
	r->prev.id = c->id;
	r->prev.ts = c->begin;
	r->prev.pid = c->pid;
	r->prev.tid = c->tid;
	return 0;
}

static int decode_loss(struct archive_reader *r, const unsigned char *p, size_t len,
		       struct bp_loss *l)
{
	uint64_t v[3];
	size_t pos = 0, i;

	for (i = 0; i < 3; i++)
		if (!ev_varint(p, len, &pos, &v[i]))
			return corrupt(r, "a loss event at byte %zu of the events block at byte %"
				       PRIu64 " is cut short", r->blk_pos, r->sec_off);
	if (v[2] > UINT32_MAX)
		return corrupt(r, "a loss event names CPU %" PRIu64, v[2]);
	l->ts = r->prev.ts + (uint64_t)unzigzag(v[0]);
	l->count = v[1];
	l->cpu = v[2];
	r->prev.ts = l->ts;
	return 0;
}

static int decode_sample(struct archive_reader *r, const unsigned char *p, size_t len,
			 struct bp_sample *sm)
{
	uint64_t v[7];
	int64_t pid, tid;
	size_t pos = 0, i;

	for (i = 0; i < 7; i++)
		if (!ev_varint(p, len, &pos, &v[i]))
			return corrupt(r, "a sample event in the events block at byte %" PRIu64
				       " is cut short", r->sec_off);
	pid = (int64_t)r->prev.pid + unzigzag(v[2]);
	tid = (int64_t)r->prev.tid + unzigzag(v[3]);
	if (pid < 0 || pid > UINT32_MAX || tid < 0 || tid > UINT32_MAX || v[5] > UINT32_MAX ||
	    v[6] > UINT32_MAX)
		return corrupt(r, "a sample event is out of range");
	if (v[4] >= r->s->npaths && v[4])
		return corrupt(r, "a sample names call path %" PRIu64 " of %zu", v[4], r->s->npaths);
	sm->ts = r->prev.ts + (uint64_t)unzigzag(v[0]);
	sm->weight = v[1];
	sm->pid = pid;
	sm->tid = tid;
	sm->path = v[4];
	sm->cpu = v[5];
	sm->flags = v[6];
	r->prev.ts = sm->ts;
	r->prev.pid = sm->pid;
	r->prev.tid = sm->tid;
	return 0;
}

static int decode_edge(struct archive_reader *r, const unsigned char *p, size_t len,
		       struct bp_edge *ed)
{
	uint64_t v[12];
	size_t pos = 0, i;

	for (i = 0; i < 12; i++)
		if (!ev_varint(p, len, &pos, &v[i]))
			return corrupt(r, "an edge event in the events block at byte %" PRIu64
				       " is cut short", r->sec_off);
	for (i = 5; i < 9; i++)
		if (v[i] > UINT32_MAX)
			return corrupt(r, "an edge event is out of range");
	if (v[0] > UINT32_MAX || v[9] >= r->s->nfuncs || v[10] >= r->s->nfuncs)
		return corrupt(r, "an edge names function %" PRIu64 "/%" PRIu64 " of %zu", v[9],
			       v[10], r->s->nfuncs);
	ed->kind = v[0];
	ed->src_call = v[1];
	ed->dst_call = v[2];
	ed->src_ts = r->prev.ts + (uint64_t)unzigzag(v[3]);
	ed->dst_ts = ed->src_ts + (uint64_t)unzigzag(v[4]);
	ed->src_pid = v[5];
	ed->src_tid = v[6];
	ed->dst_pid = v[7];
	ed->dst_tid = v[8];
	ed->src_func = v[9];
	ed->dst_func = v[10];
	ed->value = v[11];
	r->prev.ts = ed->src_ts;
	return 0;
}

/* The next event of the loaded block: 1 (*ev filled), 0 (a kind skipped), or -errno. */
static int decode_event(struct archive_reader *r, struct bp_event *ev)
{
	uint64_t kind, len;
	size_t n, avail = r->blk_len - r->blk_pos;
	const unsigned char *p = r->blk + r->blk_pos;
	int err;

	if (++r->blk_seen > r->blk_events)
		return corrupt(r, "the events block at byte %" PRIu64 " holds more than its %"
			       PRIu32 " events", r->sec_off, r->blk_events);
	n = varint_get(p, avail, &kind);
	if (n) {
		size_t m = varint_get(p + n, avail - n, &len);

		n = m ? n + m : 0;
	}
	if (!n || len > avail - n || len > ARCHIVE_MAX_EVENT)
		return corrupt(r, "an event at byte %zu of the events block at byte %" PRIu64
			       " runs past its end", r->blk_pos, r->sec_off);
	p += n;
	memset(ev, 0, sizeof(*ev));
	switch (kind) {
	case ARCHIVE_EV_CALL:
		ev->kind = BP_EV_CALL;
		err = decode_call(r, p, len, &ev->call);
		break;
	case ARCHIVE_EV_LOSS:
		ev->kind = BP_EV_LOSS;
		err = decode_loss(r, p, len, &ev->loss);
		break;
	case ARCHIVE_EV_SAMPLE:
		ev->kind = BP_EV_SAMPLE;
		err = decode_sample(r, p, len, &ev->sample);
		break;
	case ARCHIVE_EV_EDGE:
		ev->kind = BP_EV_EDGE;
		err = decode_edge(r, p, len, &ev->edge);
		break;
	case ARCHIVE_EV_ANNOT:
		ev->kind = BP_EV_ANNOT;
		err = decode_annot(r, p, len, &ev->annot);
		/*
		 * The function table was written as functions appeared, before
		 * the governor dropped any: its drop (value = the function)
		 * marks it here, as the live session was marked.
		 */
		if (!err && ev->annot.kind == BP_ANNOT_DROP && ev->annot.value >= 0 &&
		    (uint64_t)ev->annot.value < r->s->nfuncs)
			r->s->funcs[ev->annot.value].flags |= BP_FUNC_DROPPED;
		break;
	default:
		/* A kind from a newer writer: its length lets us step over it. */
		err = 0;
		kind = 0;
		break;
	}
	if (err)
		return err;
	r->blk_pos += n + len;
	return kind ? 1 : 0;
}

int archive__next(struct archive_reader *r, struct bp_event *ev)
{
	int err;

	for (;;) {
		if (r->err)
			return r->err;
		if (r->done)
			return 0;
		if (r->blk_pos < r->blk_len) {
			err = decode_event(r, ev);
			if (err)
				return err;	/* 1: an event; <0: sticky */
			continue;
		}
		if (r->blk_seen != r->blk_events)
			return corrupt(r, "the events block at byte %" PRIu64 " holds %" PRIu32
				       " events, not %" PRIu32, r->sec_off, r->blk_seen,
				       r->blk_events);
		r->blk_len = r->blk_pos = 0;
		r->blk_events = r->blk_seen = 0;
		if (!r->pending) {
			err = archive_read_section_header(r);
			if (err)
				return err == -ECANCELED ? 0 : err;
		}
		err = archive_read_section_body(r);
		if (err)
			return err == -ECANCELED ? 0 : err;
	}
}
