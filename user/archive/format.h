/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The .bpfprof byte layout shared by the writer (writer.c, where
 * the layout is documented) and the reader (reader.c): constants, the
 * limits a reader enforces, and the varint coding of events.
 *
 * The writer never produces what the reader would reject: both sides use the
 * limits below.
 */
#ifndef BPFPROF_ARCHIVE_FMT_H
#define BPFPROF_ARCHIVE_FMT_H

#include <stddef.h>
#include <stdint.h>

/* 0x89 first, like PNG: not ASCII, so no text file starts this way. */
#define ARCHIVE_MAGIC		"\x89" "BPFPROF"
#define ARCHIVE_MAGIC_LEN	8
#define ARCHIVE_FILE_HDR_LEN	16	/* magic, u16 major, u16 minor, u32 flags */
#define ARCHIVE_SEC_HDR_LEN	16	/* u32 type, u32 flags, u64 length */

/* A new major version is unreadable by older readers; a minor one only adds. */
#define ARCHIVE_MAJOR		1
#define ARCHIVE_MINOR		4	/* 1: samples, edges, call arguments and infos, annotations, file:line; 2: timing note;
				 * 3: typed signatures (SIGS), stack words, rdx and strings of calls;
				 * 4: modules' build-ids (BUILDIDS) */

enum archive_section {
	ARCHIVE_SEC_HEADER = 1,
	ARCHIVE_SEC_MODULES = 2,
	ARCHIVE_SEC_FUNCS = 3,
	ARCHIVE_SEC_PATHS = 4,
	ARCHIVE_SEC_EVENTS = 5,
	ARCHIVE_SEC_THREADS = 6,
	ARCHIVE_SEC_PROCS = 7,
	ARCHIVE_SEC_LOSSES = 8,
	ARCHIVE_SEC_COUNTERS = 9,
	ARCHIVE_SEC_SIGS = 10,	/* 1.3: rows u32 func, string sig (model/argsig.h) */
	ARCHIVE_SEC_BUILDIDS = 11,	/* 1.4: u32 n, rows u32 module, string build-id (hex) */
	ARCHIVE_SEC_END = 0x454e44,	/* "END" */
};

#define ARCHIVE_SEC_ZLIB	0x1	/* section flag: payload after its 8-byte prefix is zlib */

/* Event kinds inside an events block: the wire tags, not enum bp_event_kind. */
#define ARCHIVE_EV_CALL		1
#define ARCHIVE_EV_LOSS		2
#define ARCHIVE_EV_SAMPLE	3
#define ARCHIVE_EV_EDGE		4
#define ARCHIVE_EV_ANNOT	5
#define ARCHIVE_MAX_INFOS	256	/* BPFPROF_INFOs of one call */

/* Fixed part of one table record; a reader skips what follows the fields it knows. */
#define ARCHIVE_MODULE_FIXED	0
#define ARCHIVE_FUNC_FIXED	40	/* module flags addr size offset nparams line; then name, file */
#define ARCHIVE_FUNC_FIXED_1_0	32	/* 1.0: no nparams, line; only the name */
#define ARCHIVE_PATH_FIXED	8
#define ARCHIVE_THREAD_FIXED	48
#define ARCHIVE_PROC_FIXED	8
#define ARCHIVE_HEADER_FIXED	16
#define ARCHIVE_NCOUNTERS	15

/* u32 length of a NULL string (as opposed to an empty one). */
#define ARCHIVE_STR_NULL	0xffffffffu

/*
 * Limits.  Far above anything a recording produces, low enough that a
 * hostile file cannot make the reader allocate without bound.
 */
#define ARCHIVE_MAX_STR		(64u << 10)
#define ARCHIVE_MAX_BUILD_ID	128	/* hex digits (64 bytes: above any linker's) */
#define ARCHIVE_MAX_MODULES	(1u << 16)
#define ARCHIVE_MAX_FUNCS	(1u << 24)
#define ARCHIVE_MAX_PATHS	(1u << 26)
#define ARCHIVE_MAX_THREADS	(1u << 22)
#define ARCHIVE_MAX_PROCS	(1u << 22)
#define ARCHIVE_MAX_CPUS	(1u << 16)
#define ARCHIVE_MAX_BLOCK	(16u << 20)	/* decompressed events block */
#define ARCHIVE_MAX_EVENT	(1u << 16)	/* one encoded event */
#define ARCHIVE_BLOCK_TARGET	(256u << 10)	/* the writer flushes at this size */
/*
 * An events block inflates at most this many times its zlib stream.  The
 * writer's blocks (zlib level 1 over varints whose times always differ)
 * inflate about 3-fold; a zlib bomb about 1000-fold, which made a small
 * hostile file cost minutes of skipping empty events.
 */
#define ARCHIVE_MAX_RATIO	64u

/*
 * The COUNTERS section's order, written and read from this one list (a
 * counter added goes at the end; ARCHIVE_NCOUNTERS follows).
 */
#define ARCHIVE_COUNTERS(s) { \
	&(s)->duration, &(s)->nrecords, &(s)->ncalls, &(s)->nunfinished, \
	&(s)->nno_entry, &(s)->nunwound, &(s)->nno_retprobe, &(s)->nexceptions, \
	&(s)->nsamples, &(s)->noffcpu, &(s)->ntruncated, \
	&(s)->nedges[0], &(s)->nedges[1], &(s)->nedges[2], &(s)->nedges[3], \
}

/* Delta coding state of an events block; reset at each block start. */
struct archive_delta {
	uint64_t id;
	uint64_t ts;
	uint32_t pid;
	uint32_t tid;
};

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* LEB128: 7 bits a byte, low first; at most 10 bytes for a u64.  Returns bytes written. */
static inline size_t varint_put(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* Returns bytes read, or 0 for a varint that is cut short or longer than 10 bytes. */
static inline size_t varint_get(const unsigned char *p, size_t avail, uint64_t *v)
{
	uint64_t x = 0;
	size_t n;

	for (n = 0; n < avail && n < 10; n++) {
		x |= (uint64_t)(p[n] & 0x7f) << (7 * n);
		if (!(p[n] & 0x80)) {
			*v = x;
			return n + 1;
		}
	}
	return 0;
}

#endif
