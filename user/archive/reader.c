// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The .bpfprof archive reader (layout: writer.c).
 *
 * The file is read front to back once, section by section, and never
 * trusted: tables are read record by record straight from the file (an
 * allocation only ever follows bytes that were really there), every count
 * and length is checked against the limits in format.h and against what
 * is left of its section and of the file, and every index an entry or event
 * carries is checked against the table it points into.  The first problem
 * prints one line and is returned by every later call.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include "archive.h"
#include "format.h"
#include "base/log.h"

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

	bool header_seen;
	bool done;		/* END read and checked */
	int err;		/* sticky: the first error */
};

static const char *sec_name(uint32_t type)
{
	switch (type) {
	case ARCHIVE_SEC_HEADER: return "header";
	case ARCHIVE_SEC_MODULES: return "modules";
	case ARCHIVE_SEC_FUNCS: return "functions";
	case ARCHIVE_SEC_PATHS: return "call paths";
	case ARCHIVE_SEC_EVENTS: return "events";
	case ARCHIVE_SEC_THREADS: return "threads";
	case ARCHIVE_SEC_PROCS: return "processes";
	case ARCHIVE_SEC_LOSSES: return "losses";
	case ARCHIVE_SEC_COUNTERS: return "counters";
	case ARCHIVE_SEC_END: return "end";
	default: return "unknown";
	}
}

static int fail(struct archive_reader *r, int err, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Prints "FILE: WHAT (details)" once and makes the error sticky. */
static int fail(struct archive_reader *r, int err, const char *what, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (r->err)
		return r->err;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p_err("%s: %s (%s)", r->path, what, msg);
	r->err = err;
	return err;
}

#define truncated(r, ...) fail(r, -EBADMSG, "truncated archive", __VA_ARGS__)
#define corrupt(r, ...) fail(r, -EBADMSG, "corrupt archive", __VA_ARGS__)

/* Exactly n bytes of the file, or a truncation error. */
static int fill(struct archive_reader *r, void *dst, size_t n)
{
	size_t got = n ? fread(dst, 1, n, r->f) : 0;

	r->crc = crc32(r->crc, dst, got);
	r->off += got;
	if (got == n)
		return 0;
	if (ferror(r->f))
		return fail(r, -EIO, "cannot read", "%s", strerror(errno ? errno : EIO));
	return truncated(r, "the %s section at byte %" PRIu64 " is cut short at byte %" PRIu64,
			 sec_name(r->type), r->sec_off, r->off);
}

/* n bytes of the current section's payload. */
static int sec_read(struct archive_reader *r, void *dst, size_t n)
{
	if (n > r->left)
		return corrupt(r, "a record runs past the end of the %s section at byte %" PRIu64,
			       sec_name(r->type), r->sec_off);
	r->left -= n;
	return fill(r, dst, n);
}

static int sec_skip(struct archive_reader *r, uint64_t n)
{
	unsigned char buf[16384];
	int err;

	while (n) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);

		err = sec_read(r, buf, k);
		if (err)
			return err;
		n -= k;
	}
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static int rd_u32(struct archive_reader *r, uint32_t *v)
{
	unsigned char b[4];
	int err = sec_read(r, b, 4);

	if (!err)
		*v = le32(b);
	return err;
}

static int rd_u64(struct archive_reader *r, uint64_t *v)
{
	unsigned char b[8];
	int err = sec_read(r, b, 8);

	if (!err)
		*v = le64(b);
	return err;
}

/* A string, or NULL when the file says NULL (*out is NULL on error too). */
static int rd_str(struct archive_reader *r, char **out)
{
	uint32_t n;
	char *s;
	int err;

	*out = NULL;
	err = rd_u32(r, &n);
	if (err || n == ARCHIVE_STR_NULL)
		return err;
	if (n > ARCHIVE_MAX_STR)
		return corrupt(r, "a string of %" PRIu32 " bytes in the %s section at byte %" PRIu64,
			       n, sec_name(r->type), r->sec_off);
	s = xmalloc(n + 1);
	err = sec_read(r, s, n);
	if (err) {
		free(s);
		return err;
	}
	s[n] = '\0';
	*out = s;
	return 0;
}

/*
 * session.c grows its arrays by doubling when the count is a power of two;
 * appending the same way keeps session__process() and friends valid on the
 * tables read here.
 */
static void *grow(void *arr, size_t n, size_t elem)
{
	if (n == 0 || (n & (n - 1)) == 0)
		arr = xrealloc(arr, (n ? n * 2 : 8) * elem);
	return arr;
}

struct table_hdr {
	uint32_t first, count, fixed;
};

/* A table section's prefix, checked: appends exactly, fits the limit, fits the section. */
static int rd_table(struct archive_reader *r, size_t have, size_t max, uint32_t known,
		    struct table_hdr *t)
{
	uint32_t reserved;
	int err;

	err = rd_u32(r, &t->first);
	if (!err)
		err = rd_u32(r, &t->count);
	if (!err)
		err = rd_u32(r, &t->fixed);
	if (!err)
		err = rd_u32(r, &reserved);
	if (err)
		return err;
	if (t->first != have)
		return corrupt(r, "the %s section at byte %" PRIu64 " starts at entry %" PRIu32
			       ", expected %zu", sec_name(r->type), r->sec_off, t->first, have);
	if (t->count > max - have)
		return corrupt(r, "%" PRIu32 " more %s, more than %zu in all",
			       t->count, sec_name(r->type), max);
	if (t->fixed < known || t->fixed > 4096)
		return corrupt(r, "%s entries of %" PRIu32 " bytes", sec_name(r->type), t->fixed);
	/* Each record needs at least its fixed part: a cheap bound on the loop. */
	if ((uint64_t)t->count * (t->fixed ? t->fixed : 4) > r->left)
		return corrupt(r, "%" PRIu32 " %s do not fit in the section at byte %" PRIu64,
			       t->count, sec_name(r->type), r->sec_off);
	return 0;
}

/* Reads a record's fixed part into buf (known bytes) and skips the rest. */
static int rd_fixed(struct archive_reader *r, const struct table_hdr *t, void *buf, size_t known)
{
	int err = sec_read(r, buf, known);

	return err ? err : sec_skip(r, t->fixed - known);
}

static int read_header(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	unsigned char b[ARCHIVE_HEADER_FIXED];
	uint32_t fixed;
	int err;

	if (r->header_seen)
		return corrupt(r, "a second header section at byte %" PRIu64, r->sec_off);
	r->header_seen = true;
	err = rd_u32(r, &fixed);
	if (err)
		return err;
	if (fixed < ARCHIVE_HEADER_FIXED || fixed > 4096)
		return corrupt(r, "a header of %" PRIu32 " bytes", fixed);
	err = sec_read(r, b, sizeof(b));
	if (!err)
		err = sec_skip(r, fixed - sizeof(b));
	if (err)
		return err;
	s->t0 = le64(b);
	s->realtime_offset = (int64_t)le64(b + 8);
	err = rd_str(r, &s->cmdline);
	if (!err)
		err = rd_str(r, &s->hostname);
	if (!err)
		err = rd_str(r, &s->kernel);
	return err;
}

static int read_modules(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	struct table_hdr t;
	uint32_t i;
	char *path;
	int err;

	err = rd_table(r, s->nmodules, ARCHIVE_MAX_MODULES, ARCHIVE_MODULE_FIXED, &t);
	for (i = 0; !err && i < t.count; i++) {
		err = sec_skip(r, t.fixed);
		if (!err)
			err = rd_str(r, &path);
		if (err)
			break;
		if (!path)
			return corrupt(r, "module %zu has no path", s->nmodules);
		s->modules = grow(s->modules, s->nmodules, sizeof(*s->modules));
		s->modules[s->nmodules++].path = path;
	}
	return err;
}

static int read_funcs(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	unsigned char b[ARCHIVE_FUNC_FIXED];
	struct table_hdr t;
	struct bp_func f;
	uint32_t i, known;
	int err;

	/* 1.0 records are shorter and have no file: known only from the fixed size. */
	err = rd_table(r, s->nfuncs, ARCHIVE_MAX_FUNCS, ARCHIVE_FUNC_FIXED_1_0, &t);
	known = t.fixed < ARCHIVE_FUNC_FIXED ? ARCHIVE_FUNC_FIXED_1_0 : ARCHIVE_FUNC_FIXED;
	for (i = 0; !err && i < t.count; i++) {
		memset(&f, 0, sizeof(f));
		memset(b, 0, sizeof(b));
		put_le32(b + 32, (uint32_t)-1);	/* nparams: unknown */
		err = rd_fixed(r, &t, b, known);
		if (!err)
			err = rd_str(r, &f.name);
		if (!err && known >= ARCHIVE_FUNC_FIXED)
			err = rd_str(r, &f.file);
		if (err) {
			free(f.name);
			break;
		}
		f.module = le32(b);
		f.flags = le32(b + 4);
		f.addr = le64(b + 8);
		f.size = le64(b + 16);
		f.offset = le64(b + 24);
		f.nparams = (int32_t)le32(b + 32);
		f.line = le32(b + 36);
		if (!f.name || f.module >= s->nmodules) {
			free(f.name);
			free(f.file);
			return corrupt(r, "function %zu names module %" PRIu32 " of %zu", s->nfuncs,
				       f.module, s->nmodules);
		}
		s->funcs = grow(s->funcs, s->nfuncs, sizeof(*s->funcs));
		s->funcs[s->nfuncs++] = f;	/* the name is owned by the table now */
	}
	return err;
}

static int read_paths(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	unsigned char b[ARCHIVE_PATH_FIXED];
	struct table_hdr t;
	uint32_t i, parent, func;
	size_t want;
	int err;

	/* The root is implicit: entry 1 is the first a file holds. */
	err = rd_table(r, s->npaths ? s->npaths : 1, ARCHIVE_MAX_PATHS, ARCHIVE_PATH_FIXED, &t);
	for (i = 0; !err && i < t.count; i++) {
		err = rd_fixed(r, &t, b, sizeof(b));
		if (err)
			break;
		parent = le32(b);
		func = le32(b + 4);
		want = s->npaths ? s->npaths : 1;
		/* parent < own index: no cycles, so walking a path always ends. */
		if (parent >= want || func >= s->nfuncs)
			return corrupt(r, "call path %zu is (parent %" PRIu32 ", function %" PRIu32
				       ") with %zu functions", want, parent, func, s->nfuncs);
		/* Interning returns an older node for a duplicate: the indexes would shift. */
		if (session__path(s, parent, func) != want)
			return corrupt(r, "call path %zu repeats an earlier one", want);
	}
	return err;
}

static int read_threads(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	unsigned char b[ARCHIVE_THREAD_FIXED];
	struct bp_thread *th;
	struct table_hdr t;
	uint32_t i, tid;
	int err;

	err = rd_table(r, s->nthreads, ARCHIVE_MAX_THREADS, ARCHIVE_THREAD_FIXED, &t);
	for (i = 0; !err && i < t.count; i++) {
		err = rd_fixed(r, &t, b, sizeof(b));
		if (err)
			break;
		tid = le32(b);
		/* Sorted, so each insert is an append, never a quadratic memmove. */
		if (s->nthreads && tid <= s->threads[s->nthreads - 1].tid)
			return corrupt(r, "thread %" PRIu32 " out of order", tid);
		th = session__thread(s, tid, 0);
		th->pid = le32(b + 4);
		th->first_ts = le64(b + 8);
		th->last_ts = le64(b + 16);
		th->exited = le32(b + 24) != 0;
		memcpy(th->name, b + 32, sizeof(th->name));
	}
	return err;
}

static int read_procs(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	unsigned char b[ARCHIVE_PROC_FIXED];
	struct bp_process *p;
	struct table_hdr t;
	uint32_t i;
	char *name;
	int err;

	err = rd_table(r, s->nprocs, ARCHIVE_MAX_PROCS, ARCHIVE_PROC_FIXED, &t);
	for (i = 0; !err && i < t.count; i++) {
		err = rd_fixed(r, &t, b, sizeof(b));
		if (!err)
			err = rd_str(r, &name);
		if (err)
			break;
		/* Appended, not looked up: session__process() is linear. */
		s->procs = grow(s->procs, s->nprocs, sizeof(*s->procs));
		p = &s->procs[s->nprocs++];
		p->pid = le32(b);
		p->ppid = le32(b + 4);
		p->name = name;
	}
	return err;
}

static int read_losses(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	uint32_t ncpus, reserved, i;
	uint64_t total;
	int err;

	err = rd_u64(r, &total);
	if (!err)
		err = rd_u32(r, &ncpus);
	if (!err)
		err = rd_u32(r, &reserved);
	if (err)
		return err;
	if (ncpus > ARCHIVE_MAX_CPUS || (uint64_t)ncpus * 8 > r->left)
		return corrupt(r, "losses for %" PRIu32 " CPUs", ncpus);
	free(s->lost_per_cpu);
	s->lost_per_cpu = ncpus ? xcalloc(ncpus, sizeof(*s->lost_per_cpu)) : NULL;
	s->ncpus = ncpus;
	s->lost_total = total;
	for (i = 0; !err && i < ncpus; i++)
		err = rd_u64(r, &s->lost_per_cpu[i]);
	return err;
}

static int read_counters(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	uint64_t *dst[ARCHIVE_NCOUNTERS] = {
		&s->duration, &s->nrecords, &s->ncalls, &s->nunfinished,
		&s->nno_entry, &s->nunwound, &s->nno_retprobe, &s->nexceptions,
		&s->nsamples, &s->noffcpu, &s->ntruncated,
		&s->nedges[0], &s->nedges[1], &s->nedges[2], &s->nedges[3],
	};
	uint32_t n, reserved, i;
	int err;

	err = rd_u32(r, &n);
	if (!err)
		err = rd_u32(r, &reserved);
	if (err)
		return err;
	if ((uint64_t)n * 8 > r->left)
		return corrupt(r, "%" PRIu32 " counters do not fit their section", n);
	/* Counters a newer writer added are skipped with the rest of the section. */
	for (i = 0; !err && i < n && i < ARCHIVE_NCOUNTERS; i++)
		err = rd_u64(r, dst[i]);
	return err;
}

static int read_end(struct archive_reader *r)
{
	unsigned char b[24];
	int err, c;

	err = sec_read(r, b, sizeof(b));
	if (err)
		return err;
	if (le64(b) != r->nsections)
		return corrupt(r, "the end section counts %" PRIu64 " sections, the file has %" PRIu64,
			       le64(b), r->nsections);
	if (le64(b + 8) != r->nevents)
		return corrupt(r, "the end section counts %" PRIu64 " events, the blocks %" PRIu64,
			       le64(b + 8), r->nevents);
	if (le32(b + 16) != r->crc_before)
		return corrupt(r, "checksum mismatch: %08" PRIx32 " in the file, %08" PRIx32
			       " computed", le32(b + 16), r->crc_before);
	err = sec_skip(r, r->left);
	if (err)
		return err;
	c = fgetc(r->f);
	if (c != EOF)
		return corrupt(r, "data after the end section at byte %" PRIu64, r->off);
	r->done = true;
	return 0;
}

/* Loads (decompresses) one events block; with tables_only, skips it. */
static int read_events(struct archive_reader *r)
{
	uint32_t raw_len, nevents;
	uLongf dlen;
	size_t clen;
	int err;

	err = rd_u32(r, &raw_len);
	if (!err)
		err = rd_u32(r, &nevents);
	if (err)
		return err;
	/* Every event takes at least 2 bytes (kind, length). */
	if (raw_len > ARCHIVE_MAX_BLOCK || nevents > raw_len / 2)
		return corrupt(r, "an events block of %" PRIu32 " bytes and %" PRIu32 " events",
			       raw_len, nevents);
	r->nevents += nevents;
	if (r->tables_only)
		return sec_skip(r, r->left);

	if (raw_len > r->blk_cap) {
		free(r->blk);
		r->blk = xmalloc(raw_len);
		r->blk_cap = raw_len;
	}
	if (r->flags & ARCHIVE_SEC_ZLIB) {
		clen = r->left;
		if (clen > compressBound(ARCHIVE_MAX_BLOCK))
			return corrupt(r, "a compressed events block of %zu bytes", clen);
		if (clen > r->zbuf_cap) {
			free(r->zbuf);
			r->zbuf = xmalloc(clen);
			r->zbuf_cap = clen;
		}
		err = sec_read(r, r->zbuf, clen);
		if (err)
			return err;
		dlen = raw_len;
		if (uncompress(r->blk, &dlen, r->zbuf, clen) != Z_OK || dlen != raw_len)
			return corrupt(r, "the events block at byte %" PRIu64 " does not decompress",
				       r->sec_off);
	} else {
		if (r->left != raw_len)
			return corrupt(r, "the events block at byte %" PRIu64 " is %" PRIu64
				       " bytes, not %" PRIu32, r->sec_off, r->left, raw_len);
		err = sec_read(r, r->blk, raw_len);
		if (err)
			return err;
	}
	r->blk_len = raw_len;
	r->blk_pos = 0;
	r->blk_events = nevents;
	r->blk_seen = 0;
	memset(&r->prev, 0, sizeof(r->prev));
	return 0;
}

/* The next section's header; at the end of the file without END: truncated. */
static int read_section_header(struct archive_reader *r)
{
	unsigned char b[ARCHIVE_SEC_HDR_LEN];
	size_t got;

	r->crc_before = r->crc;
	r->sec_off = r->off;
	got = fread(b, 1, sizeof(b), r->f);
	r->crc = crc32(r->crc, b, got);
	r->off += got;
	if (got < sizeof(b)) {
		if (ferror(r->f))
			return fail(r, -EIO, "cannot read", "%s", strerror(errno ? errno : EIO));
		if (got == 0)
			return truncated(r, "it ends at byte %" PRIu64 " without an end section",
					 r->off);
		return truncated(r, "a section header at byte %" PRIu64 " is cut short",
				 r->sec_off);
	}
	r->type = le32(b);
	r->flags = le32(b + 4);
	r->left = le64(b + 8);
	r->pending = true;
	if (r->sized && r->left > r->fsize - r->off)
		return truncated(r, "the %s section at byte %" PRIu64 " needs %" PRIu64
				 " bytes, the file ends %" PRIu64 " bytes into it", sec_name(r->type),
				 r->sec_off, r->left, r->fsize - r->off);
	if (!r->header_seen && r->type != ARCHIVE_SEC_HEADER)
		return corrupt(r, "the first section is %s (type %#" PRIx32 "), not the header",
			       sec_name(r->type), r->type);
	return 0;
}

/* Reads and applies the pending section's payload. */
static int read_section_body(struct archive_reader *r)
{
	int err;

	r->pending = false;
	if (r->type != ARCHIVE_SEC_END)
		r->nsections++;
	if ((r->flags & ARCHIVE_SEC_ZLIB) && r->type != ARCHIVE_SEC_EVENTS &&
	    r->type <= ARCHIVE_SEC_COUNTERS)
		return corrupt(r, "the %s section at byte %" PRIu64 " claims to be compressed",
			       sec_name(r->type), r->sec_off);
	switch (r->type) {
	case ARCHIVE_SEC_HEADER:
		err = read_header(r);
		break;
	case ARCHIVE_SEC_MODULES:
		err = read_modules(r);
		break;
	case ARCHIVE_SEC_FUNCS:
		err = read_funcs(r);
		break;
	case ARCHIVE_SEC_PATHS:
		err = read_paths(r);
		break;
	case ARCHIVE_SEC_EVENTS:
		return read_events(r);
	case ARCHIVE_SEC_THREADS:
		err = read_threads(r);
		break;
	case ARCHIVE_SEC_PROCS:
		err = read_procs(r);
		break;
	case ARCHIVE_SEC_LOSSES:
		err = read_losses(r);
		break;
	case ARCHIVE_SEC_COUNTERS:
		err = read_counters(r);
		break;
	case ARCHIVE_SEC_END:
		return read_end(r);
	default:
		/* A section from a newer writer: what it says is not ours to know. */
		err = 0;
		break;
	}
	/* Fields a newer minor version appended to a known section. */
	return err ? err : sec_skip(r, r->left);
}

/* One varint of an event payload; false when it is cut short. */
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
			err = read_section_header(r);
			if (err)
				return err;
		}
		err = read_section_body(r);
		if (err)
			return err;
	}
}

static void reader_free(struct archive_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	free(r->blk);
	free(r->zbuf);
	free(r->path);
	free(r);
}

static int reader_open(const char *path, struct bp_session *s, bool tables_only,
		       struct archive_reader **out)
{
	unsigned char hdr[ARCHIVE_FILE_HDR_LEN];
	struct archive_reader *r;
	unsigned major, minor;
	struct stat st;
	size_t got;
	int err;

	*out = NULL;
	session__init(s);
	r = xcalloc(1, sizeof(*r));
	r->path = xstrdup(path);
	r->s = s;
	r->tables_only = tables_only;
	r->crc = crc32(0, NULL, 0);
	r->f = fopen(path, "rb");
	if (!r->f) {
		err = -errno;
		p_err("cannot read %s: %s", path, strerror(-err));
		goto cleanup;
	}
	if (fstat(fileno(r->f), &st) == 0 && S_ISREG(st.st_mode)) {
		r->sized = true;
		r->fsize = st.st_size;
	}
	got = fread(hdr, 1, sizeof(hdr), r->f);
	if (ferror(r->f)) {
		err = -errno;
		p_err("cannot read %s: %s", path, strerror(errno));
		goto cleanup;
	}
	if (got < ARCHIVE_MAGIC_LEN || memcmp(hdr, ARCHIVE_MAGIC, ARCHIVE_MAGIC_LEN)) {
		p_err("%s: not a bpfprof archive", path);
		err = -ENOEXEC;
		goto cleanup;
	}
	r->crc = crc32(r->crc, hdr, got);
	r->off = got;
	if (got < sizeof(hdr)) {
		err = truncated(r, "the file header is cut short");
		goto cleanup;
	}
	major = hdr[8] | hdr[9] << 8;
	minor = hdr[10] | hdr[11] << 8;
	if (major > ARCHIVE_MAJOR) {
		p_err("%s: archive format %u.%u is newer than this bpfprof reads (%u.x): "
		      "upgrade bpfprof", path, major, minor, ARCHIVE_MAJOR);
		err = -ENOTSUP;
		goto cleanup;
	}
	if (major < 1) {
		err = corrupt(r, "format version %u.%u", major, minor);
		goto cleanup;
	}

	/* The header and the tables before the first block (or the end). */
	for (;;) {
		err = read_section_header(r);
		if (err)
			goto cleanup;
		if (r->header_seen && r->type != ARCHIVE_SEC_MODULES &&
		    r->type != ARCHIVE_SEC_FUNCS && r->type != ARCHIVE_SEC_PATHS)
			break;
		err = read_section_body(r);
		if (err)
			goto cleanup;
	}
	*out = r;
	return 0;

cleanup:
	reader_free(r);
	session__free(s);
	return err;
}

int archive__open(const char *path, struct bp_session *s, struct archive_reader **out)
{
	return reader_open(path, s, false, out);
}

void archive__close(struct archive_reader *r)
{
	reader_free(r);
}

int archive__read_tables(const char *path, struct bp_session *s)
{
	struct archive_reader *r;
	struct bp_event ev;
	int err;

	err = reader_open(path, s, true, &r);
	if (err)
		return err;
	while ((err = archive__next(r, &ev)) > 0)
		;
	archive__close(r);
	if (err)
		session__free(s);
	return err;
}

int archive__probe(const char *path)
{
	char magic[ARCHIVE_MAGIC_LEN];
	FILE *f = fopen(path, "rb");
	int ok;

	if (!f)
		return 0;
	ok = fread(magic, 1, sizeof(magic), f) == sizeof(magic) &&
	     !memcmp(magic, ARCHIVE_MAGIC, sizeof(magic));
	fclose(f);
	return ok;
}
