/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the exporter tests share (test_formats.c, test_pprof.c,
 * test_speedscope.c): a session with known functions and call paths, hostile
 * names among them, the events of a standard recording, stack samples, a
 * chain of deep calls, and an exporter run over events into a file.  Include
 * after <cmocka.h> and helpers.h.
 */
#ifndef BPFPROF_FORMATS_FIXTURE_H
#define BPFPROF_FORMATS_FIXTURE_H

#define ODD_NAME "o;d\"d\\,x\ny"	/* ; " \ , and a newline */
#define BAD_NAME "bad\xff"		/* not UTF-8 */

struct fixture {
	char dir[64];
	char path[160];
	struct bp_session s;
	uint32_t f_main, f_run, f_malloc, f_odd, f_bad;
	uint32_t p_main, p_run, p_run_malloc, p_main_malloc, p_odd, p_bad;
};

static inline int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct bp_func f = { 0 };
	uint32_t mod, lib;

	if (!fx || unit__mkdtemp(fx->dir, NULL, 0, "formats", NULL))
		return -1;
	mod = unit__demo_session(&fx->s);
	fx->s.cmdline = strdup("./demo \"x\"");
	fx->s.hostname = strdup("host1");
	fx->s.kernel = strdup("6.1.0");
	fx->s.t0 = 1000000000ull;
	fx->s.realtime_offset = 1700000000000000000ll;
	fx->s.duration = 5000;
	lib = session__add_module(&fx->s, "/lib/x86_64-linux-gnu/libc.so.6");
	f.module = mod;
	f.name = "main";
	fx->f_main = session__add_func(&fx->s, &f);
	f.name = "run";
	fx->f_run = session__add_func(&fx->s, &f);
	f.name = "malloc";
	f.module = lib;
	fx->f_malloc = session__add_func(&fx->s, &f);
	f.module = mod;
	f.name = ODD_NAME;
	fx->f_odd = session__add_func(&fx->s, &f);
	f.name = BAD_NAME;
	fx->f_bad = session__add_func(&fx->s, &f);

	fx->p_main = session__path(&fx->s, 0, fx->f_main);
	fx->p_run = session__path(&fx->s, fx->p_main, fx->f_run);
	fx->p_run_malloc = session__path(&fx->s, fx->p_run, fx->f_malloc);
	fx->p_main_malloc = session__path(&fx->s, fx->p_main, fx->f_malloc);
	fx->p_odd = session__path(&fx->s, fx->p_run, fx->f_odd);
	fx->p_bad = session__path(&fx->s, fx->p_main, fx->f_bad);

	strcpy(session__thread(&fx->s, 101, 100)->name, "worker");
	*state = fx;
	return 0;
}

static inline int teardown(void **state)
{
	struct fixture *fx = *state;

	return unit__fixture_free(fx->dir, &fx->s, fx);
}

/* A call of pid 100 (not flagged). */
static inline struct bp_event call(uint64_t id, uint64_t parent_id, uint32_t func,
				   uint32_t path, uint32_t tid, uint64_t begin, uint64_t end,
				   uint64_t self, uint32_t depth)
{
	return unit__call(id, parent_id, func, path, tid, begin, end, self, depth, 0);
}

static inline struct bp_event sample(uint64_t ts, uint64_t weight, uint32_t tid,
				     uint32_t path, uint32_t flags)
{
	struct bp_event ev = { .kind = BP_EV_SAMPLE };

	ev.sample = (struct bp_sample){ .ts = ts, .weight = weight, .pid = UNIT_PID, .tid = tid,
					.path = path, .flags = flags };
	return ev;
}

/* kind from src_func on tid 100 to dst_func on tid 101, both of pid 100. */
static inline struct bp_event edge(uint32_t kind, uint32_t src_func, uint32_t dst_func,
				   uint64_t src_ts, uint64_t dst_ts)
{
	struct bp_event ev = { .kind = BP_EV_EDGE };

	ev.edge = (struct bp_edge){ .kind = kind, .src_func = src_func, .dst_func = dst_func,
				    .src_ts = src_ts, .dst_ts = dst_ts, .src_pid = UNIT_PID,
				    .src_tid = 100, .dst_pid = UNIT_PID, .dst_tid = 101 };
	return ev;
}

/* Sampled stacks: from libc's start (no symbol) through main, kernel frames last. */
struct stacks {
	uint32_t f_unknown, f_kernel;
	uint32_t s_main, s_malloc, s_sleep;	/* U>main, U>main>run>malloc, U>main>do_nanosleep */
};

static inline void make_stacks(struct fixture *fx, struct stacks *st)
{
	struct bp_func f = { 0 };
	uint32_t u_main;

	f.name = "[unknown] libc.so.6+0x2724a";
	f.module = 1;
	f.flags = BP_FUNC_UNKNOWN | BP_FUNC_SAMPLED;
	st->f_unknown = session__add_func(&fx->s, &f);
	f.name = "do_nanosleep";
	f.module = session__add_module(&fx->s, "[kernel]");
	f.flags = BP_FUNC_KERNEL | BP_FUNC_SAMPLED;
	st->f_kernel = session__add_func(&fx->s, &f);
	u_main = session__path(&fx->s, session__path(&fx->s, 0, st->f_unknown), fx->f_main);
	st->s_main = u_main;
	st->s_malloc = session__path(&fx->s, session__path(&fx->s, u_main, fx->f_run), fx->f_malloc);
	st->s_sleep = session__path(&fx->s, u_main, st->f_kernel);
}

/*
 * cpu: 3 samples in malloc and 1 in main on tid 100, 1 in malloc on tid 101
 * (1000 ns each); off-cpu: 5000 ns asleep in the kernel, 700 ns in malloc.
 */
static inline int sample_events(struct fixture *fx, const struct stacks *st,
				struct bp_event *ev)
{
	int n = 0;

	ev[n++] = sample(300, 1000, 100, st->s_malloc, 0);
	ev[n++] = sample(100, 1000, 100, st->s_malloc, 0);
	ev[n++] = sample(200, 1000, 100, st->s_main, 0);
	ev[n++] = sample(400, 1000, 100, st->s_malloc, BP_SAMPLE_F_TRUNCATED);
	ev[n++] = sample(500, 5000, 100, st->s_sleep, BP_SAMPLE_F_OFFCPU);
	ev[n++] = sample(150, 1000, 101, st->s_malloc, 0);
	ev[n++] = sample(600, 700, 101, st->s_malloc, BP_SAMPLE_F_OFFCPU);
	return n;
}

/*
 * The recording most tests write, in the order calls END (children first):
 *
 *   tid 100: main [0,2000] > run [100,1100] > malloc x2, odd;  main > malloc, bad
 *   tid 101: main [3000,3010]
 */
static inline int standard_events(struct fixture *fx, struct bp_event *ev)
{
	int n = 0;

	ev[n++] = call(3, 2, fx->f_malloc, fx->p_run_malloc, 100, 200, 300, 100, 2);
	ev[n++] = call(4, 2, fx->f_malloc, fx->p_run_malloc, 100, 400, 600, 200, 2);
	ev[n++] = unit__loss(650, 42, 3);
	ev[n++] = call(5, 2, fx->f_odd, fx->p_odd, 100, 700, 705, 5, 2);
	ev[n++] = call(2, 1, fx->f_run, fx->p_run, 100, 100, 1100, 695, 1);
	ev[n++] = call(6, 1, fx->f_malloc, fx->p_main_malloc, 100, 1200, 1207, 7, 1);
	ev[n++] = call(7, 1, fx->f_bad, fx->p_bad, 100, 1300, 1301, 1, 1);
	ev[n++] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 2000, 2000 - 1000 - 7 - 1, 0);
	ev[n++] = call(8, 0, fx->f_main, fx->p_main, 101, 3000, 3010, 10, 0);
	return n;
}

static inline void write_out(struct fixture *fx, const struct exporter_ops *ops,
			     const char *name, const struct bp_event *evs, int n)
{
	struct exporter *e = NULL;
	int i;

	snprintf(fx->path, sizeof(fx->path), "%s/%s", fx->dir, name);
	assert_int_equal(exporter__new(ops, fx->path, &fx->s, &e), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(exporter__event(e, &fx->s, &evs[i]), 0);
	assert_int_equal(exporter__finish(e, &fx->s), 0);
	exporter__free(e);
}

static inline void write_standard(struct fixture *fx, const struct exporter_ops *ops,
				  const char *name)
{
	struct bp_event evs[16];

	write_out(fx, ops, name, evs, standard_events(fx, evs));
}

/*
 * One chain of `depth` nested calls of run on tid 100, in the order they end
 * (innermost first), each 1 ns of self time (free it).
 */
static inline struct bp_event *deep_calls(struct fixture *fx, size_t depth)
{
	struct bp_event *ev = calloc(depth, sizeof(*ev));
	uint32_t *paths = calloc(depth + 1, sizeof(*paths));
	size_t i;

	assert_non_null(ev);
	assert_non_null(paths);
	for (i = 1; i <= depth; i++)
		paths[i] = session__path(&fx->s, paths[i - 1], fx->f_run);
	for (i = depth; i >= 1; i--)
		ev[depth - i] = call(i, i - 1, fx->f_run, paths[i], 100, i, 2 * depth - i, 1, i - 1);
	free(paths);
	return ev;
}

/* The file last written (fx->path) holds exactly `want`. */
static inline void assert_file_is(struct fixture *fx, const char *want)
{
	char *got = unit__slurp(fx->path, NULL);

	assert_string_equal(got, want);
	free(got);
}

#endif /* BPFPROF_FORMATS_FIXTURE_H */
