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
#include <unistd.h>
#include <zlib.h>
#include "archive.h"
#include "format.h"
#include "internal.h"
#include "base/json.h"
#include "base/log.h"
#include "base/util.h"


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
	case ARCHIVE_SEC_SIGS: return "signatures";
	case ARCHIVE_SEC_BUILDIDS: return "build-ids";
	case ARCHIVE_SEC_END: return "end";
	default: return "unknown";
	}
}

/*
 * Every error of the reader: printed once, sticky.  A file that ends too
 * early (`cut`) is an error too, except for a partial reader (archive__open)
 * once past the header: then it is the end of what an unfinished recording
 * wrote (bpfprof killed: the writer flushes whole blocks), -ECANCELED, which
 * archive__next() turns into the end.
 */
int archive_fail(struct archive_reader *r, bool cut, int err, const char *what,
		 const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (r->err)
		return r->err;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cut && r->partial && r->header_seen) {
		if (!r->cut)
			p_warn("%s: an unfinished recording (%s): %" PRIu64 " events in its complete "
			       "blocks, no thread names or totals", r->path, msg, r->nevents);
		r->cut = true;
		r->done = true;
		return -ECANCELED;
	}
	/* under --partial already: the cut came before there was anything to read */
	p_err("%s: %s (%s%s)", r->path, what, msg, !cut ? "" : r->partial ?
	      "; nothing for --partial to read: the recording's header is incomplete" :
	      "; if bpfprof was killed while recording it, --partial reads its complete blocks");
	r->err = err;
	return err;
}


/* Exactly n bytes of the file, or a truncation error. */
static int fill(struct archive_reader *r, void *dst, size_t n)
{
	size_t got = n ? fread(dst, 1, n, r->f) : 0;

	r->crc = crc32(r->crc, dst, got);
	r->off += got;
	if (got == n)
		return 0;
	if (ferror(r->f))
		return archive_fail(r, false, -EIO, "cannot read", "%s", strerror(errno ? errno : EIO));
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

int archive_sec_skip(struct archive_reader *r, uint64_t n)
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

int archive_rd_u32(struct archive_reader *r, uint32_t *v)
{
	unsigned char b[4];
	int err = sec_read(r, b, 4);

	if (!err)
		*v = le32(b);
	return err;
}

int archive_rd_u64(struct archive_reader *r, uint64_t *v)
{
	unsigned char b[8];
	int err = sec_read(r, b, 8);

	if (!err)
		*v = le64(b);
	return err;
}

/* A string, or NULL when the file says NULL (*out is NULL on error too). */
int archive_rd_str(struct archive_reader *r, char **out)
{
	uint32_t n;
	char *s;
	int err;

	*out = NULL;
	err = archive_rd_u32(r, &n);
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
void *archive_grow(void *arr, size_t n, size_t elem)
{
	if (n == 0 || (n & (n - 1)) == 0)
		arr = xrealloc(arr, (n ? n * 2 : 8) * elem);
	return arr;
}

/* A table section's prefix, checked: appends exactly, fits the limit, fits the section. */
int archive_rd_table(struct archive_reader *r, size_t have, size_t max, uint32_t known,
		    struct table_hdr *t)
{
	uint32_t reserved;
	int err;

	err = archive_rd_u32(r, &t->first);
	if (!err)
		err = archive_rd_u32(r, &t->count);
	if (!err)
		err = archive_rd_u32(r, &t->fixed);
	if (!err)
		err = archive_rd_u32(r, &reserved);
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
int archive_rd_fixed(struct archive_reader *r, const struct table_hdr *t, void *buf, size_t known)
{
	int err = sec_read(r, buf, known);

	return err ? err : archive_sec_skip(r, t->fixed - known);
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
	err = archive_rd_u32(r, &fixed);
	if (err)
		return err;
	if (fixed < ARCHIVE_HEADER_FIXED || fixed > 4096)
		return corrupt(r, "a header of %" PRIu32 " bytes", fixed);
	err = sec_read(r, b, sizeof(b));
	if (!err)
		err = archive_sec_skip(r, fixed - sizeof(b));
	if (err)
		return err;
	s->t0 = le64(b);
	s->realtime_offset = (int64_t)le64(b + 8);
	err = archive_rd_str(r, &s->cmdline);
	if (!err)
		err = archive_rd_str(r, &s->hostname);
	if (!err)
		err = archive_rd_str(r, &s->kernel);
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
	err = archive_sec_skip(r, r->left);
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

	err = archive_rd_u32(r, &raw_len);
	if (!err)
		err = archive_rd_u32(r, &nevents);
	if (err)
		return err;
	/* Every event takes at least 2 bytes (kind, length). */
	if (raw_len > ARCHIVE_MAX_BLOCK || nevents > raw_len / 2)
		return corrupt(r, "an events block of %" PRIu32 " bytes and %" PRIu32 " events",
			       raw_len, nevents);
	r->nevents += nevents;
	if (r->tables_only)
		return archive_sec_skip(r, r->left);

	if (raw_len > r->blk_cap) {
		free(r->blk);
		r->blk = xmalloc(raw_len);
		r->blk_cap = raw_len;
	}
	if (r->flags & ARCHIVE_SEC_ZLIB) {
		clen = r->left;
		if (clen > compressBound(ARCHIVE_MAX_BLOCK))
			return corrupt(r, "a compressed events block of %zu bytes", clen);
		/* refused before inflating: what a block may cost is bounded by the file's size */
		if ((uint64_t)clen * ARCHIVE_MAX_RATIO < raw_len)
			return corrupt(r, "the events block at byte %" PRIu64 " claims %" PRIu32
				       " bytes from %zu compressed (more than %u-fold: a zlib bomb?)",
				       r->sec_off, raw_len, clen, ARCHIVE_MAX_RATIO);
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
int archive_read_section_header(struct archive_reader *r)
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
			return archive_fail(r, false, -EIO, "cannot read", "%s", strerror(errno ? errno : EIO));
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
int archive_read_section_body(struct archive_reader *r)
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
	case ARCHIVE_SEC_FUNCS:
	case ARCHIVE_SEC_PATHS:
	case ARCHIVE_SEC_THREADS:
	case ARCHIVE_SEC_PROCS:
	case ARCHIVE_SEC_LOSSES:
	case ARCHIVE_SEC_COUNTERS:
		err = archive_read_table(r);
		break;
	case ARCHIVE_SEC_EVENTS:
		return read_events(r);
	case ARCHIVE_SEC_END:
		return read_end(r);
	case ARCHIVE_SEC_BUILDIDS:
		err = archive_read_build_ids(r);
		break;
	case ARCHIVE_SEC_SIGS:
		err = archive_read_sigs(r);
		break;
	default:
		/* A section from a newer writer: what it says is not ours to know. */
		err = 0;
		break;
	}
	/* Fields a newer minor version appended to a known section. */
	return err ? err : archive_sec_skip(r, r->left);
}

/* One varint of an event payload; false when it is cut short. */
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

static int reader_open(const char *path, struct bp_session *s, bool tables_only, bool partial,
		       struct archive_reader **out)
{
	unsigned char hdr[ARCHIVE_FILE_HDR_LEN];
	struct archive_reader *r;
	unsigned major, minor;
	struct stat st;
	size_t got;
	int err, fd;

	*out = NULL;
	session__init(s);
	r = xcalloc(1, sizeof(*r));
	r->path = xstrdup(path);
	r->s = s;
	r->tables_only = tables_only;
	r->partial = partial;
	r->crc = crc32(0, NULL, 0);
	/* a regular file, or a pipe of ours; never a device (base/safeopen.h) */
	fd = open_input(path, NULL);
	r->f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!r->f) {
		err = fd >= 0 ? -errno : fd;
		if (fd >= 0)
			close(fd);
		p_err("cannot read %s: %s", path,
		      err == -ENOEXEC ? "not a regular file" : strerror(-err));
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
		char first = json_first(hdr, got);

		/* an export of record -o X.json etc.: say what is read instead */
		if (first == '[' || first == '{')
			p_err("%s: not a bpfprof archive but JSON (an export): this reads the archive "
			      "that record writes without -o or with -o FILE.bpfprof", path);
		else
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
		err = archive_read_section_header(r);
		if (!err && r->header_seen && r->type != ARCHIVE_SEC_MODULES &&
		    r->type != ARCHIVE_SEC_FUNCS && r->type != ARCHIVE_SEC_PATHS &&
		    r->type != ARCHIVE_SEC_SIGS && r->type != ARCHIVE_SEC_BUILDIDS)
			break;
		if (!err)
			err = archive_read_section_body(r);
		if (err == -ECANCELED)
			break;	/* unfinished, accepted: no event at all */
		if (err)
			goto cleanup;
	}
	err = 0;
	*out = r;
	return 0;

cleanup:
	reader_free(r);
	session__free(s);
	return err;
}

int archive__open(const char *path, bool partial, struct bp_session *s,
		  struct archive_reader **out)
{
	return reader_open(path, s, false, partial, out);
}

void archive__progress(const struct archive_reader *r, uint64_t *done, uint64_t *size)
{
	*done = r->off;
	*size = r->sized ? r->fsize : 0;
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

	err = reader_open(path, s, true, false, &r);
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
	return file_has_magic(path, ARCHIVE_MAGIC, ARCHIVE_MAGIC_LEN);
}
