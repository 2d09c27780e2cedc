// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The .bpfprof archive writer: one recording, written streaming, read back
 * by user/archive/reader.c (convert, merge, report).
 *
 * Byte layout, version 1.2 (1.1 lacked the timing note; 1.0 lacked function file:line, call arguments,
 * samples and edges; this reader reads both).  All integers little-endian.
 *
 *   file    = magic "\x89BPFPROF" (8 bytes), u16 major, u16 minor, u32 flags (0),
 *             section*
 *   section = u32 type, u32 flags, u64 length, payload[length]
 *
 * A reader skips sections whose type it does not know (forward compatible),
 * and refuses a file whose major version is newer than its own.  Section
 * flag 0x1 (ARCHIVE_SEC_ZLIB): the payload after its 8-byte prefix is one
 * zlib stream.  string = u32 length (0xffffffff: NULL) + bytes, no NUL,
 * at most 64 KiB.
 *
 * Order: HEADER first; then, before each EVENTS block, the MODULES, FUNCS and
 * PATHS entries added since the previous block (so every index an event
 * uses is defined before it); at the end THREADS, PROCS, LOSSES, COUNTERS and
 * last END.
 *
 *   HEADER   (1) u32 fixed_size (16), u64 t0, i64 realtime_offset,
 *                string cmdline, string hostname, string kernel
 *   MODULES  (2) FUNCS (3) PATHS (4) THREADS (6) PROCS (7) are tables:
 *                u32 first, u32 count, u32 fixed_size, u32 reserved, then
 *                `count` records of fixed_size bytes followed by the record's
 *                strings.  `first` is the index of the first record: deltas
 *                append, so it must equal the entries read so far.  A reader
 *                ignores fixed bytes beyond the fields it knows.
 *     module:  (fixed 0) string path
 *     func:    (fixed 40) u32 module, u32 flags, u64 addr, u64 size, u64 offset,
 *              i32 nparams, u32 line; string name, string file
 *              (1.0: fixed 32, without nparams, line and file)
 *     path:    (fixed 8) u32 parent, u32 func     (index 0, the root, is implicit;
 *                                                  parent < own index)
 *     thread:  (fixed 48) u32 tid, u32 pid, u64 first_ts, u64 last_ts, u32 exited,
 *              u32 reserved, char name[16]        (sorted by tid)
 *     process: (fixed 8) u32 pid, u32 ppid; string name
 *   EVENTS   (5) u32 raw_length, u32 nevents, then the raw events (flags 0) or
 *                their zlib stream (flags 0x1; level 1, blocks of ~256 KiB,
 *                raw_length <= 16 MiB and <= 64 times the stream's length:
 *                a block that would compress more is stored raw).  Each
 *                event: varint kind, varint length, payload[length]; unknown
 *                kinds are skipped, and so are payload bytes beyond the
 *                fields a reader knows.
 *     CALL (1), varints: zigzag(id - prev.id), parent (0: none, else
 *              id - parent_id), zigzag(begin - prev.ts), end - begin,
 *              (end - begin) - self,
 *              zigzag(pid - prev.pid), zigzag(tid - prev.tid), func, depth,
 *              flags, path; then args[6] if flags & 0x10 (BP_CALL_HAS_ARGS),
 *              then ret if flags & 0x20 (BP_CALL_HAS_RET), then the infos
 *              if flags & 0x40; then (1.3) if flags & 0x2000 (BP_CALL_HAS_XARGS):
 *              stack[4], ret2 (rdx; 0 without a return), and two strings,
 *              each: varint slot (0xff none), varint state, string; then
 *              if flags & 0x4000 (BP_CALL_HAS_XMM): varint xmm_mask, and
 *              xmm[i] for each bit i set (floats read inside the call)
 *     LOSS (2), varints: zigzag(ts - prev.ts), count, cpu
 *     SAMPLE (3), varints: zigzag(ts - prev.ts), weight, zigzag(pid - prev.pid),
 *              zigzag(tid - prev.tid), path, cpu, flags
 *     EDGE (4), varints: kind, src_call, dst_call, zigzag(src_ts - prev.ts),
 *              zigzag(dst_ts - src_ts), src_pid, src_tid, dst_pid, dst_tid,
 *              src_func, dst_func, value
 *              `prev` (id, ts, pid, tid) starts at 0 in each block and is
 *              the last event's; arithmetic wraps modulo 2^64.
 *   SIGS    (10) (1.3) u32 n, then n times: u32 func, string signature
 *                (model/argsig.h), after the FUNCS rows it names
 *   BUILDIDS (11) (1.4) u32 n, then n times: u32 module, string build-id
 *                (lowercase hex), after the MODULES row it names; a module's
 *                may come in a later section than its row (a sampled file is
 *                read after it is first seen)
 *   LOSSES   (8) u64 lost_total, u32 ncpus, u32 reserved, u64 lost[ncpus]
 *   COUNTERS (9) ends (since 1.2) with string timing: NULL when durations are
 *                the raw clock, else how much probe cost was taken out of them
 *   COUNTERS (9) u32 n, u32 reserved, u64 x n: duration, nrecords, ncalls,
 *                nunfinished, nno_entry, nunwound, nno_retprobe, nexceptions,
 *                nsamples, noffcpu, ntruncated, nedges[4] (a reader ignores
 *                counters beyond those it knows; missing ones are 0)
 *   END (0x454e44) u64 sections before END, u64 events, u32 crc32 of every
 *                byte before the END section, u32 reserved.  A file without
 *                END, or whose counts or checksum differ, is truncated or
 *                corrupt.
 *
 * Varint: LEB128 (7 bits a byte, low first).  zigzag(v) = (v << 1) ^ (v >> 63).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "archive.h"
#include "format.h"
#include "base/log.h"

/* A growable byte buffer for one section's payload. */
struct abuf {
	unsigned char *p;
	size_t len, cap;
};

struct archive_writer {
	FILE *out;
	uint32_t crc;		/* of every byte written so far */
	uint64_t nsections;
	uint64_t nevents;
	bool header_done;	/* HEADER waits for the first block: t0 is set after begin() */
	size_t nmodules, nfuncs, npaths;	/* table entries already written */
	bool *bid_done;		/* per module: its build-id written (set late for a sampled file) */
	size_t nbid_done;
	struct abuf blk;	/* raw events of the current block */
	uint32_t blk_events;
	struct archive_delta prev;
	struct abuf tab;	/* scratch: table sections, compressed blocks */
	struct abuf ev;		/* scratch: one encoded event */
	uint64_t flushed_ns;	/* CLOCK_MONOTONIC of the last block written */
};

/*
 * A block is written at ARCHIVE_BLOCK_TARGET raw bytes, or once this old:
 * what a recording holds survives bpfprof (SIGKILL, the OOM killer) up to
 * its last complete block, and a slow recording loses at most this much.
 */
#define BLOCK_MAX_AGE_NS	1000000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static unsigned char *room(struct abuf *b, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap - b->len < n)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	return b->p + b->len;
}

static void put_bytes(struct abuf *b, const void *p, size_t n)
{
	if (n)
		memcpy(room(b, n), p, n);
	b->len += n;
}

static void put_u32(struct abuf *b, uint32_t v)
{
	unsigned char *p = room(b, 4);
	int i;

	for (i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
	b->len += 4;
}

static void put_u64(struct abuf *b, uint64_t v)
{
	unsigned char *p = room(b, 8);
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
	b->len += 8;
}

/* Longer strings are cut: the reader refuses anything above the limit. */
static void put_str(struct abuf *b, const char *s)
{
	size_t n;

	if (!s) {
		put_u32(b, ARCHIVE_STR_NULL);
		return;
	}
	n = strnlen(s, ARCHIVE_MAX_STR);
	put_u32(b, n);
	put_bytes(b, s, n);
}

static void put_varint(struct abuf *b, uint64_t v)
{
	b->len += varint_put(room(b, 10), v);
}

static int write_raw(struct archive_writer *a, const void *p, size_t n)
{

	if (n && fwrite(p, 1, n, a->out) != n)
		return errno ? -errno : -EIO;
	a->crc = crc32(a->crc, p, n);
	return 0;
}

static int write_section(struct archive_writer *a, uint32_t type, uint32_t flags, const void *payload,
			 size_t len)
{
	unsigned char hdr[ARCHIVE_SEC_HDR_LEN];
	int i, err;

	for (i = 0; i < 4; i++) {
		hdr[i] = type >> (8 * i);
		hdr[4 + i] = flags >> (8 * i);
	}
	for (i = 0; i < 8; i++)
		hdr[8 + i] = (uint64_t)len >> (8 * i);
	err = write_raw(a, hdr, sizeof(hdr));
	if (!err)
		err = write_raw(a, payload, len);
	a->nsections++;
	return err;
}

static void table_start(struct abuf *b, size_t first, size_t count, uint32_t fixed)
{
	b->len = 0;
	put_u32(b, first);
	put_u32(b, count);
	put_u32(b, fixed);
	put_u32(b, 0);
}

static int write_header(struct archive_writer *a, const struct bp_session *s)
{
	struct abuf *b = &a->tab;

	b->len = 0;
	put_u32(b, ARCHIVE_HEADER_FIXED);
	put_u64(b, s->t0);
	put_u64(b, (uint64_t)s->realtime_offset);
	put_str(b, s->cmdline);
	put_str(b, s->hostname);
	put_str(b, s->kernel);
	a->header_done = true;
	return write_section(a, ARCHIVE_SEC_HEADER, 0, b->p, b->len);
}

/*
 * 1.3: the typed signatures of the functions just written (model/argsig.h),
 * in a section of their own that older readers skip: u32 count, then rows of
 * u32 func, string sig.
 */
static int write_sigs(struct archive_writer *a, const struct bp_session *s)
{
	struct abuf *b = &a->tab;
	uint32_t n = 0;
	size_t i;

	for (i = a->nfuncs; i < s->nfuncs; i++)
		n += s->funcs[i].sig != NULL;
	if (!n)
		return 0;
	b->len = 0;
	put_u32(b, n);
	for (i = a->nfuncs; i < s->nfuncs; i++) {
		if (!s->funcs[i].sig)
			continue;
		put_u32(b, (uint32_t)i);
		put_str(b, s->funcs[i].sig);
	}
	return write_section(a, ARCHIVE_SEC_SIGS, 0, b->p, b->len);
}

/* 1.4: BUILDIDS, the build-ids set since the last call (a module's may come after it). */
static int write_build_ids(struct archive_writer *a, const struct bp_session *s)
{
	struct abuf *b = &a->tab;
	uint32_t n = 0;
	size_t i;

	if (s->nmodules > a->nbid_done) {
		a->bid_done = xrealloc(a->bid_done, s->nmodules * sizeof(*a->bid_done));
		memset(a->bid_done + a->nbid_done, 0, s->nmodules - a->nbid_done);
		a->nbid_done = s->nmodules;
	}
	for (i = 0; i < s->nmodules; i++)
		n += s->modules[i].build_id && !a->bid_done[i];
	if (!n)
		return 0;
	b->len = 0;
	put_u32(b, n);
	for (i = 0; i < s->nmodules; i++) {
		if (!s->modules[i].build_id || a->bid_done[i])
			continue;
		put_u32(b, (uint32_t)i);
		put_str(b, s->modules[i].build_id);
		a->bid_done[i] = true;
	}
	return write_section(a, ARCHIVE_SEC_BUILDIDS, 0, b->p, b->len);
}

/* The table entries added since the last call: before a block that may use them. */
static int write_table_deltas(struct archive_writer *a, const struct bp_session *s)
{
	struct abuf *b = &a->tab;
	size_t i;
	int err;

	if (s->nmodules > a->nmodules) {
		table_start(b, a->nmodules, s->nmodules - a->nmodules, ARCHIVE_MODULE_FIXED);
		for (i = a->nmodules; i < s->nmodules; i++)
			put_str(b, s->modules[i].path);
		err = write_section(a, ARCHIVE_SEC_MODULES, 0, b->p, b->len);
		if (err)
			return err;
		a->nmodules = s->nmodules;
	}
	if (s->nfuncs > a->nfuncs) {
		table_start(b, a->nfuncs, s->nfuncs - a->nfuncs, ARCHIVE_FUNC_FIXED);
		for (i = a->nfuncs; i < s->nfuncs; i++) {
			const struct bp_func *f = &s->funcs[i];

			put_u32(b, f->module);
			put_u32(b, f->flags);
			put_u64(b, f->addr);
			put_u64(b, f->size);
			put_u64(b, f->offset);
			put_u32(b, (uint32_t)f->nparams);
			put_u32(b, f->line);
			put_str(b, f->name);
			put_str(b, f->file);
		}
		err = write_section(a, ARCHIVE_SEC_FUNCS, 0, b->p, b->len);
		if (err)
			return err;
		err = write_sigs(a, s);
		if (err)
			return err;
		a->nfuncs = s->nfuncs;
	}
	/* paths[0] is the root every reader creates itself. */
	if (a->npaths < 1)
		a->npaths = 1;
	if (s->npaths > a->npaths) {
		table_start(b, a->npaths, s->npaths - a->npaths, ARCHIVE_PATH_FIXED);
		for (i = a->npaths; i < s->npaths; i++) {
			put_u32(b, s->paths[i].parent);
			put_u32(b, s->paths[i].func);
		}
		err = write_section(a, ARCHIVE_SEC_PATHS, 0, b->p, b->len);
		if (err)
			return err;
		a->npaths = s->npaths;
	}
	/* last: a reader's open reads the tables up to the first other section */
	return write_build_ids(a, s);
}

static int flush_block(struct archive_writer *a, const struct bp_session *s)
{
	struct abuf *z = &a->tab;
	uLongf zlen;
	uint32_t flags = ARCHIVE_SEC_ZLIB;
	int err;

	if (!a->header_done) {
		err = write_header(a, s);
		if (err)
			return err;
	}
	err = write_table_deltas(a, s);
	if (err || !a->blk_events)
		return err;

	z->len = 0;
	put_u32(z, a->blk.len);
	put_u32(z, a->blk_events);
	zlen = compressBound(a->blk.len);
	room(z, zlen);
	/* Level 1: most of the size gain for a fraction of the time of level 6. */
	if (compress2(z->p + z->len, &zlen, a->blk.p, a->blk.len, 1) == Z_OK &&
	    zlen < a->blk.len && (uint64_t)zlen * ARCHIVE_MAX_RATIO >= a->blk.len) {
		z->len += zlen;
	} else {
		flags = 0;
		put_bytes(z, a->blk.p, a->blk.len);
	}
	err = write_section(a, ARCHIVE_SEC_EVENTS, flags, z->p, z->len);
	/* Into the file now, not when stdio's buffer fills: see BLOCK_MAX_AGE_NS. */
	if (!err && fflush(a->out))
		err = errno ? -errno : -EIO;
	a->flushed_ns = mono_ns();
	a->blk.len = 0;
	a->blk_events = 0;
	memset(&a->prev, 0, sizeof(a->prev));
	return err;
}

int archive_writer__new(FILE *out, struct archive_writer **w)
{
	struct archive_writer *a = xcalloc(1, sizeof(*a));
	unsigned char hdr[ARCHIVE_FILE_HDR_LEN] = { 0 };
	int err;

	a->out = out;

	memcpy(hdr, ARCHIVE_MAGIC, ARCHIVE_MAGIC_LEN);
	hdr[8] = ARCHIVE_MAJOR & 0xff;
	hdr[9] = ARCHIVE_MAJOR >> 8;
	hdr[10] = ARCHIVE_MINOR & 0xff;
	hdr[11] = ARCHIVE_MINOR >> 8;
	a->crc = crc32(0, NULL, 0);
	err = write_raw(a, hdr, sizeof(hdr));
	if (err) {
		archive_writer__free(a);
		a = NULL;
	}
	*w = a;
	return err;
}

static void put_bytes_str(struct abuf *b, const char *s);

/* Fields in the order the format lists them (format.h), as varints. */
static void put_varints(struct abuf *b, const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		put_varint(b, v[i]);
}

static void encode_call(struct archive_writer *a, const struct bp_call *c, struct abuf *b)
{
	const uint64_t v[] = {
		zigzag((int64_t)(c->id - a->prev.id)), c->parent_id ? c->id - c->parent_id : 0,
		zigzag((int64_t)(c->begin - a->prev.ts)), c->end - c->begin,
		(c->end - c->begin) - c->self,	/* 0 for every leaf, small for most callers */
		zigzag((int64_t)c->pid - a->prev.pid), zigzag((int64_t)c->tid - a->prev.tid),
		c->func, c->depth, c->flags, c->path,
	};

	put_varints(b, v, sizeof(v) / sizeof(v[0]));
	/* --args: the registers, only when recorded (the flags say so) */
	if (c->flags & BP_CALL_HAS_ARGS)
		for (int i = 0; i < 6; i++)
			put_varint(b, c->args[i]);
	if (c->flags & BP_CALL_HAS_RET)
		put_varint(b, c->ret);
	if (c->flags & BP_CALL_HAS_INFOS) {
		uint32_t i, n = c->ninfos < ARCHIVE_MAX_INFOS ? c->ninfos : ARCHIVE_MAX_INFOS;

		put_varint(b, n);
		for (i = 0; i < n; i++) {
			put_bytes_str(b, c->infos[i].key);
			put_varint(b, c->infos[i].is_str);
			if (c->infos[i].is_str)
				put_bytes_str(b, c->infos[i].str);
			else
				put_varint(b, zigzag(c->infos[i].value));
		}
	}
	/* after the infos, so that a 1.2 reader skips it as bytes it does not know */
	if (c->flags & BP_CALL_HAS_XARGS) {
		for (int i = 0; i < BP_ARGX_STACK; i++)
			put_varint(b, c->x.stack[i]);
		put_varint(b, c->flags & BP_CALL_HAS_RET ? c->x.ret2 : 0);
		for (int i = 0; i < BP_ARGX_NSTR; i++) {
			put_varint(b, c->x.str_slot[i]);
			put_varint(b, c->x.str_state[i]);
			put_bytes_str(b, c->x.str_slot[i] == BP_ARGX_NONE ? "" : c->x.str[i]);
		}
		if (c->flags & BP_CALL_HAS_XMM) {
			put_varint(b, c->x.xmm_mask);
			for (int i = 0; i < BP_ARGX_XMM; i++)
				if (c->x.xmm_mask & (1u << i))
					put_varint(b, c->x.xmm[i]);
		}
	}
	/* last, where a reader that does not know it stops */
	if (c->flags & BP_CALL_IN_TASK)
		put_varint(b, c->id - c->task);
	a->prev.id = c->id;
	a->prev.ts = c->begin;
	a->prev.pid = c->pid;
	a->prev.tid = c->tid;
}

/* A short string inside an event: varint length, bytes. */
static void put_bytes_str(struct abuf *b, const char *s)
{
	size_t n = strnlen(s, 64);	/* every event string field is char[64] */

	put_varint(b, n);
	put_bytes(b, s, n);
}

static void encode_annot(struct archive_writer *a, const struct bp_annot *an, struct abuf *b)
{
	const uint64_t v[] = {
		zigzag((int64_t)(an->ts - a->prev.ts)), an->pid, an->tid, an->kind, an->call,
		zigzag(an->value), an->nargs,
	};
	uint32_t i;

	put_varints(b, v, sizeof(v) / sizeof(v[0]));
	for (i = 0; i < an->nargs && i < 6; i++)
		put_varint(b, zigzag(an->args[i]));
	put_bytes_str(b, an->name);
	/* after the name, where a reader that does not know them stops: string arguments */
	if (an->str_args) {
		put_varint(b, an->str_args);
		for (i = 0; i < 2 && i < (uint32_t)__builtin_popcount(an->str_args); i++)
			put_bytes_str(b, an->strs[i]);
	}
	a->prev.ts = an->ts;
}

static void encode_loss(struct archive_writer *a, const struct bp_loss *l, struct abuf *b)
{
	const uint64_t v[] = { zigzag((int64_t)(l->ts - a->prev.ts)), l->count, l->cpu };

	put_varints(b, v, sizeof(v) / sizeof(v[0]));
	a->prev.ts = l->ts;
}

static void encode_sample(struct archive_writer *a, const struct bp_sample *sm, struct abuf *b)
{
	const uint64_t v[] = {
		zigzag((int64_t)(sm->ts - a->prev.ts)), sm->weight,
		zigzag((int64_t)sm->pid - a->prev.pid), zigzag((int64_t)sm->tid - a->prev.tid),
		sm->path, sm->cpu, sm->flags,
	};

	put_varints(b, v, sizeof(v) / sizeof(v[0]));
	a->prev.ts = sm->ts;
	a->prev.pid = sm->pid;
	a->prev.tid = sm->tid;
}

static void encode_edge(struct archive_writer *a, const struct bp_edge *ed, struct abuf *b)
{
	const uint64_t v[] = {
		ed->kind, ed->src_call, ed->dst_call, zigzag((int64_t)(ed->src_ts - a->prev.ts)),
		zigzag((int64_t)(ed->dst_ts - ed->src_ts)), ed->src_pid, ed->src_tid,
		ed->dst_pid, ed->dst_tid, ed->src_func, ed->dst_func, ed->value,
	};

	put_varints(b, v, sizeof(v) / sizeof(v[0]));
	a->prev.ts = ed->src_ts;
}

int archive_writer__event(struct archive_writer *a, const struct bp_session *s, const struct bp_event *ev)
{
	struct abuf *tmp = &a->ev;
	uint32_t kind;

	tmp->len = 0;
	switch (ev->kind) {
	case BP_EV_CALL:
		kind = ARCHIVE_EV_CALL;
		encode_call(a, &ev->call, tmp);
		break;
	case BP_EV_LOSS:
		kind = ARCHIVE_EV_LOSS;
		encode_loss(a, &ev->loss, tmp);
		break;
	case BP_EV_SAMPLE:
		kind = ARCHIVE_EV_SAMPLE;
		encode_sample(a, &ev->sample, tmp);
		break;
	case BP_EV_EDGE:
		kind = ARCHIVE_EV_EDGE;
		encode_edge(a, &ev->edge, tmp);
		break;
	case BP_EV_ANNOT:
		kind = ARCHIVE_EV_ANNOT;
		encode_annot(a, &ev->annot, tmp);
		break;
	default:
		/* A kind without an encoding yet: an old writer simply has none. */
		return 0;
	}
	put_varint(&a->blk, kind);
	put_varint(&a->blk, tmp->len);
	put_bytes(&a->blk, tmp->p, tmp->len);
	a->blk_events++;
	a->nevents++;
	if (a->blk.len >= ARCHIVE_BLOCK_TARGET)
		return flush_block(a, s);
	/* the clock every 256 events: ~0.1 ns an event */
	if (!(a->blk_events & 255) || a->blk_events == 1) {
		uint64_t now = mono_ns();

		if (!a->flushed_ns)
			a->flushed_ns = now;
		else if (now - a->flushed_ns >= BLOCK_MAX_AGE_NS)
			return flush_block(a, s);
	}
	return 0;
}

int archive_writer__end(struct archive_writer *a, const struct bp_session *s)
{
	const uint64_t *const counters[ARCHIVE_NCOUNTERS] = ARCHIVE_COUNTERS(s);
	struct abuf *b = &a->tab;
	size_t i;
	int err;

	err = flush_block(a, s);
	if (err)
		return err;

	table_start(b, 0, s->nthreads, ARCHIVE_THREAD_FIXED);
	for (i = 0; i < s->nthreads; i++) {
		const struct bp_thread *t = &s->threads[i];

		put_u32(b, t->tid);
		put_u32(b, t->pid);
		put_u64(b, t->first_ts);
		put_u64(b, t->last_ts);
		put_u32(b, t->exited);
		put_u32(b, 0);
		put_bytes(b, t->name, sizeof(t->name));
	}
	err = write_section(a, ARCHIVE_SEC_THREADS, 0, b->p, b->len);
	if (err)
		return err;

	table_start(b, 0, s->nprocs, ARCHIVE_PROC_FIXED);
	for (i = 0; i < s->nprocs; i++) {
		put_u32(b, s->procs[i].pid);
		put_u32(b, s->procs[i].ppid);
		put_str(b, s->procs[i].name);
	}
	err = write_section(a, ARCHIVE_SEC_PROCS, 0, b->p, b->len);
	if (err)
		return err;

	b->len = 0;
	put_u64(b, s->lost_total);
	put_u32(b, s->lost_per_cpu ? s->ncpus : 0);
	put_u32(b, 0);
	for (i = 0; s->lost_per_cpu && i < s->ncpus; i++)
		put_u64(b, s->lost_per_cpu[i]);
	err = write_section(a, ARCHIVE_SEC_LOSSES, 0, b->p, b->len);
	if (err)
		return err;

	b->len = 0;
	put_u32(b, ARCHIVE_NCOUNTERS);
	put_u32(b, 0);
	for (i = 0; i < ARCHIVE_NCOUNTERS; i++)
		put_u64(b, *counters[i]);
	put_str(b, s->timing);	/* 1.2: how durations were measured (NULL: the raw clock) */
	err = write_section(a, ARCHIVE_SEC_COUNTERS, 0, b->p, b->len);
	if (err)
		return err;

	/* The checksum covers everything before END, so END is built last. */
	b->len = 0;
	put_u64(b, a->nsections);
	put_u64(b, a->nevents);
	put_u32(b, a->crc);
	put_u32(b, 0);
	return write_section(a, ARCHIVE_SEC_END, 0, b->p, b->len);
}

void archive_writer__free(struct archive_writer *a)
{
	if (!a)
		return;
	free(a->bid_done);
	free(a->blk.p);
	free(a->tab.p);
	free(a->ev.p);
	free(a);
}
