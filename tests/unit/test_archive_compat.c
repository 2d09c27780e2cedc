// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Archives built by hand (tests/unit/archive_fixture.h): unknown sections
 * and event kinds are skipped, version 1.0 still reads, an out-of-range
 * index and a bad end are errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include "archive/archive.h"
#include "archive/format.h"
#include "cmd/cmds.h"
#include "exporters/exporter.h"
#include "model/session.h"
#include "archive_fixture.h"

/* An archive image being assembled by hand, END appended by finish(). */
struct image {
	unsigned char buf[65536];
	size_t len;
	uint64_t nsections, nevents;
};

static void img_section(struct image *im, uint32_t type, uint32_t flags, const void *p,
			size_t n)
{
	assert_true(im->len + 16 + n <= sizeof(im->buf));
	put_le32(im->buf + im->len, type);
	put_le32(im->buf + im->len + 4, flags);
	put_le64(im->buf + im->len + 8, n);
	memcpy(im->buf + im->len + 16, p, n);
	im->len += 16 + n;
	if (type != ARCHIVE_SEC_END)
		im->nsections++;
}

/* Copies the sections of a real archive up to (not including) its first EVENTS. */
static void img_from_prefix(struct image *im, const unsigned char *buf, size_t len)
{
	size_t end = find_section(buf, len, ARCHIVE_SEC_EVENTS, 0), off;

	assert_true(end > 0);
	memcpy(im->buf, buf, end);
	im->len = end;
	im->nsections = 0;
	im->nevents = 0;
	for (off = ARCHIVE_FILE_HDR_LEN; off < end; off += 16 + get_le64(buf + off + 8))
		im->nsections++;
}

static void img_finish(struct image *im)
{
	unsigned char end[24] = { 0 };

	put_le64(end, im->nsections);
	put_le64(end + 8, im->nevents);
	put_le32(end + 16, crc32(crc32(0, NULL, 0), im->buf, im->len));
	img_section(im, ARCHIVE_SEC_END, 0, end, sizeof(end));
}

/*
 * im finished and written to path: the reader refuses it as damaged
 * (-EBADMSG); returns how many events it gave before.
 */
static size_t img_refused(struct image *im, const char *path)
{
	size_t nread;

	img_finish(im);
	spit(path, im->buf, im->len);
	assert_int_equal(read_all(path, NULL, 0, &nread), -EBADMSG);
	return nread;
}

/* A raw events block: the events given as (kind, payload varints...) lists. */
struct rawblock {
	unsigned char buf[4096];
	size_t len;
	uint32_t n;
};

static void rb_event(struct rawblock *b, uint64_t kind, const uint64_t *v, size_t nv,
		     size_t extra)
{
	unsigned char p[256];
	size_t n = 0, i;

	for (i = 0; i < nv; i++)
		n += varint_put(p + n, v[i]);
	for (i = 0; i < extra; i++)
		p[n++] = 0xee;
	b->len += varint_put(b->buf + b->len, kind);
	b->len += varint_put(b->buf + b->len, n);
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->n++;
}

static void img_block(struct image *im, const struct rawblock *b)
{
	unsigned char p[4096 + 8];

	put_le32(p, b->len);
	put_le32(p + 4, b->n);
	memcpy(p + 8, b->buf, b->len);
	img_section(im, ARCHIVE_SEC_EVENTS, 0, p, 8 + b->len);
	im->nevents += b->n;
}

/* Forward compatibility: unknown sections, unknown kinds and extra fields are skipped. */
static void test_forward_compat(void **state)
{
	struct small a;
	struct image *im = calloc(1, sizeof(*im));
	struct rawblock b = { .len = 0 };
	size_t nread;
	/* id 5 (zigzag 10), parent none, begin 100, dur 50, self 20 (dur - self 30),
	 * pid 100, tid 100, func 1, depth 0, flags 0, path 0 */
	const uint64_t call[] = { 10, 0, 200, 50, 30, 200, 200, 1, 0, 0, 0 };
	const uint64_t loss[] = { 2, 3, 1 };
	struct bp_event want[2];

	assert_non_null(im);
	small_image(&a, "fwd.bpfprof", 4);
	img_from_prefix(im, a.buf, a.len);
	img_section(im, 0x7777, 0, "future", 6);
	img_section(im, 0x7778, ARCHIVE_SEC_ZLIB, "\x01\x02", 2);
	rb_event(&b, 99, loss, 3, 0);		/* a kind from the future */
	rb_event(&b, ARCHIVE_EV_CALL, call, 11, 5);	/* with 5 bytes of new fields */
	rb_event(&b, ARCHIVE_EV_LOSS, loss, 3, 0);
	img_block(im, &b);
	img_finish(im);
	spit(a.path, im->buf, im->len);

	memset(want, 0, sizeof(want));
	want[0].kind = BP_EV_CALL;
	want[0].call = (struct bp_call){ .id = 5, .begin = 100, .end = 150, .self = 20,
					 .pid = 100, .tid = 100, .func = 1 };
	want[1].kind = BP_EV_LOSS;
	want[1].loss = (struct bp_loss){ .ts = 101, .count = 3, .cpu = 1 };
	assert_int_equal(read_all(a.path, want, 2, &nread), 0);
	assert_int_equal(nread, 2);
	free(a.buf);
	free(im);
}

/* A 1.0 archive: 32-byte function records without nparams, line and file. */
static void test_version_1_0(void **state)
{
	struct image *im = calloc(1, sizeof(*im));
	struct rawblock b = { .len = 0 };
	const uint64_t call[] = { 2, 0, 20, 5, 0, 14, 14, 0, 0, 0, 0 };
	unsigned char p[256] = { 0 };
	struct archive_reader *r = NULL;
	struct bp_session s;
	struct bp_event ev;
	char path[128];
	size_t n;

	assert_non_null(im);
	memcpy(im->buf, ARCHIVE_MAGIC, ARCHIVE_MAGIC_LEN);
	im->buf[8] = 1;		/* 1.0 */
	im->len = ARCHIVE_FILE_HDR_LEN;
	/* header: fixed 16, t0 5, offset 0, three NULL strings */
	put_le32(p, 16);
	put_le64(p + 4, 5);
	memset(p + 20, 0xff, 12);
	img_section(im, ARCHIVE_SEC_HEADER, 0, p, 32);
	/* modules: first 0, count 1, fixed 0; "m" */
	memset(p, 0, sizeof(p));
	put_le32(p + 4, 1);
	put_le32(p + 16, 1);
	p[20] = 'm';
	img_section(im, ARCHIVE_SEC_MODULES, 0, p, 21);
	/* funcs: first 0, count 1, fixed 32; module 0, flags 0, addr 0x10, size 3, offset 0x10; "f" */
	memset(p, 0, sizeof(p));
	put_le32(p + 4, 1);
	put_le32(p + 8, 32);
	put_le64(p + 16 + 8, 0x10);
	put_le64(p + 16 + 16, 3);
	put_le64(p + 16 + 24, 0x10);
	put_le32(p + 16 + 32, 1);
	p[16 + 36] = 'f';
	n = 16 + 32 + 5;
	img_section(im, ARCHIVE_SEC_FUNCS, 0, p, n);
	rb_event(&b, ARCHIVE_EV_CALL, call, 11, 0);
	img_block(im, &b);
	img_finish(im);
	path_in(path, sizeof(path), "v1.0.bpfprof");
	spit(path, im->buf, im->len);

	assert_int_equal(archive__open(path, false, &s, &r), 0);
	assert_int_equal(s.nfuncs, 1);
	assert_string_equal(s.funcs[0].name, "f");
	assert_int_equal(s.funcs[0].addr, 0x10);
	assert_int_equal(s.funcs[0].size, 3);
	assert_int_equal(s.funcs[0].nparams, -1);
	assert_int_equal(s.funcs[0].line, 0);
	assert_null(s.funcs[0].file);
	assert_int_equal(archive__next(r, &ev), 1);
	assert_int_equal(ev.call.id, 1);
	assert_int_equal(ev.call.begin, 10);
	assert_int_equal(ev.call.end, 15);
	assert_int_equal(ev.call.self, 5);
	assert_int_equal(ev.call.pid, 7);
	assert_int_equal(archive__next(r, &ev), 0);
	archive__close(r);
	session__free(&s);
	free(im);
}

/* An event that names a function, call path or value out of range is an error. */
static void test_bad_index(void **state)
{
	struct small a;
	struct image *im = calloc(1, sizeof(*im));
	size_t i;
	const uint64_t bad[][11] = {
		{ 10, 0, 200, 50, 20, 200, 200, 3, 0, 0, 0 },	/* func 3 of 3 */
		{ 10, 0, 200, 50, 20, 200, 200, 1, 0, 0, 4 },	/* path 4 of 4 */
		{ 10, 0, 200, 50, 20, 1ull << 40, 200, 1, 0, 0, 0 },	/* pid > u32 */
		{ 10, 0, 200, 50, 20, 200, 200, 1, 1ull << 33, 0, 0 },	/* depth > u32 */
	};
	int saved;

	assert_non_null(im);
	small_image(&a, "badidx.bpfprof", 4);
	saved = quiet_begin();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rawblock b = { .len = 0 };

		img_from_prefix(im, a.buf, a.len);
		rb_event(&b, ARCHIVE_EV_CALL, bad[i], 11, 0);
		img_block(im, &b);
		assert_int_equal(img_refused(im, a.path), 0);
	}
	/* A call cut short inside its own length. */
	{
		struct rawblock b = { .len = 0 };

		img_from_prefix(im, a.buf, a.len);
		rb_event(&b, ARCHIVE_EV_CALL, bad[0], 5, 0);
		img_block(im, &b);
		img_refused(im, a.path);
	}
	quiet_end(saved);
	free(a.buf);
	free(im);
}

/* BUILDIDS (1.4) rows: u32 module, then the build-id as a string. */
static size_t bid_row(unsigned char *p, uint32_t module, const char *id)
{
	put_le32(p, module);
	put_le32(p + 4, strlen(id));
	memcpy(p + 8, id, strlen(id));
	return 8 + strlen(id);
}

/* A build-id section: read into its module; one naming no module, or not hex, refused. */
static void test_hostile_build_ids(void **state)
{
	struct small a;
	struct image *im = calloc(1, sizeof(*im));
	const char *bad_ids[] = { "../../etc/x", "ABCDEF", "" };
	unsigned char sec[512];
	struct archive_reader *r = NULL;
	struct bp_session s;
	struct bp_event ev;
	char longid[200];
	size_t n, i;
	int saved;

	assert_non_null(im);
	small_image(&a, "bid.bpfprof", 4);
	/* a good one */
	img_from_prefix(im, a.buf, a.len);
	put_le32(sec, 1);
	n = 4 + bid_row(sec + 4, 0, "00ff12");
	img_section(im, ARCHIVE_SEC_BUILDIDS, 0, sec, n);
	img_finish(im);
	spit(a.path, im->buf, im->len);
	assert_int_equal(archive__open(a.path, false, &s, &r), 0);
	while (archive__next(r, &ev) > 0)
		;
	assert_string_equal(s.modules[0].build_id, "00ff12");
	archive__close(r);
	session__free(&s);

	saved = quiet_begin();
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = 0;
	for (i = 0; i < 5; i++) {
		img_from_prefix(im, a.buf, a.len);
		put_le32(sec, 1);
		if (i < 3)
			n = 4 + bid_row(sec + 4, 0, bad_ids[i]);
		else if (i == 3)
			n = 4 + bid_row(sec + 4, 1000, "00ff");	/* no such module */
		else
			n = 4 + bid_row(sec + 4, 0, longid);	/* over 128 digits */
		img_section(im, ARCHIVE_SEC_BUILDIDS, 0, sec, n);
		img_refused(im, a.path);
	}
	/* more rows than the section could hold */
	img_from_prefix(im, a.buf, a.len);
	put_le32(sec, 1000000);
	img_section(im, ARCHIVE_SEC_BUILDIDS, 0, sec, 4);
	img_refused(im, a.path);
	quiet_end(saved);
	free(a.buf);
	free(im);
}

/* Data after END, a missing END, a wrong checksum. */
static void test_end_checks(void **state)
{
	struct small a;
	unsigned char *big;
	size_t nread, off;
	int saved;

	small_image(&a, "end.bpfprof", 10);
	big = malloc(a.len + 1);
	memcpy(big, a.buf, a.len);
	big[a.len] = 0;
	saved = quiet_begin();
	spit(a.path, big, a.len + 1);
	assert_int_equal(read_all(a.path, a.evs, a.n, &nread), -EBADMSG);
	assert_int_equal(nread, a.n);	/* the events were all fine */
	off = find_section(a.buf, a.len, ARCHIVE_SEC_END, 0);
	spit(a.path, a.buf, off);
	assert_int_equal(read_all(a.path, a.evs, a.n, &nread), -EBADMSG);
	assert_int_equal(nread, a.n);
	a.buf[off + 16 + 16] ^= 1;	/* the crc */
	spit(a.path, a.buf, a.len);
	assert_int_equal(read_all(a.path, a.evs, a.n, &nread), -EBADMSG);
	quiet_end(saved);
	free(big);
	free(a.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forward_compat),
		cmocka_unit_test(test_version_1_0),
		cmocka_unit_test(test_bad_index),
		cmocka_unit_test(test_end_checks),
		cmocka_unit_test(test_hostile_build_ids),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
