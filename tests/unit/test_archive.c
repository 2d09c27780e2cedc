// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The .bpfprof archive (tests/unit/archive_fixture.h): a hand-built session
 * written by the archive exporter reads back field for field; its size on a
 * million-call loop; an empty recording; merge keeps processes of different
 * hosts apart on one time axis.  Damaged archives: test_archive_damage.c;
 * other versions and hand-built images: test_archive_compat.c.
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

static void test_round_trip(void **state)
{
	enum { N = 60000 };	/* several ~256 KiB blocks */
	struct bp_event *evs = calloc(N, sizeof(*evs));
	struct bp_session s;
	char path[128];
	size_t i;

	assert_non_null(evs);
	build_session(&s, "host1", 100);
	for (i = 0; i < N; i++)
		evs[i] = make_event(i, &s, 100);
	/* A call of "late", defined mid-stream (at N/2) with its call path. */
	memset(&evs[N / 2], 0, sizeof(evs[N / 2]));
	evs[N / 2].kind = BP_EV_CALL;
	evs[N / 2].call = (struct bp_call){ .id = 7, .begin = 1, .end = 2, .pid = 1, .tid = 1,
					    .func = 3, .depth = 3, .path = 4 };
	path_in(path, sizeof(path), "round.bpfprof");
	write_archive(path, &s, evs, N, N / 2);
	assert_true(archive__probe(path));
	read_back(path, &s, evs, N);
	free(evs);
	session__free(&s);
}

/*
 * Size: a million-call loop of one leaf function with timing jitter, like
 * tests/progs/spin, stays under 8 bytes a call (a struct bp_call is 120 bytes).
 */
static void test_size(void **state)
{
	enum { N = 200000 };
	struct exporter *e = NULL;
	struct bp_session s;
	struct bp_event ev;
	char path[128];
	unsigned char *buf;
	size_t len, i;
	uint64_t t = 1000000;

	build_session(&s, "host1", 100);
	path_in(path, sizeof(path), "size.bpfprof");
	assert_int_equal(exporter__new(&archive_exporter, path, &s, &e), 0);
	memset(&ev, 0, sizeof(ev));
	ev.kind = BP_EV_CALL;
	for (i = 0; i < N; i++) {
		uint64_t dur = 12000 + rnd() % 4000, gap = 500 + rnd() % 300;

		ev.call.id = i + 1;
		ev.call.begin = t;
		ev.call.end = t + dur;
		ev.call.self = dur;
		ev.call.pid = ev.call.tid = 100;
		ev.call.func = 1;
		ev.call.path = 1;
		t += dur + gap;
		assert_int_equal(exporter__event(e, &s, &ev), 0);
	}
	assert_int_equal(exporter__finish(e, &s), 0);
	exporter__free(e);
	buf = slurp(path, &len);
	assert_true(len < (size_t)N * 8);
	free(buf);
	session__free(&s);
}

/* No events and a zeroed session (NULL strings, no tables) round-trip too. */
static void test_empty(void **state)
{
	struct archive_reader *r = NULL;
	struct exporter *e = NULL;
	struct bp_session s, back;
	struct bp_event ev;
	char path[128];

	session__init(&s);
	path_in(path, sizeof(path), "empty.bpfprof");
	assert_int_equal(exporter__new(&archive_exporter, path, &s, &e), 0);
	assert_int_equal(exporter__finish(e, &s), 0);
	exporter__free(e);
	assert_int_equal(archive__open(path, false, &back, &r), 0);
	assert_int_equal(archive__next(r, &ev), 0);
	assert_null(back.cmdline);
	assert_int_equal(back.nfuncs, 0);
	assert_int_equal(back.nthreads, 0);
	archive__close(r);
	session__free(&back);
	session__free(&s);
}
/* Merge: two hosts with the same pid stay apart, on one time axis. */
static void test_merge(void **state)
{
	struct bp_session a, b, m;
	struct bp_event ea[4], eb[4], ev;
	struct archive_reader *r = NULL;
	char pa[128], pb[128], pm[128];
	char *argv[] = { "merge", "-q", "-o", pm, pa, pb, NULL };
	uint32_t pid2 = 0, tid2 = 0;
	size_t i, n = 0;
	int err;

	path_in(pa, sizeof(pa), "a.bpfprof");
	path_in(pb, sizeof(pb), "b.bpfprof");
	path_in(pm, sizeof(pm), "m.bpfprof");
	build_session(&a, "host1", 100);
	build_session(&b, "host2", 100);
	/* b started 1 ms (wall clock) after a, on a different monotonic clock. */
	b.t0 = 5000000000ull;
	b.realtime_offset = (int64_t)(a.t0 + (uint64_t)a.realtime_offset) + 1000000 -
			    (int64_t)b.t0;
	memset(ea, 0, sizeof(ea));
	for (i = 0; i < 2; i++) {
		ea[i].kind = BP_EV_CALL;
		ea[i].call = (struct bp_call){ .id = i + 1, .begin = 10, .end = 20, .pid = 100,
					       .tid = 100 + i, .func = 1, .path = 2 };
	}
	ea[2].kind = BP_EV_SAMPLE;
	ea[2].sample = (struct bp_sample){ .ts = 15, .weight = 1000, .pid = 100, .tid = 101,
					   .path = 3, .cpu = 1 };
	ea[3].kind = BP_EV_EDGE;
	ea[3].edge = (struct bp_edge){ .kind = BP_EDGE_WAKEUP, .src_call = 1, .dst_call = 2,
				       .src_ts = 12, .dst_ts = 14, .src_pid = 100, .src_tid = 100,
				       .dst_pid = 100, .dst_tid = 101, .src_func = 0,
				       .dst_func = 2 };
	memcpy(eb, ea, sizeof(ea));
	write_archive(pa, &a, ea, 4, 99);
	write_archive(pb, &b, eb, 4, 99);

	optind = 0;
	assert_int_equal(cmd_merge(6, argv), 0);
	assert_int_equal(archive__open(pm, false, &m, &r), 0);
	assert_int_equal(m.t0, a.t0);
	assert_int_equal(m.realtime_offset, a.realtime_offset);
	/* The same binary on both hosts: functions are shared. */
	assert_int_equal(m.nfuncs, a.nfuncs);
	while ((err = archive__next(r, &ev)) > 0) {
		bool second = n >= 4;
		uint64_t shift = second ? 1000000 : 0, ids = second ? 2 : 0;

		switch (n % 4) {
		case 0:
		case 1:
			assert_int_equal(ev.kind, BP_EV_CALL);
			assert_string_equal(session__func_name(&m, ev.call.func), "work\xff\n");
			assert_int_equal(m.paths[ev.call.path].func, ev.call.func);
			assert_int_equal(ev.call.begin, 10 + shift);
			assert_int_equal(ev.call.end, 20 + shift);
			assert_int_equal(ev.call.id, n % 4 + 1 + ids);	/* ids stay unique */
			if (!second) {
				assert_int_equal(ev.call.pid, 100);
			} else {
				assert_true(ev.call.pid != 100 && ev.call.pid != 101);
				assert_true(ev.call.tid != 100 && ev.call.tid != 101);
				if (n % 4 == 0)
					assert_int_equal(ev.call.tid, ev.call.pid);
				pid2 = ev.call.pid;
				if (n % 4 == 1)
					tid2 = ev.call.tid;
			}
			break;
		case 2:
			assert_int_equal(ev.kind, BP_EV_SAMPLE);
			assert_int_equal(ev.sample.ts, 15 + shift);
			assert_int_equal(ev.sample.pid, second ? pid2 : 100);
			assert_int_equal(ev.sample.tid, second ? tid2 : 101);
			/* main > work > "" */
			assert_string_equal(session__func_name(&m, m.paths[ev.sample.path].func), "");
			break;
		case 3:
			assert_int_equal(ev.kind, BP_EV_EDGE);
			assert_int_equal(ev.edge.src_call, 1 + ids);
			assert_int_equal(ev.edge.dst_call, 2 + ids);
			assert_int_equal(ev.edge.src_ts, 12 + shift);
			assert_int_equal(ev.edge.dst_ts, 14 + shift);
			assert_int_equal(ev.edge.src_pid, second ? pid2 : 100);
			assert_int_equal(ev.edge.dst_tid, second ? tid2 : 101);
			assert_string_equal(session__func_name(&m, ev.edge.src_func), "main");
			assert_string_equal(session__func_name(&m, ev.edge.dst_func), "");
			break;
		}
		n++;
	}
	assert_int_equal(err, 0);
	assert_int_equal(n, 8);
	/* 2 processes each (100, 107), 2 threads each */
	assert_int_equal(m.nprocs, 4);
	assert_int_equal(m.nthreads, 4);
	{
		int found = 0;

		for (i = 0; i < m.nprocs; i++)
			if (m.procs[i].name && !strcmp(m.procs[i].name, "demo (host2:100)")) {
				assert_int_equal(m.procs[i].pid, pid2);
				found++;
			} else if (m.procs[i].pid == 100) {
				assert_string_equal(m.procs[i].name, "demo");
			}
		assert_int_equal(found, 1);
	}
	assert_string_equal(m.hostname, "host1,host2");
	assert_int_equal(m.ncalls, 4);
	assert_int_equal(m.nsamples, 16);
	assert_int_equal(m.nedges[1], 22);
	assert_int_equal(m.lost_per_cpu[1], 18);
	archive__close(r);
	session__free(&m);
	session__free(&a);
	session__free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_merge),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
