/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the archive tests share (test_archive.c, test_archive_damage.c,
 * test_archive_compat.c): a scratch directory, files read and written whole,
 * a hand-built session and pseudo-random events, an archive written from them
 * and read back field for field, and the little-endian fields of an archive
 * image.  Include after <cmocka.h>.
 */
#ifndef BPFPROF_ARCHIVE_FIXTURE_H
#define BPFPROF_ARCHIVE_FIXTURE_H

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

static inline void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static inline int setup_dir(void **state)
{
	strcpy(dir, "/tmp/bpfprof-test-archive.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static inline int teardown_dir(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Silences stderr (each failed read prints its one line) around a block. */
static inline int quiet_begin(void)
{
	int saved = dup(2), null = open("/dev/null", O_WRONLY);

	dup2(null, 2);
	close(null);
	return saved;
}

static inline void quiet_end(int saved)
{
	dup2(saved, 2);
	close(saved);
}

static inline unsigned char *slurp(const char *path, size_t *len)
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

static inline void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* A session with every kind of table entry, including awkward values. */
static inline void build_session(struct bp_session *s, const char *host, uint32_t pid)
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

static inline uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static inline struct bp_event make_event(size_t i, const struct bp_session *s, uint32_t pid)
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

static inline void write_archive(const char *path, struct bp_session *s,
				 const struct bp_event *evs, size_t n, size_t grow_at)
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

static inline void assert_str_eq(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static inline void assert_event_eq(const struct bp_event *a, const struct bp_event *b)
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

static inline void assert_session_eq(const struct bp_session *a, const struct bp_session *b)
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
static inline size_t read_back(const char *path, const struct bp_session *want,
			       const struct bp_event *evs, size_t n)
{
	struct archive_reader *r = NULL;
	struct bp_session s;
	struct bp_event ev;
	size_t i = 0;
	int err;

	assert_int_equal(archive__open(path, false, &s, &r), 0);
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

/*
 * Opens and reads `path` to the end (`partial`: as archive__open reads an
 * unfinished recording); returns the final status, counts events.
 */
static inline int read_archive(const char *path, bool partial, const struct bp_event *evs,
			       size_t n, size_t *nread)
{
	struct archive_reader *r = NULL;
	struct bp_session s;
	struct bp_event ev;
	int err;

	*nread = 0;
	err = archive__open(path, partial, &s, &r);
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

/* read_archive() of a finished recording. */
static inline int read_all(const char *path, const struct bp_event *evs, size_t n, size_t *nread)
{
	return read_archive(path, false, evs, n, nread);
}

static inline void write_small(const char *path, struct bp_event *evs, size_t n)
{
	struct bp_session s;
	size_t i;

	build_session(&s, "host1", 100);
	for (i = 0; i < n; i++)
		evs[i] = make_event(i, &s, 100);
	write_archive(path, &s, evs, n, n + 1);
	session__free(&s);
}

#define SMALL_MAX	40

/* A small archive (write_small) to read back or damage: its events, file and bytes. */
struct small {
	struct bp_event evs[SMALL_MAX];
	size_t n;
	char path[128];
	unsigned char *buf;	/* malloc'd */
	size_t len;
};

/* n events (<= SMALL_MAX) written to DIR/name and read back into a->buf. */
static inline void small_image(struct small *a, const char *name, size_t n)
{
	assert_true(n <= SMALL_MAX);
	a->n = n;
	path_in(a->path, sizeof(a->path), name);
	write_small(a->path, a->evs, n);
	a->buf = slurp(a->path, &a->len);
}

static inline void put_le32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static inline void put_le64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static inline uint64_t get_le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Offset of the k-th section of `type` in an archive image, or 0. */
static inline size_t find_section(const unsigned char *buf, size_t len, uint32_t type, int k)
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

#endif /* BPFPROF_ARCHIVE_FIXTURE_H */
