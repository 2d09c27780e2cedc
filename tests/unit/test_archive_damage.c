// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Damaged .bpfprof archives (tests/unit/archive_fixture.h): every
 * truncation, an unfinished recording, garbage, a hostile length (file or
 * pipe), a newer version give an error or what was complete, never a crash
 * or a huge allocation.
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

static void test_truncated_everywhere(void **state)
{
	struct small a;
	char cut[128];
	size_t k, nread;
	int err, saved;

	path_in(cut, sizeof(cut), "cut.bpfprof");
	small_image(&a, "small.bpfprof", 40);
	assert_int_equal(read_all(a.path, a.evs, a.n, &nread), 0);
	assert_int_equal(nread, a.n);

	saved = quiet_begin();
	for (k = 0; k < a.len; k++) {
		spit(cut, a.buf, k);
		err = read_all(cut, a.evs, a.n, &nread);
		if (k < ARCHIVE_MAGIC_LEN)
			assert_int_equal(err, -ENOEXEC);
		else
			assert_int_equal(err, -EBADMSG);
	}
	/* One byte flipped anywhere: an error or the same events, never a crash. */
	for (k = 0; k < a.len; k++) {
		a.buf[k] ^= 0x5a;
		spit(cut, a.buf, a.len);
		err = read_all(cut, NULL, 0, &nread);
		assert_true(err < 0 || nread == a.n);
		a.buf[k] ^= 0x5a;
	}
	quiet_end(saved);
	free(a.buf);
}

/*
 * An unfinished recording (bpfprof killed: the file stops at any byte) read
 * as `--partial` does (archive__open's partial): past the header, never an error, and
 * what comes out is a prefix of the events made of whole blocks.
 */
static void test_partial_everywhere(void **state)
{
	enum { N = 40000 };
	struct bp_event *evs = calloc(N, sizeof(*evs));
	char path[128], cut[128];
	struct bp_session s;
	size_t len, k, i, nread, last = 0, nblocks = 0, seen[64];
	unsigned char *buf;
	int err, saved;

	assert_non_null(evs);
	path_in(path, sizeof(path), "big.bpfprof");
	path_in(cut, sizeof(cut), "cutbig.bpfprof");
	build_session(&s, "host1", 100);
	for (i = 0; i < N; i++)
		evs[i] = make_event(i, &s, 100);
	write_archive(path, &s, evs, N, N + 1);
	session__free(&s);
	buf = slurp(path, &len);

	saved = quiet_begin();
	for (k = 0; k <= len; k += k < 2048 ? 1 : 4093) {
		spit(cut, buf, k);
		err = read_archive(cut, true, evs, N, &nread);
		if (k < ARCHIVE_MAGIC_LEN) {
			assert_int_equal(err, -ENOEXEC);
			continue;
		}
		if (err) {
			/* only before the header section is complete */
			assert_int_equal(err, -EBADMSG);
			assert_true(k < 4096);
			continue;
		}
		assert_true(nread >= last);	/* more file, never fewer events */
		if (nread != last || !nblocks) {
			assert_true(nblocks < 64);
			seen[nblocks++] = nread;
		}
		last = nread;
	}
	spit(cut, buf, len);
	assert_int_equal(read_archive(cut, true, evs, N, &nread), 0);
	assert_int_equal(nread, N);
	quiet_end(saved);
	/* whole blocks: a handful of distinct counts, not one per event */
	assert_true(nblocks >= 3 && nblocks < 20);
	assert_int_equal(seen[0], 0);
	free(buf);
	free(evs);
}

static void test_not_archive(void **state)
{
	char path[128];
	size_t nread;
	int saved;

	path_in(path, sizeof(path), "garbage");
	spit(path, "root:x:0:0:root:/root:/bin/bash\n", 32);
	saved = quiet_begin();
	assert_int_equal(read_all(path, NULL, 0, &nread), -ENOEXEC);
	spit(path, "", 0);
	assert_int_equal(read_all(path, NULL, 0, &nread), -ENOEXEC);
	assert_int_equal(read_all("/nonexistent/x.bpfprof", NULL, 0, &nread), -ENOENT);
	quiet_end(saved);
	assert_false(archive__probe(path));
	assert_false(archive__probe("/nonexistent"));
}

/*
 * Runs the read in a child with a 512 MiB address space: an allocation
 * sized from a hostile field would fail there (xmalloc exits) instead of
 * returning -EBADMSG.
 */
static int read_all_limited(const char *path)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 512ul << 20, 512ul << 20 };
		size_t nread;
		int err;

		/* ASan reserves terabytes of shadow: it has its own allocation checks. */
		if (!UNDER_ASAN)
			setrlimit(RLIMIT_AS, &rl);
		close(2);
		err = read_all(path, NULL, 0, &nread);
		_exit(err == -EBADMSG ? 0 : 10 + (err < 0 ? -err % 100 : 99));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_hostile_lengths(void **state)
{
	struct small a;
	char bad[128];
	size_t off;
	const uint32_t types[] = { ARCHIVE_SEC_HEADER, ARCHIVE_SEC_FUNCS, ARCHIVE_SEC_EVENTS,
				   ARCHIVE_SEC_THREADS, ARCHIVE_SEC_LOSSES };
	const uint64_t lens[] = { 1ull << 62, UINT64_MAX, 0xffffffffu, 15 << 20, 0, 3 };
	size_t i, j;

	path_in(bad, sizeof(bad), "bad.bpfprof");
	small_image(&a, "small.bpfprof", 40);

	/* Section lengths. */
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			off = find_section(a.buf, a.len, types[i], 0);
			assert_true(off > 0);
			unsigned char save[8];

			memcpy(save, a.buf + off + 8, 8);
			put_le64(a.buf + off + 8, lens[j]);
			spit(bad, a.buf, a.len);
			assert_int_equal(read_all_limited(bad), 0);
			memcpy(a.buf + off + 8, save, 8);
		}
	}
	/* Counts inside sections: a table count, a string length, ncpus, raw_len. */
	off = find_section(a.buf, a.len, ARCHIVE_SEC_FUNCS, 0) + ARCHIVE_SEC_HDR_LEN;
	put_le32(a.buf + off + 4, 0xffffffffu);
	spit(bad, a.buf, a.len);
	assert_int_equal(read_all_limited(bad), 0);
	put_le32(a.buf + off + 4, 3);
	put_le32(a.buf + off + 16 + ARCHIVE_FUNC_FIXED, 0xfffffff0u);	/* first name's length */
	spit(bad, a.buf, a.len);
	assert_int_equal(read_all_limited(bad), 0);
	free(a.buf);

	a.buf = slurp(a.path, &a.len);
	off = find_section(a.buf, a.len, ARCHIVE_SEC_LOSSES, 0) + ARCHIVE_SEC_HDR_LEN;
	put_le32(a.buf + off + 8, 0xffffffffu);
	spit(bad, a.buf, a.len);
	assert_int_equal(read_all_limited(bad), 0);
	free(a.buf);

	a.buf = slurp(a.path, &a.len);
	off = find_section(a.buf, a.len, ARCHIVE_SEC_EVENTS, 0) + ARCHIVE_SEC_HDR_LEN;
	put_le32(a.buf + off, 0xfffffff0u);
	spit(bad, a.buf, a.len);
	assert_int_equal(read_all_limited(bad), 0);
	free(a.buf);
}

/* The same hostile length read from a pipe: no file size to check it against. */
static void test_hostile_pipe(void **state)
{
	struct small a;
	char fdpath[64];
	size_t off, nread;
	int fds[2], saved;

	small_image(&a, "small.bpfprof", 40);
	assert_true(a.len < 60000);	/* fits a pipe buffer */
	off = find_section(a.buf, a.len, ARCHIVE_SEC_EVENTS, 0);
	put_le64(a.buf + off + 8, 1ull << 40);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], a.buf, a.len), (ssize_t)a.len);
	close(fds[1]);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fds[0]);
	saved = quiet_begin();
	assert_int_equal(read_all(fdpath, NULL, 0, &nread), -EBADMSG);
	quiet_end(saved);
	close(fds[0]);
	free(a.buf);
}

static void test_newer_version(void **state)
{
	struct small a;
	size_t nread, off;
	int saved;

	small_image(&a, "v2.bpfprof", 4);
	a.buf[8] = ARCHIVE_MAJOR + 1;
	spit(a.path, a.buf, a.len);
	saved = quiet_begin();
	assert_int_equal(read_all(a.path, NULL, 0, &nread), -ENOTSUP);
	quiet_end(saved);
	/* A newer minor version reads (its checksum covers the version). */
	a.buf[8] = ARCHIVE_MAJOR;
	a.buf[10] = ARCHIVE_MINOR + 3;
	off = find_section(a.buf, a.len, ARCHIVE_SEC_END, 0);
	put_le32(a.buf + off + 16 + 16, crc32(crc32(0, NULL, 0), a.buf, off));
	spit(a.path, a.buf, a.len);
	assert_int_equal(read_all(a.path, a.evs, a.n, &nread), 0);
	assert_int_equal(nread, a.n);
	free(a.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_partial_everywhere),
		cmocka_unit_test(test_not_archive),
		cmocka_unit_test(test_hostile_lengths),
		cmocka_unit_test(test_hostile_pipe),
		cmocka_unit_test(test_newer_version),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
