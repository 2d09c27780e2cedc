// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The .bpfprof archive: a hand-built session written by the archive exporter
 * reads back field for field; every truncation, garbage, a hostile length,
 * a newer version, an out-of-range index give an error, never a crash or a
 * huge allocation; unknown sections and event kinds are skipped; merge keeps
 * processes of different hosts apart on one time axis.
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

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static char dir[64];

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int setup_dir(void **state)
{
	strcpy(dir, "/tmp/bpfprof-test-archive.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Silences stderr (each failed read prints its one line) around a block. */
static int quiet_begin(void)
{
	int saved = dup(2), null = open("/dev/null", O_WRONLY);

	dup2(null, 2);
	close(null);
	return saved;
}

static void quiet_end(int saved)
{
	dup2(saved, 2);
	close(saved);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* A session with every kind of table entry, including awkward values. */
static void build_session(struct bp_session *s, const char *host, uint32_t pid)
{
	struct bp_func f = { 0 };
	struct bp_thread *t;
	uint32_t m0, m1, fmain, fwork, ffree;
	size_t i;

	session__init(s);
	s->cmdline = strdup("./demo --flag \"x\"");
	s->hostname = strdup(host);
	s->kernel = NULL;	/* NULL stays NULL */
	s->t0 = 123456789012345ull;
	s->realtime_offset = -42;
	m0 = session__add_module(s, "/usr/bin/demo");
	m1 = session__add_module(s, "/lib/x86_64-linux-gnu/libc.so.6");
	/* a build-id (1.4): kept in the BUILDIDS section; libc's none */
	session__module_build_id(s, m0, "4e211784508e3430ff797c6e0e46c129043305ef");
	f.name = "main";
	f.module = m0;
	f.flags = 3;
	f.addr = 0x401000;
	f.size = 77;
	f.offset = 0x1000;
	f.nparams = 2;
	f.line = 10;
	f.file = "/src/demo.c";
	/* a typed signature (1.3): kept in the SIGS section */
	f.sig = "S1\ni\t4\ta\t\tint\t\ni\t4\tr0\targc\tint\t\ns\t8\tr1\targv0\tchar *\t";
	fmain = session__add_func(s, &f);
	f.sig = NULL;
	f.nparams = -1;
	f.line = 0;
	f.file = NULL;
	f.name = "work\xff\n";
	f.addr = UINT64_MAX;
	f.size = 0;
	f.offset = 1ull << 63;
	fwork = session__add_func(s, &f);
	f.name = "";
	f.module = m1;
	f.flags = 0;
	f.addr = 0x7000;
	f.size = 5;
	f.offset = 0x7000;
	ffree = session__add_func(s, &f);
	i = session__path(s, 0, fmain);
	i = session__path(s, i, fwork);
	session__path(s, i, ffree);

	t = session__thread(s, pid, pid);
	strcpy(t->name, "demo");
	t->first_ts = 5;
	t->last_ts = 1000000;
	t->exited = 1;
	t = session__thread(s, pid + 1, pid);
	memcpy(t->name, "0123456789abcdef", 16);	/* full, no NUL */
	t->first_ts = 7;
	t->last_ts = UINT64_MAX;
	session__set_process_name(s, pid, "demo");
	session__process(s, pid)->ppid = 1;
	session__process(s, pid + 7);		/* no name: NULL */

	s->ncpus = 3;
	s->lost_per_cpu = calloc(3, sizeof(*s->lost_per_cpu));
	s->lost_per_cpu[1] = 9;
	s->lost_per_cpu[2] = UINT64_MAX;
	s->lost_total = 8;
	s->duration = 2000000;
	s->nrecords = 1;
	s->ncalls = 2;
	s->nunfinished = 3;
	s->nno_entry = 4;
	s->nunwound = 5;
	s->nno_retprobe = 6;
	s->nexceptions = 7;
	s->nsamples = 8;
	s->noffcpu = 9;
	s->ntruncated = 10;
	s->nedges[1] = 11;
	s->nedges[3] = UINT64_MAX;
}

/* Deterministic pseudo-random events, some with extreme values. */
static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static struct bp_event make_event(size_t i, const struct bp_session *s, uint32_t pid)
{
	struct bp_event ev;
	uint64_t r = rnd();

	memset(&ev, 0, sizeof(ev));
	if (i % 89 == 7) {
		ev.kind = BP_EV_SAMPLE;
		ev.sample.ts = r % 3 ? i * 1000 : rnd();
		ev.sample.weight = rnd() >> (r & 63);
		ev.sample.pid = r % 5 ? pid : UINT32_MAX;
		ev.sample.tid = pid + r % 2;
		ev.sample.path = (r >> 8) % s->npaths;
		ev.sample.cpu = (r >> 16) % 64;
		ev.sample.flags = (r >> 24) % 4;
		return ev;
	}
	if (i % 83 == 11) {
		ev.kind = BP_EV_EDGE;
		ev.edge.kind = 1 + r % 3;
		ev.edge.src_call = r % 2 ? i : 0;
		ev.edge.dst_call = i + 1;
		ev.edge.src_ts = i * 1000;
		ev.edge.dst_ts = r % 7 ? i * 1000 + r % 999 : rnd();
		ev.edge.value = r % 3 == 0 ? rnd() : 0;
		ev.edge.src_pid = pid;
		ev.edge.src_tid = pid + 1;
		ev.edge.dst_pid = r % 11 ? pid : UINT32_MAX;
		ev.edge.dst_tid = pid;
		ev.edge.src_func = (r >> 8) % s->nfuncs;
		ev.edge.dst_func = (r >> 16) % s->nfuncs;
		return ev;
	}
	if (i % 97 == 5) {
		ev.kind = BP_EV_LOSS;
		ev.loss.ts = i % 2 ? rnd() : i * 1000;
		ev.loss.count = rnd() >> (r & 63);
		ev.loss.cpu = r % 5 == 0 ? UINT32_MAX : r % 3;
		return ev;
	}
	ev.kind = BP_EV_CALL;
	ev.call.id = i + 1 + (r % 7 == 0 ? rnd() : 0);
	ev.call.parent_id = r % 3 ? ev.call.id - 1 - r % 5 : 0;
	if (ev.call.parent_id == ev.call.id)
		ev.call.parent_id = 0;
	ev.call.begin = r % 11 == 0 ? rnd() : i * 1000 + r % 500;
	ev.call.end = r % 13 == 0 ? rnd() : ev.call.begin + (r >> 20) % 100000;
	ev.call.self = (r >> 8) % 1000;
	ev.call.pid = r % 17 == 0 ? UINT32_MAX : pid;
	ev.call.tid = r % 19 == 0 ? 0 : pid + (r >> 4) % 2;
	ev.call.func = (r >> 12) % s->nfuncs;
	ev.call.depth = r % 23 == 0 ? UINT32_MAX : (r >> 16) % 10;
	ev.call.flags = (r >> 24) % 64;
	ev.call.path = (r >> 30) % s->npaths;
	/* --args: the registers exist only when the flags say so. */
	if (ev.call.flags & BP_CALL_HAS_ARGS) {
		int k;

		for (k = 0; k < 6; k++)
			ev.call.args[k] = k % 2 ? rnd() : (uint64_t)k;
	}
	if (ev.call.flags & BP_CALL_HAS_RET)
		ev.call.ret = r % 2 ? rnd() : (uint64_t)-1;
	/* 1.3: stack words, rdx and strings, after the infos */
	if ((ev.call.flags & BP_CALL_HAS_ARGS) && r % 3 == 0) {
		ev.call.flags |= BP_CALL_HAS_XARGS;
		for (int k = 0; k < BP_ARGX_STACK; k++)
			ev.call.x.stack[k] = k % 2 ? rnd() : (uint64_t)k;
		ev.call.x.ret2 = ev.call.flags & BP_CALL_HAS_RET ? rnd() : 0;
		ev.call.x.str_slot[0] = 1;
		ev.call.x.str_state[0] = r % 2 ? BP_ARGX_STR_OK : BP_ARGX_STR_CUT;
		snprintf(ev.call.x.str[0], sizeof(ev.call.x.str[0]), "name-%zu", i);
		ev.call.x.str_slot[1] = BP_ARGX_NONE;
		ev.call.x.str_state[1] = BP_ARGX_STR_UNREAD;
	}
	return ev;
}

static void write_archive(const char *path, struct bp_session *s, const struct bp_event *evs,
			  size_t n, size_t grow_at)
{
	struct exporter *e = NULL;
	size_t i;

	assert_int_equal(exporter__new(&archive_exporter, path, s, &e), 0);
	for (i = 0; i < n; i++) {
		/* Tables that grow during the recording (dlopen, new call paths). */
		if (i == grow_at) {
			struct bp_func f = { .name = "late", .module = 1, .addr = 9 };
			uint32_t id = session__add_func(s, &f);

			session__path(s, 2, id);
			session__add_module(s, "/opt/late.so");
		}
		assert_int_equal(exporter__event(e, s, &evs[i]), 0);
	}
	assert_int_equal(exporter__finish(e, s), 0);
	exporter__free(e);
}

static void assert_str_eq(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_event_eq(const struct bp_event *a, const struct bp_event *b)
{
	assert_int_equal(a->kind, b->kind);
	if (a->kind == BP_EV_CALL) {
		assert_int_equal(a->call.id, b->call.id);
		assert_int_equal(a->call.parent_id, b->call.parent_id);
		assert_int_equal(a->call.begin, b->call.begin);
		assert_int_equal(a->call.end, b->call.end);
		assert_int_equal(a->call.self, b->call.self);
		assert_int_equal(a->call.pid, b->call.pid);
		assert_int_equal(a->call.tid, b->call.tid);
		assert_int_equal(a->call.func, b->call.func);
		assert_int_equal(a->call.depth, b->call.depth);
		assert_int_equal(a->call.flags, b->call.flags);
		assert_int_equal(a->call.path, b->call.path);
		assert_memory_equal(a->call.args, b->call.args, sizeof(a->call.args));
		assert_int_equal(a->call.ret, b->call.ret);
		if (a->call.flags & BP_CALL_HAS_XARGS) {
			assert_memory_equal(a->call.x.stack, b->call.x.stack, sizeof(a->call.x.stack));
			assert_int_equal(a->call.x.ret2, b->call.x.ret2);
			for (int k = 0; k < BP_ARGX_NSTR; k++) {
				assert_int_equal(a->call.x.str_slot[k], b->call.x.str_slot[k]);
				assert_int_equal(a->call.x.str_state[k], b->call.x.str_state[k]);
				if (a->call.x.str_slot[k] != BP_ARGX_NONE)
					assert_string_equal(a->call.x.str[k], b->call.x.str[k]);
			}
		}
	} else if (a->kind == BP_EV_SAMPLE) {
		assert_int_equal(a->sample.ts, b->sample.ts);
		assert_int_equal(a->sample.weight, b->sample.weight);
		assert_int_equal(a->sample.pid, b->sample.pid);
		assert_int_equal(a->sample.tid, b->sample.tid);
		assert_int_equal(a->sample.path, b->sample.path);
		assert_int_equal(a->sample.cpu, b->sample.cpu);
		assert_int_equal(a->sample.flags, b->sample.flags);
	} else if (a->kind == BP_EV_EDGE) {
		assert_int_equal(a->edge.kind, b->edge.kind);
		assert_int_equal(a->edge.src_call, b->edge.src_call);
		assert_int_equal(a->edge.dst_call, b->edge.dst_call);
		assert_int_equal(a->edge.src_ts, b->edge.src_ts);
		assert_int_equal(a->edge.dst_ts, b->edge.dst_ts);
		assert_int_equal(a->edge.value, b->edge.value);
		assert_int_equal(a->edge.src_pid, b->edge.src_pid);
		assert_int_equal(a->edge.src_tid, b->edge.src_tid);
		assert_int_equal(a->edge.dst_pid, b->edge.dst_pid);
		assert_int_equal(a->edge.dst_tid, b->edge.dst_tid);
		assert_int_equal(a->edge.src_func, b->edge.src_func);
		assert_int_equal(a->edge.dst_func, b->edge.dst_func);
	} else {
		assert_int_equal(a->loss.ts, b->loss.ts);
		assert_int_equal(a->loss.count, b->loss.count);
		assert_int_equal(a->loss.cpu, b->loss.cpu);
	}
}

static void assert_session_eq(const struct bp_session *a, const struct bp_session *b)
{
	size_t i;

	assert_str_eq(a->cmdline, b->cmdline);
	assert_str_eq(a->hostname, b->hostname);
	assert_str_eq(a->kernel, b->kernel);
	assert_int_equal(a->t0, b->t0);
	assert_int_equal(a->realtime_offset, b->realtime_offset);
	assert_int_equal(a->duration, b->duration);
	assert_int_equal(a->nmodules, b->nmodules);
	for (i = 0; i < a->nmodules; i++) {
		assert_string_equal(a->modules[i].path, b->modules[i].path);
		assert_str_eq(a->modules[i].build_id, b->modules[i].build_id);
	}
	assert_int_equal(a->nfuncs, b->nfuncs);
	for (i = 0; i < a->nfuncs; i++) {
		assert_string_equal(a->funcs[i].name, b->funcs[i].name);
		assert_int_equal(a->funcs[i].module, b->funcs[i].module);
		assert_int_equal(a->funcs[i].flags, b->funcs[i].flags);
		assert_int_equal(a->funcs[i].addr, b->funcs[i].addr);
		assert_int_equal(a->funcs[i].size, b->funcs[i].size);
		assert_int_equal(a->funcs[i].offset, b->funcs[i].offset);
		assert_int_equal(a->funcs[i].nparams, b->funcs[i].nparams);
		assert_int_equal(a->funcs[i].line, b->funcs[i].line);
		assert_str_eq(a->funcs[i].file, b->funcs[i].file);
		assert_str_eq(a->funcs[i].sig, b->funcs[i].sig);
	}
	assert_int_equal(a->npaths, b->npaths);
	for (i = 0; i < a->npaths; i++) {
		assert_int_equal(a->paths[i].parent, b->paths[i].parent);
		assert_int_equal(a->paths[i].func, b->paths[i].func);
	}
	assert_int_equal(a->nthreads, b->nthreads);
	for (i = 0; i < a->nthreads; i++) {
		assert_int_equal(a->threads[i].tid, b->threads[i].tid);
		assert_int_equal(a->threads[i].pid, b->threads[i].pid);
		assert_memory_equal(a->threads[i].name, b->threads[i].name, 16);
		assert_int_equal(a->threads[i].first_ts, b->threads[i].first_ts);
		assert_int_equal(a->threads[i].last_ts, b->threads[i].last_ts);
		assert_int_equal(a->threads[i].exited, b->threads[i].exited);
	}
	assert_int_equal(a->nprocs, b->nprocs);
	for (i = 0; i < a->nprocs; i++) {
		assert_int_equal(a->procs[i].pid, b->procs[i].pid);
		assert_int_equal(a->procs[i].ppid, b->procs[i].ppid);
		assert_str_eq(a->procs[i].name, b->procs[i].name);
	}
	assert_int_equal(a->ncpus, b->ncpus);
	for (i = 0; i < a->ncpus; i++)
		assert_int_equal(a->lost_per_cpu[i], b->lost_per_cpu[i]);
	assert_int_equal(a->lost_total, b->lost_total);
	assert_int_equal(a->nrecords, b->nrecords);
	assert_int_equal(a->ncalls, b->ncalls);
	assert_int_equal(a->nunfinished, b->nunfinished);
	assert_int_equal(a->nno_entry, b->nno_entry);
	assert_int_equal(a->nunwound, b->nunwound);
	assert_int_equal(a->nno_retprobe, b->nno_retprobe);
	assert_int_equal(a->nexceptions, b->nexceptions);
	assert_int_equal(a->nsamples, b->nsamples);
	assert_int_equal(a->noffcpu, b->noffcpu);
	assert_int_equal(a->ntruncated, b->ntruncated);
	assert_memory_equal(a->nedges, b->nedges, sizeof(a->nedges));
}

/*
 * Reads `path` back: every event equal to evs[], in order, and at the end
 * the session equal to `want`.  Returns the number of events read.
 */
static size_t read_back(const char *path, const struct bp_session *want,
			const struct bp_event *evs, size_t n)
{
	struct archive_reader *r = NULL;
	struct bp_session s;
	struct bp_event ev;
	size_t i = 0;
	int err;

	assert_int_equal(archive__open(path, &s, &r), 0);
	/* The tables of the start are there before the first event. */
	assert_true(s.nfuncs >= 3);
	assert_str_eq(s.cmdline, want->cmdline);
	while ((err = archive__next(r, &ev)) > 0) {
		assert_true(i < n);
		assert_event_eq(&ev, &evs[i]);
		/* Every index an event carries is already defined. */
		if (ev.kind == BP_EV_CALL) {
			assert_true(ev.call.func < s.nfuncs);
			assert_true(ev.call.path < s.npaths);
		}
		i++;
	}
	assert_int_equal(err, 0);
	assert_int_equal(i, n);
	assert_session_eq(&s, want);
	/* After the end, the end again. */
	assert_int_equal(archive__next(r, &ev), 0);
	archive__close(r);
	session__free(&s);
	return i;
}

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
	assert_int_equal(archive__open(path, &back, &r), 0);
	assert_int_equal(archive__next(r, &ev), 0);
	assert_null(back.cmdline);
	assert_int_equal(back.nfuncs, 0);
	assert_int_equal(back.nthreads, 0);
	archive__close(r);
	session__free(&back);
	session__free(&s);
}

/* Opens and reads `path` to the end; returns the final status, counts events. */
static int read_all(const char *path, const struct bp_event *evs, size_t n, size_t *nread)
{
	struct archive_reader *r = NULL;
	struct bp_session s;
	struct bp_event ev;
	int err;

	*nread = 0;
	err = archive__open(path, &s, &r);
	if (err)
		return err;
	while ((err = archive__next(r, &ev)) > 0) {
		/* What comes out of a damaged file is a clean prefix of what went in. */
		if (evs) {
			assert_true(*nread < n);
			assert_event_eq(&ev, &evs[*nread]);
		}
		(*nread)++;
	}
	/* The error is sticky. */
	if (err)
		assert_int_equal(archive__next(r, &ev), err);
	archive__close(r);
	session__free(&s);
	return err;
}

static void write_small(const char *path, struct bp_event *evs, size_t n)
{
	struct bp_session s;
	size_t i;

	build_session(&s, "host1", 100);
	for (i = 0; i < n; i++)
		evs[i] = make_event(i, &s, 100);
	write_archive(path, &s, evs, n, n + 1);
	session__free(&s);
}

static void test_truncated_everywhere(void **state)
{
	enum { N = 40 };
	struct bp_event evs[N];
	char path[128], cut[128];
	unsigned char *buf;
	size_t len, k, nread;
	int err, saved;

	path_in(path, sizeof(path), "small.bpfprof");
	path_in(cut, sizeof(cut), "cut.bpfprof");
	write_small(path, evs, N);
	buf = slurp(path, &len);
	assert_int_equal(read_all(path, evs, N, &nread), 0);
	assert_int_equal(nread, N);

	saved = quiet_begin();
	for (k = 0; k < len; k++) {
		spit(cut, buf, k);
		err = read_all(cut, evs, N, &nread);
		if (k < ARCHIVE_MAGIC_LEN)
			assert_int_equal(err, -ENOEXEC);
		else
			assert_int_equal(err, -EBADMSG);
	}
	/* One byte flipped anywhere: an error or the same events, never a crash. */
	for (k = 0; k < len; k++) {
		buf[k] ^= 0x5a;
		spit(cut, buf, len);
		err = read_all(cut, NULL, 0, &nread);
		assert_true(err < 0 || nread == N);
		buf[k] ^= 0x5a;
	}
	quiet_end(saved);
	free(buf);
}

/*
 * An unfinished recording (bpfprof killed: the file stops at any byte) read
 * with archive__accept_unfinished(): past the header, never an error, and
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
	archive__accept_unfinished(true);
	for (k = 0; k <= len; k += k < 2048 ? 1 : 4093) {
		spit(cut, buf, k);
		err = read_all(cut, evs, N, &nread);
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
	assert_int_equal(read_all(cut, evs, N, &nread), 0);
	assert_int_equal(nread, N);
	archive__accept_unfinished(false);
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

static void put_le32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put_le64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static uint64_t get_le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Offset of the k-th section of `type` in an archive image, or 0. */
static size_t find_section(const unsigned char *buf, size_t len, uint32_t type, int k)
{
	size_t off = ARCHIVE_FILE_HDR_LEN;

	while (off + ARCHIVE_SEC_HDR_LEN <= len) {
		uint32_t t = buf[off] | buf[off + 1] << 8 | buf[off + 2] << 16;

		if (t == type && k-- == 0)
			return off;
		off += ARCHIVE_SEC_HDR_LEN + get_le64(buf + off + 8);
	}
	return 0;
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
	enum { N = 40 };
	struct bp_event evs[N];
	char path[128], bad[128];
	unsigned char *buf;
	size_t len, off;
	const uint32_t types[] = { ARCHIVE_SEC_HEADER, ARCHIVE_SEC_FUNCS, ARCHIVE_SEC_EVENTS,
				   ARCHIVE_SEC_THREADS, ARCHIVE_SEC_LOSSES };
	const uint64_t lens[] = { 1ull << 62, UINT64_MAX, 0xffffffffu, 15 << 20, 0, 3 };
	size_t i, j;

	path_in(path, sizeof(path), "small.bpfprof");
	path_in(bad, sizeof(bad), "bad.bpfprof");
	write_small(path, evs, N);
	buf = slurp(path, &len);

	/* Section lengths. */
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			off = find_section(buf, len, types[i], 0);
			assert_true(off > 0);
			unsigned char save[8];

			memcpy(save, buf + off + 8, 8);
			put_le64(buf + off + 8, lens[j]);
			spit(bad, buf, len);
			assert_int_equal(read_all_limited(bad), 0);
			memcpy(buf + off + 8, save, 8);
		}
	}
	/* Counts inside sections: a table count, a string length, ncpus, raw_len. */
	off = find_section(buf, len, ARCHIVE_SEC_FUNCS, 0) + ARCHIVE_SEC_HDR_LEN;
	put_le32(buf + off + 4, 0xffffffffu);
	spit(bad, buf, len);
	assert_int_equal(read_all_limited(bad), 0);
	put_le32(buf + off + 4, 3);
	put_le32(buf + off + 16 + ARCHIVE_FUNC_FIXED, 0xfffffff0u);	/* first name's length */
	spit(bad, buf, len);
	assert_int_equal(read_all_limited(bad), 0);
	free(buf);

	buf = slurp(path, &len);
	off = find_section(buf, len, ARCHIVE_SEC_LOSSES, 0) + ARCHIVE_SEC_HDR_LEN;
	put_le32(buf + off + 8, 0xffffffffu);
	spit(bad, buf, len);
	assert_int_equal(read_all_limited(bad), 0);
	free(buf);

	buf = slurp(path, &len);
	off = find_section(buf, len, ARCHIVE_SEC_EVENTS, 0) + ARCHIVE_SEC_HDR_LEN;
	put_le32(buf + off, 0xfffffff0u);
	spit(bad, buf, len);
	assert_int_equal(read_all_limited(bad), 0);
	free(buf);
}

/* The same hostile length read from a pipe: no file size to check it against. */
static void test_hostile_pipe(void **state)
{
	enum { N = 40 };
	struct bp_event evs[N];
	char path[128], fdpath[64];
	unsigned char *buf;
	size_t len, off, nread;
	int fds[2], saved;

	path_in(path, sizeof(path), "small.bpfprof");
	write_small(path, evs, N);
	buf = slurp(path, &len);
	assert_true(len < 60000);	/* fits a pipe buffer */
	off = find_section(buf, len, ARCHIVE_SEC_EVENTS, 0);
	put_le64(buf + off + 8, 1ull << 40);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], buf, len), (ssize_t)len);
	close(fds[1]);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fds[0]);
	saved = quiet_begin();
	assert_int_equal(read_all(fdpath, NULL, 0, &nread), -EBADMSG);
	quiet_end(saved);
	close(fds[0]);
	free(buf);
}

static void test_newer_version(void **state)
{
	enum { N = 4 };
	struct bp_event evs[N];
	char path[128];
	unsigned char *buf;
	size_t len, nread, off;
	int saved;

	path_in(path, sizeof(path), "v2.bpfprof");
	write_small(path, evs, N);
	buf = slurp(path, &len);
	buf[8] = ARCHIVE_MAJOR + 1;
	spit(path, buf, len);
	saved = quiet_begin();
	assert_int_equal(read_all(path, NULL, 0, &nread), -ENOTSUP);
	quiet_end(saved);
	/* A newer minor version reads (its checksum covers the version). */
	buf[8] = ARCHIVE_MAJOR;
	buf[10] = ARCHIVE_MINOR + 3;
	off = find_section(buf, len, ARCHIVE_SEC_END, 0);
	put_le32(buf + off + 16 + 16, crc32(crc32(0, NULL, 0), buf, off));
	spit(path, buf, len);
	assert_int_equal(read_all(path, evs, N, &nread), 0);
	assert_int_equal(nread, N);
	free(buf);
}

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
	enum { N = 4 };
	struct bp_event evs[N];
	struct image *im = calloc(1, sizeof(*im));
	struct rawblock b = { .len = 0 };
	char path[128];
	unsigned char *buf;
	size_t len, nread;
	/* id 5 (zigzag 10), parent none, begin 100, dur 50, self 20 (dur - self 30),
	 * pid 100, tid 100, func 1, depth 0, flags 0, path 0 */
	const uint64_t call[] = { 10, 0, 200, 50, 30, 200, 200, 1, 0, 0, 0 };
	const uint64_t loss[] = { 2, 3, 1 };
	struct bp_event want[2];

	assert_non_null(im);
	path_in(path, sizeof(path), "fwd.bpfprof");
	write_small(path, evs, N);
	buf = slurp(path, &len);
	img_from_prefix(im, buf, len);
	img_section(im, 0x7777, 0, "future", 6);
	img_section(im, 0x7778, ARCHIVE_SEC_ZLIB, "\x01\x02", 2);
	rb_event(&b, 99, loss, 3, 0);		/* a kind from the future */
	rb_event(&b, ARCHIVE_EV_CALL, call, 11, 5);	/* with 5 bytes of new fields */
	rb_event(&b, ARCHIVE_EV_LOSS, loss, 3, 0);
	img_block(im, &b);
	img_finish(im);
	spit(path, im->buf, im->len);

	memset(want, 0, sizeof(want));
	want[0].kind = BP_EV_CALL;
	want[0].call = (struct bp_call){ .id = 5, .begin = 100, .end = 150, .self = 20,
					 .pid = 100, .tid = 100, .func = 1 };
	want[1].kind = BP_EV_LOSS;
	want[1].loss = (struct bp_loss){ .ts = 101, .count = 3, .cpu = 1 };
	assert_int_equal(read_all(path, want, 2, &nread), 0);
	assert_int_equal(nread, 2);
	free(buf);
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

	assert_int_equal(archive__open(path, &s, &r), 0);
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
	enum { N = 4 };
	struct bp_event evs[N];
	struct image *im = calloc(1, sizeof(*im));
	char path[128];
	unsigned char *buf;
	size_t len, nread, i;
	const uint64_t bad[][11] = {
		{ 10, 0, 200, 50, 20, 200, 200, 3, 0, 0, 0 },	/* func 3 of 3 */
		{ 10, 0, 200, 50, 20, 200, 200, 1, 0, 0, 4 },	/* path 4 of 4 */
		{ 10, 0, 200, 50, 20, 1ull << 40, 200, 1, 0, 0, 0 },	/* pid > u32 */
		{ 10, 0, 200, 50, 20, 200, 200, 1, 1ull << 33, 0, 0 },	/* depth > u32 */
	};
	int saved;

	assert_non_null(im);
	path_in(path, sizeof(path), "badidx.bpfprof");
	write_small(path, evs, N);
	buf = slurp(path, &len);
	saved = quiet_begin();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rawblock b = { .len = 0 };

		img_from_prefix(im, buf, len);
		rb_event(&b, ARCHIVE_EV_CALL, bad[i], 11, 0);
		img_block(im, &b);
		img_finish(im);
		spit(path, im->buf, im->len);
		assert_int_equal(read_all(path, NULL, 0, &nread), -EBADMSG);
		assert_int_equal(nread, 0);
	}
	/* A call cut short inside its own length. */
	{
		struct rawblock b = { .len = 0 };

		img_from_prefix(im, buf, len);
		rb_event(&b, ARCHIVE_EV_CALL, bad[0], 5, 0);
		img_block(im, &b);
		img_finish(im);
		spit(path, im->buf, im->len);
		assert_int_equal(read_all(path, NULL, 0, &nread), -EBADMSG);
	}
	quiet_end(saved);
	free(buf);
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
	enum { N = 4 };
	struct bp_event evs[N];
	struct image *im = calloc(1, sizeof(*im));
	const char *bad_ids[] = { "../../etc/x", "ABCDEF", "" };
	unsigned char sec[512], *buf;
	struct archive_reader *r = NULL;
	struct bp_session s;
	struct bp_event ev;
	char path[128], longid[200];
	size_t len, nread, n, i;
	int saved;

	assert_non_null(im);
	path_in(path, sizeof(path), "bid.bpfprof");
	write_small(path, evs, N);
	buf = slurp(path, &len);
	/* a good one */
	img_from_prefix(im, buf, len);
	put_le32(sec, 1);
	n = 4 + bid_row(sec + 4, 0, "00ff12");
	img_section(im, ARCHIVE_SEC_BUILDIDS, 0, sec, n);
	img_finish(im);
	spit(path, im->buf, im->len);
	assert_int_equal(archive__open(path, &s, &r), 0);
	while (archive__next(r, &ev) > 0)
		;
	assert_string_equal(s.modules[0].build_id, "00ff12");
	archive__close(r);
	session__free(&s);

	saved = quiet_begin();
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = 0;
	for (i = 0; i < 5; i++) {
		img_from_prefix(im, buf, len);
		put_le32(sec, 1);
		if (i < 3)
			n = 4 + bid_row(sec + 4, 0, bad_ids[i]);
		else if (i == 3)
			n = 4 + bid_row(sec + 4, 1000, "00ff");	/* no such module */
		else
			n = 4 + bid_row(sec + 4, 0, longid);	/* over 128 digits */
		img_section(im, ARCHIVE_SEC_BUILDIDS, 0, sec, n);
		img_finish(im);
		spit(path, im->buf, im->len);
		assert_int_equal(read_all(path, NULL, 0, &nread), -EBADMSG);
	}
	/* more rows than the section could hold */
	img_from_prefix(im, buf, len);
	put_le32(sec, 1000000);
	img_section(im, ARCHIVE_SEC_BUILDIDS, 0, sec, 4);
	img_finish(im);
	spit(path, im->buf, im->len);
	assert_int_equal(read_all(path, NULL, 0, &nread), -EBADMSG);
	quiet_end(saved);
	free(buf);
	free(im);
}

/* Data after END, a missing END, a wrong checksum. */
static void test_end_checks(void **state)
{
	enum { N = 10 };
	struct bp_event evs[N];
	char path[128];
	unsigned char *buf, *big;
	size_t len, nread, off;
	int saved;

	path_in(path, sizeof(path), "end.bpfprof");
	write_small(path, evs, N);
	buf = slurp(path, &len);
	big = malloc(len + 1);
	memcpy(big, buf, len);
	big[len] = 0;
	saved = quiet_begin();
	spit(path, big, len + 1);
	assert_int_equal(read_all(path, evs, N, &nread), -EBADMSG);
	assert_int_equal(nread, N);	/* the events were all fine */
	off = find_section(buf, len, ARCHIVE_SEC_END, 0);
	spit(path, buf, off);
	assert_int_equal(read_all(path, evs, N, &nread), -EBADMSG);
	assert_int_equal(nread, N);
	buf[off + 16 + 16] ^= 1;	/* the crc */
	spit(path, buf, len);
	assert_int_equal(read_all(path, evs, N, &nread), -EBADMSG);
	quiet_end(saved);
	free(big);
	free(buf);
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
	assert_int_equal(archive__open(pm, &m, &r), 0);
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
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_partial_everywhere),
		cmocka_unit_test(test_not_archive),
		cmocka_unit_test(test_hostile_lengths),
		cmocka_unit_test(test_hostile_pipe),
		cmocka_unit_test(test_newer_version),
		cmocka_unit_test(test_forward_compat),
		cmocka_unit_test(test_version_1_0),
		cmocka_unit_test(test_bad_index),
		cmocka_unit_test(test_end_checks),
		cmocka_unit_test(test_hostile_build_ids),
		cmocka_unit_test(test_merge),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
