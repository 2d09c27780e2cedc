/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The archive reader's state, shared by reader.c (file, sections), tables.c
 * (the tables) and events.c (event blocks).  Not for use outside user/archive/.
 */
#ifndef BPFPROF_ARCHIVE_INTERNAL_H
#define BPFPROF_ARCHIVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "archive.h"
#include "format.h"

struct archive_reader {
	FILE *f;
	char *path;
	struct bp_session *s;
	uint64_t off;		/* bytes consumed */
	uint64_t fsize;		/* regular files: the size, to tell truncation at once */
	bool sized;
	uint32_t crc;		/* of every byte consumed */
	uint64_t nsections;	/* sections before END */
	uint64_t nevents;	/* events announced by the block headers */
	bool tables_only;	/* skip event blocks without decoding them */

	/* the section being read */
	uint32_t type, flags;
	uint64_t sec_off;	/* file offset of its header */
	uint64_t left;		/* payload bytes not consumed yet */
	uint32_t crc_before;	/* crc before its header: END checks it */
	bool pending;		/* its header is read, its payload not yet */

	/* the current events block, decompressed */
	unsigned char *blk, *zbuf;
	size_t blk_cap, zbuf_cap;
	size_t blk_len, blk_pos;
	uint32_t blk_events, blk_seen;
	struct archive_delta prev;

	struct bp_info infos[ARCHIVE_MAX_INFOS];	/* the current call's, valid until the next */

	bool partial;		/* archive__open's: an unfinished recording is read */
	bool header_seen;
	bool done;		/* END read and checked, or (partial) the cut reached */
	bool cut;		/* partial: the file ends without END */
	int err;		/* sticky: the first error */
};

/*
 * Prints "FILE: WHAT (details)" once and makes the error sticky; returns it.
 * `cut`: the file ends too early, which for a partial reader (past the
 * header) is the end of an unfinished recording: -ECANCELED,
 * which archive__next() turns into the end.
 */
int archive_fail(struct archive_reader *r, bool cut, int err, const char *what,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
#define truncated(r, ...) archive_fail(r, true, -EBADMSG, "truncated archive", __VA_ARGS__)
#define corrupt(r, ...) archive_fail(r, false, -EBADMSG, "corrupt archive", __VA_ARGS__)

/*
 * reader.c's primitives, each checked against what is left of the section:
 * skip n bytes; a little-endian u32 or u64; a string (NULL for none); an
 * array grown for its entry n (doubling); a table section's prefix
 * (appends exactly, fits max and the section); a row's fixed part read
 * (known bytes) and the rest skipped.
 */
/* Little-endian integers of a table row's fixed part. */
static inline uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

struct table_hdr {
	uint32_t first, count, fixed;
};
int archive_sec_skip(struct archive_reader *r, uint64_t n);
int archive_rd_u32(struct archive_reader *r, uint32_t *v);
int archive_rd_u64(struct archive_reader *r, uint64_t *v);
int archive_rd_str(struct archive_reader *r, char **out);
void *archive_grow(void *arr, size_t n, size_t elem);
int archive_rd_table(struct archive_reader *r, size_t have, size_t max, uint32_t known,
		     struct table_hdr *t);
int archive_rd_fixed(struct archive_reader *r, const struct table_hdr *t, void *buf, size_t known);

/* tables.c: the pending section's table (r->type: modules ... counters), read. */
int archive_read_table(struct archive_reader *r);

/* The next section's header; then its body (tables are read, an events block is loaded). */
int archive_read_section_header(struct archive_reader *r);
int archive_read_section_body(struct archive_reader *r);
/* SIGS (sigs.c) */
int archive_read_sigs(struct archive_reader *r);
int archive_read_build_ids(struct archive_reader *r);

#endif
