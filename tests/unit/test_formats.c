// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The speedscope, pprof, folded, CSV and DOT exporters on known events:
 * exact output where the format is text, a hand-written protobuf decoder for
 * pprof (the varint and length-delimited wire format read back field by
 * field, independently of the encoder), hostile names escaped for each
 * syntax, and the per-path aggregates (recursion, deep stacks, cpu and
 * off-cpu samples); stack samples in pprof, folded and speedscope, and
 * dependency edges in DOT.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "exporters/exporter.h"
#include "base/escape.h"
#include "exporters/pathagg.h"
#include "exporters/protobuf.h"
#include "model/session.h"
#include "helpers.h"

#define ODD_NAME "o;d\"d\\,x\ny"	/* ; " \ , and a newline */
#define BAD_NAME "bad\xff"		/* not UTF-8 */

struct fixture {
	char dir[64];
	char path[160];
	struct bp_session s;
	uint32_t f_main, f_run, f_malloc, f_odd, f_bad;
	uint32_t p_main, p_run, p_run_malloc, p_main_malloc, p_odd, p_bad;
};

static int setup(void **state)
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

static int teardown(void **state)
{
	struct fixture *fx = *state;

	return unit__fixture_free(fx->dir, &fx->s, fx);
}

/* A call of pid 100 (not flagged). */
static struct bp_event call(uint64_t id, uint64_t parent_id, uint32_t func, uint32_t path,
			    uint32_t tid, uint64_t begin, uint64_t end, uint64_t self, uint32_t depth)
{
	return unit__call(id, parent_id, func, path, tid, begin, end, self, depth, 0);
}

static struct bp_event sample(uint64_t ts, uint64_t weight, uint32_t tid, uint32_t path,
			      uint32_t flags)
{
	struct bp_event ev = { .kind = BP_EV_SAMPLE };

	ev.sample = (struct bp_sample){ .ts = ts, .weight = weight, .pid = UNIT_PID, .tid = tid,
					.path = path, .flags = flags };
	return ev;
}

/* kind from src_func on tid 100 to dst_func on tid 101, both of pid 100. */
static struct bp_event edge(uint32_t kind, uint32_t src_func, uint32_t dst_func, uint64_t src_ts,
			    uint64_t dst_ts)
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

static void make_stacks(struct fixture *fx, struct stacks *st)
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
static int sample_events(struct fixture *fx, const struct stacks *st, struct bp_event *ev)
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
static int standard_events(struct fixture *fx, struct bp_event *ev)
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

static void write_out(struct fixture *fx, const struct exporter_ops *ops, const char *name,
		      const struct bp_event *evs, int n)
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

static void write_standard(struct fixture *fx, const struct exporter_ops *ops, const char *name)
{
	struct bp_event evs[16];

	write_out(fx, ops, name, evs, standard_events(fx, evs));
}

/* The file last written (fx->path) holds exactly `want`. */
static void assert_file_is(struct fixture *fx, const char *want)
{
	char *got = unit__slurp(fx->path, NULL);

	assert_string_equal(got, want);
	free(got);
}

/* ------------------------------------------------------------ lookup */

static void test_lookup(void **state)
{
	(void)state;
	assert_ptr_equal(exporter__for_path("a.speedscope.json"), &speedscope_exporter);
	assert_ptr_equal(exporter__for_path("a.json"), &chrome_exporter);
	assert_ptr_equal(exporter__for_path("cpu.pb.gz"), &pprof_exporter);
	assert_ptr_equal(exporter__for_path("x.folded"), &folded_exporter);
	assert_ptr_equal(exporter__for_path("x.CSV"), &csv_exporter);
	assert_ptr_equal(exporter__for_path("graph.dot"), &dot_exporter);
	assert_ptr_equal(exporter__find("speedscope"), &speedscope_exporter);
	assert_ptr_equal(exporter__find("pprof"), &pprof_exporter);
	assert_ptr_equal(exporter__find("folded"), &folded_exporter);
	assert_ptr_equal(exporter__find("csv"), &csv_exporter);
	assert_ptr_equal(exporter__find("dot"), &dot_exporter);
}

/* ------------------------------------------------------------ escaping */

static char *capture(void (*fn)(FILE *, const char *), const char *s)
{
	struct unit_mem m;

	fn(unit__mem_open(&m), s);
	return unit__mem_close(&m);
}

static void check_esc(void (*fn)(FILE *, const char *), const char *in, const char *want)
{
	char *got = capture(fn, in);

	if (strcmp(got, want))
		fail_msg("escaping [%s]: got [%s], want [%s]", in, got, want);
	free(got);
}

static void test_csv_escape(void **state)
{
	(void)state;
	check_esc(csv_str, "plain", "plain");
	check_esc(csv_str, "", "");
	check_esc(csv_str, NULL, "");
	check_esc(csv_str, "a,b", "\"a,b\"");
	check_esc(csv_str, "say \"hi\"", "\"say \"\"hi\"\"\"");
	check_esc(csv_str, "two\nlines", "\"two\nlines\"");
	check_esc(csv_str, "cr\r", "\"cr\r\"");
	check_esc(csv_str, " lead", "\" lead\"");
	check_esc(csv_str, "trail ", "\"trail \"");
	check_esc(csv_str, "in side", "in side");
	check_esc(csv_str, "ns::f(int, char)", "\"ns::f(int, char)\"");
	check_esc(csv_str, "back\\slash;semi", "back\\slash;semi");
}

static void test_dot_escape(void **state)
{
	(void)state;
	check_esc(dot_str, "plain", "plain");
	check_esc(dot_str, "q\"q", "q\\\"q");
	check_esc(dot_str, "back\\n", "back\\\\n");	/* not a label line break */
	check_esc(dot_str, "nl\nx\ty", "nl x y");
	check_esc(dot_str, "bad\xff\xc3", "bad??");
	check_esc(dot_str, "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac");
	check_esc(dot_str, "\xed\xa0\x80", "???");	/* a UTF-16 surrogate is not UTF-8 */
	check_esc(dot_str, "operator<<{}|", "operator<<{}|");
}

static void test_folded_escape(void **state)
{
	(void)state;
	check_esc(folded_str, "a;b", "a:b");
	check_esc(folded_str, "f(int, char) const", "f(int, char) const");
	check_esc(folded_str, "x\ny\r", "x y ");
}

/* ------------------------------------------------------------ CSV */

static void test_csv(void **state)
{
	struct fixture *fx = *state;

	write_standard(fx, &csv_exporter, "t.csv");
	assert_file_is(fx,
		"pid,tid,function,module,start_ns,duration_ns,depth,self_ns,id,parent_id,flags,args,return\n"
		"100,100,malloc,/lib/x86_64-linux-gnu/libc.so.6,200,100,2,100,3,2,,,\n"
		"100,100,malloc,/lib/x86_64-linux-gnu/libc.so.6,400,200,2,200,4,2,,,\n"
		"0,0,,,650,0,,,,,lost|count=42|cpu=3,,\n"
		"100,100,\"o;d\"\"d\\,x\ny\",/usr/bin/demo,700,5,2,5,5,2,,,\n"
		"100,100,run,/usr/bin/demo,100,1000,1,695,2,1,,,\n"
		"100,100,malloc,/lib/x86_64-linux-gnu/libc.so.6,1200,7,1,7,6,1,,,\n"
		"100,100,bad\xff,/usr/bin/demo,1300,1,1,1,7,1,,,\n"
		"100,100,main,/usr/bin/demo,0,2000,0,992,1,0,,,\n"
		"100,101,main,/usr/bin/demo,3000,10,0,10,8,0,,,\n");
}

static void test_csv_flags(void **state)
{
	struct fixture *fx = *state;
	struct bp_event ev[2];
	char *out;

	ev[0] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 10, 10, 0);
	ev[0].call.flags = BP_CALL_UNFINISHED | BP_CALL_UNWOUND;
	ev[1] = call(2, 0, 999, 0, 100, 20, 10, 0, 0);	/* unknown function, end < begin */
	ev[1].call.flags = BP_CALL_NO_ENTRY | BP_CALL_NO_RETPROBE;
	write_out(fx, &csv_exporter, "f.csv", ev, 2);
	out = unit__slurp(fx->path, NULL);
	unit__assert_contains(out, ",0,10,0,10,1,0,unfinished|unwound,,\n");
	unit__assert_contains(out, "100,100,[unknown],,20,0,0,0,2,0,began_before_recording|no_retprobe,,\n");
	free(out);
}

/* Samples and edges are not CSV rows: the file is the same without them. */
static void test_csv_calls_only(void **state)
{
	struct fixture *fx = *state;
	struct bp_event ev[32];
	struct stacks st;
	char *want, *got;
	int n;

	make_stacks(fx, &st);
	write_standard(fx, &csv_exporter, "calls.csv");
	want = unit__slurp(fx->path, NULL);
	n = standard_events(fx, ev);
	n += sample_events(fx, &st, ev + n);
	ev[n++] = edge(BP_EDGE_WAKEUP, fx->f_run, fx->f_malloc, 10, 20);
	write_out(fx, &csv_exporter, "all.csv", ev, n);
	got = unit__slurp(fx->path, NULL);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* ------------------------------------------------------------ folded */

static void test_folded(void **state)
{
	struct fixture *fx = *state;
	char *out;

	write_standard(fx, &folded_exporter, "t.folded");
	out = unit__slurp(fx->path, NULL);
	/* both threads' main summed; sorted; the odd name made safe */
	assert_string_equal(out,
		"main 1002\n"
		"main;bad\xff 1\n"
		"main;malloc 7\n"
		"main;run 695\n"
		"main;run;malloc 300\n"
		"main;run;o:d\"d\\,x y 5\n");
	free(out);
}

/* Two functions with one name (in two modules) are one frame in text: one line. */
static void test_folded_merges_same_text(void **state)
{
	struct fixture *fx = *state;
	struct bp_func f = { .name = "main", .module = 1 };
	uint32_t f2 = session__add_func(&fx->s, &f);
	uint32_t p2 = session__path(&fx->s, 0, f2);
	struct bp_event ev[2];

	ev[0] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 10, 10, 0);
	ev[1] = call(2, 0, f2, p2, 100, 20, 25, 5, 0);
	write_out(fx, &folded_exporter, "m.folded", ev, 2);
	assert_file_is(fx, "main 15\n");
}

static void test_folded_empty(void **state)
{
	struct fixture *fx = *state;

	write_out(fx, &folded_exporter, "e.folded", NULL, 0);
	assert_file_is(fx, "");
}

/* With samples, values are sampled ns; off-cpu stacks end in "[off-cpu]". */
static void test_folded_samples(void **state)
{
	static const char want[] =
		"[unknown] libc.so.6+0x2724a;main 1000\n"
		"[unknown] libc.so.6+0x2724a;main;do_nanosleep;[off-cpu] 5000\n"
		"[unknown] libc.so.6+0x2724a;main;run;malloc 4000\n"
		"[unknown] libc.so.6+0x2724a;main;run;malloc;[off-cpu] 700\n";
	struct fixture *fx = *state;
	struct bp_event ev[32];
	struct stacks st;
	int n;

	make_stacks(fx, &st);
	n = sample_events(fx, &st, ev);
	write_out(fx, &folded_exporter, "s.folded", ev, n);
	assert_file_is(fx, want);

	/* calls recorded beside the samples are left out: no time counted twice */
	n = standard_events(fx, ev);
	n += sample_events(fx, &st, ev + n);
	write_out(fx, &folded_exporter, "m.folded", ev, n);
	assert_file_is(fx, want);
}

/* ------------------------------------------------------------ DOT */

static void test_dot(void **state)
{
	struct fixture *fx = *state;
	char cmd[1024];
	char *out;

	write_standard(fx, &dot_exporter, "t.dot");
	out = unit__slurp(fx->path, NULL);
	unit__assert_contains(out, "digraph bpfprof {\n\tgraph [label=\"./demo \\\"x\\\"\\n8 calls, "
			"42 records lost\"");
	unit__assert_contains(out, "\tf0 [label=\"main\\n2 calls\\ntotal 2.01 us\\nself 1.00 us\", "
			"tooltip=\"/usr/bin/demo\"");
	unit__assert_contains(out, "\tf2 [label=\"malloc\\n3 calls\\ntotal 307 ns\\nself 307 ns\", "
			"tooltip=\"/lib/x86_64-linux-gnu/libc.so.6\"");
	unit__assert_contains(out, "\tf3 [label=\"o;d\\\"d\\\\,x y\\n1 call\\n");
	unit__assert_contains(out, "\tf4 [label=\"bad?\\n1 call\\n");
	unit__assert_contains(out, "\tf0 -> f1 [label=\"1\"");
	unit__assert_contains(out, "\tf0 -> f2 [label=\"1\"");
	unit__assert_contains(out, "\tf0 -> f4 [label=\"1\"");
	unit__assert_contains(out, "\tf1 -> f2 [label=\"2\"");
	unit__assert_contains(out, "\tf1 -> f3 [label=\"1\"");
	assert_int_equal(strstr(out, "\n}\n") - out + 3, (long)strlen(out));
	free(out);

	/* Graphviz itself decides whether the escaping holds. */
	if (access("/usr/bin/dot", X_OK)) {
		skip();
		return;
	}
	snprintf(cmd, sizeof(cmd), "/usr/bin/dot -Tsvg '%s' > '%s.svg' 2> '%s.err' && test ! -s "
		 "'%s.err'", fx->path, fx->path, fx->path, fx->path);
	assert_int_equal(system(cmd), 0);
}

/* Dependency edges: dashed, one per (kind, source, target), coloured by kind. */
static void test_dot_edges(void **state)
{
	struct fixture *fx = *state;
	struct bp_event ev[32];
	char cmd[1024];
	char *out;
	int n;

	n = standard_events(fx, ev);
	ev[n++] = edge(BP_EDGE_WAKEUP, fx->f_run, fx->f_malloc, 100, 110);
	ev[n++] = edge(BP_EDGE_WAKEUP, fx->f_run, fx->f_malloc, 200, 230);
	ev[n++] = edge(BP_EDGE_FORK, fx->f_main, fx->f_run, 5, 50);
	ev[n++] = edge(BP_EDGE_DATA, fx->f_malloc, fx->f_odd, 300, 700);
	ev[n++] = edge(BP_EDGE_WAKEUP, fx->f_bad, 12345, 1, 2);	/* no such function: left out */
	write_out(fx, &dot_exporter, "e.dot", ev, n);
	out = unit__slurp(fx->path, NULL);
	/* the title counts the edges drawn */
	unit__assert_contains(out, "\\n8 calls, 4 dependency edges, 42 records lost\"");
	unit__assert_contains(out, "\tf0 -> f1 [label=\"fork 1\", style=dashed, color=\"#1f77b4\", "
			"fontcolor=\"#1f77b4\", constraint=false];\n");
	unit__assert_contains(out, "\tf1 -> f2 [label=\"wakeup 2\", style=dashed, color=\"#e6550d\", "
			"fontcolor=\"#e6550d\", constraint=false, tooltip=\"wakeup: 2, mean "
			"wake-to-run 20 ns\"];\n");
	unit__assert_contains(out, "\tf2 -> f3 [label=\"data 1\", style=dashed, color=\"#2ca02c\", "
			"fontcolor=\"#2ca02c\", constraint=false];\n");
	/* the call graph is still there */
	unit__assert_contains(out, "\tf1 -> f2 [label=\"2\"");
	assert_null(strstr(out, "12345"));
	free(out);

	/* a function only an edge names still gets its node */
	n = 0;
	ev[n++] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 10, 10, 0);
	ev[n++] = edge(BP_EDGE_WAKEUP, fx->f_main, fx->f_bad, 3, 4);
	write_out(fx, &dot_exporter, "n.dot", ev, n);
	out = unit__slurp(fx->path, NULL);
	unit__assert_contains(out, "\tf4 [label=\"bad?\\n0 calls\\n");
	unit__assert_contains(out, "\tf0 -> f4 [label=\"wakeup 1\"");
	free(out);

	if (access("/usr/bin/dot", X_OK)) {
		skip();
		return;
	}
	snprintf(cmd, sizeof(cmd), "/usr/bin/dot -Tsvg '%s/e.dot' > '%s/e.svg' 2> '%s/e.err' && "
		 "test ! -s '%s/e.err' && grep -q '>wakeup 2</text>' '%s/e.svg'", fx->dir, fx->dir,
		 fx->dir, fx->dir, fx->dir);
	assert_int_equal(system(cmd), 0);
}

/* A recursive function's total counts its outermost activation only. */
static void test_recursion_totals(void **state)
{
	struct fixture *fx = *state;
	struct path_agg a = { 0 };
	struct func_stat *fs = NULL;
	struct bp_event ev[4];
	size_t n, i;
	uint32_t p1, p2, p3;

	p1 = session__path(&fx->s, fx->p_run, fx->f_main);	/* main > run > main > main */
	p2 = session__path(&fx->s, p1, fx->f_main);
	p3 = session__path(&fx->s, p1, fx->f_malloc);
	ev[0] = call(4, 3, fx->f_main, p2, 100, 30, 50, 20, 3);
	ev[1] = call(5, 3, fx->f_malloc, p3, 100, 60, 70, 10, 3);
	ev[2] = call(3, 2, fx->f_main, p1, 100, 20, 80, 30, 2);
	ev[3] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 100, 40, 0);
	for (i = 0; i < 4; i++)
		path_agg__event(&a, &fx->s, &ev[i]);
	path_agg__funcs(&a, &fx->s, &fs, &n);
	assert_true(n > fx->f_malloc);
	assert_int_equal(fs[fx->f_main].calls, 3);
	assert_int_equal(fs[fx->f_main].self, 90);
	assert_int_equal(fs[fx->f_main].total, 100);	/* not 100 + 60 + 20 */
	assert_int_equal(fs[fx->f_malloc].total, 10);
	assert_int_equal(fs[fx->f_run].calls, 0);
	free(fs);
	path_agg__free(&a);
}

/* ------------------------------------------------------------ deep stacks */

struct collected {
	uint32_t n, ntrunc;
	uint64_t calls, trunc_calls, trunc_self;
	uint32_t trunc_path;
};

static int collect(void *ctx, const struct path_sample *ps)
{
	struct collected *c = ctx;

	c->n++;
	c->calls += ps->calls;
	if (ps->truncated) {
		c->ntrunc++;
		c->trunc_calls += ps->calls;
		c->trunc_self += ps->self;
		c->trunc_path = ps->path;
	}
	return 0;
}

/* Adds a recursion DEPTH deep (one call per level, self 1 ns); returns the paths. */
static uint32_t *deep(struct fixture *fx, struct path_agg *a, size_t depth)
{
	uint32_t *paths = calloc(depth + 1, sizeof(*paths));
	struct bp_event ev;
	size_t i;

	assert_non_null(paths);
	for (i = 1; i <= depth; i++)
		paths[i] = session__path(&fx->s, paths[i - 1], fx->f_run);
	for (i = depth; i >= 1; i--) {
		ev = call(i, i - 1, fx->f_run, paths[i], 100, i, 2 * depth - i, 1, i - 1);
		path_agg__event(a, &fx->s, &ev);
	}
	return paths;
}

static void test_deep_stacks_cut(void **state)
{
	struct fixture *fx = *state;
	struct path_agg a = { 0 };
	struct collected c = { 0 };
	uint32_t *paths = deep(fx, &a, PATH_MAX_STACK + 88);

	assert_int_equal(path_agg__for_each(&a, &fx->s, PATH_MAX_STACK, collect, &c), 0);
	/* every path up to the limit as is; the 88 below merged under the cut */
	assert_int_equal(c.n, PATH_MAX_STACK + 1);
	assert_int_equal(c.ntrunc, 1);
	assert_int_equal(c.calls, PATH_MAX_STACK + 88);
	assert_int_equal(c.trunc_calls, 88);
	assert_int_equal(c.trunc_self, 88);
	assert_int_equal(c.trunc_path, paths[PATH_MAX_STACK - 1]);
	free(paths);
	path_agg__free(&a);
}

static void test_deep_folded(void **state)
{
	struct fixture *fx = *state;
	size_t depth = PATH_MAX_STACK + 10, i;
	struct bp_event *ev = calloc(depth, sizeof(*ev));
	uint32_t *paths = calloc(depth + 1, sizeof(*paths));
	char *out, *last;

	assert_non_null(ev);
	assert_non_null(paths);
	for (i = 1; i <= depth; i++)
		paths[i] = session__path(&fx->s, paths[i - 1], fx->f_run);
	for (i = depth; i >= 1; i--)
		ev[depth - i] = call(i, i - 1, fx->f_run, paths[i], 100, i, 2 * depth - i, 1, i - 1);
	write_out(fx, &folded_exporter, "d.folded", ev, depth);
	out = unit__slurp(fx->path, NULL);
	last = strstr(out, ";" PATH_TRUNCATED_NAME " 10\n");
	assert_non_null(last);
	/* PATH_MAX_STACK - 1 frames kept above the marker */
	for (i = 0; last > out && last[-1] != '\n'; last--)
		i += *last == ';';
	assert_int_equal(i, PATH_MAX_STACK - 1);
	free(out);
	free(paths);
	free(ev);
}

/* ------------------------------------------------------------ sample counters */

struct seen {
	uint32_t path[8];
	struct path_sample ps[8];
	size_t n;
};

static int remember(void *ctx, const struct path_sample *ps)
{
	struct seen *v = ctx;

	assert_true(v->n < 8);
	v->path[v->n] = ps->path;
	v->ps[v->n++] = *ps;
	return 0;
}

static const struct path_sample *seen_path(const struct seen *v, uint32_t path)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (v->path[i] == path)
			return &v->ps[i];
	fail_msg("path %u not visited", path);
	return NULL;
}

static void test_path_agg_samples(void **state)
{
	struct fixture *fx = *state;
	struct path_agg a = { 0 };
	struct seen v = { 0 };
	struct bp_event ev[32];
	const struct path_sample *ps;
	struct stacks st;
	int n, i;

	make_stacks(fx, &st);
	n = sample_events(fx, &st, ev);
	ev[n++] = sample(700, 1000, 100, 0, 0);			/* no stack */
	ev[n++] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 800, 800, 0);
	for (i = 0; i < n; i++)
		path_agg__event(&a, &fx->s, &ev[i]);
	assert_int_equal(a.ncalls, 1);
	assert_int_equal(a.nsamples, 6);
	assert_int_equal(a.cpu_ns, 6000);
	assert_int_equal(a.noffcpu, 2);
	assert_int_equal(a.offcpu_ns, 5700);
	assert_int_equal(a.nopath, 1);
	assert_int_equal(a.end, 500 + 5000);	/* the end of the longest off-cpu interval */

	/* paths with calls or samples, nothing else (not U, nor U>main>run) */
	assert_int_equal(path_agg__for_each(&a, &fx->s, PATH_MAX_STACK, remember, &v), 0);
	assert_int_equal(v.n, 4);
	ps = seen_path(&v, fx->p_main);
	assert_int_equal(ps->calls, 1);
	assert_int_equal(ps->self, 800);
	assert_int_equal(ps->cpu_samples + ps->offcpu, 0);
	ps = seen_path(&v, st.s_malloc);
	assert_int_equal(ps->calls, 0);
	assert_int_equal(ps->cpu_samples, 4);
	assert_int_equal(ps->cpu_ns, 4000);
	assert_int_equal(ps->offcpu, 1);
	assert_int_equal(ps->offcpu_ns, 700);
	ps = seen_path(&v, st.s_main);
	assert_int_equal(ps->cpu_samples, 1);
	assert_int_equal(ps->offcpu, 0);
	ps = seen_path(&v, st.s_sleep);
	assert_int_equal(ps->cpu_samples, 0);
	assert_int_equal(ps->offcpu_ns, 5000);
	assert_false(ps->truncated);
	path_agg__free(&a);
}

/* Sample stacks deeper than the cut are merged like calls, counters and all. */
static void test_path_agg_samples_cut(void **state)
{
	struct fixture *fx = *state;
	struct path_agg a = { 0 };
	struct collected c = { 0 };
	struct seen v = { 0 };
	uint32_t p = 0, anchor = 0;
	struct bp_event ev;
	size_t i;

	for (i = 1; i <= 6; i++) {
		p = session__path(&fx->s, p, fx->f_run);
		if (i == 3)
			anchor = p;
		if (i >= 4) {	/* depths 4, 5, 6: below a cut at 4 frames */
			ev = sample(i, 10 * i, 100, p, i == 6 ? BP_SAMPLE_F_OFFCPU : 0);
			path_agg__event(&a, &fx->s, &ev);
		}
	}
	assert_int_equal(path_agg__for_each(&a, &fx->s, 4, collect, &c), 0);
	assert_int_equal(c.calls, 0);
	assert_int_equal(path_agg__for_each(&a, &fx->s, 4, remember, &v), 0);
	/* depth 4 as is; 5 and 6 under the marker below the first 3 frames */
	assert_int_equal(v.n, 2);
	assert_false(v.ps[0].truncated);
	assert_int_equal(v.ps[0].cpu_ns, 40);
	assert_true(v.ps[1].truncated);
	assert_int_equal(v.path[1], anchor);
	assert_int_equal(v.ps[1].cpu_samples, 1);
	assert_int_equal(v.ps[1].cpu_ns, 50);
	assert_int_equal(v.ps[1].offcpu, 1);
	assert_int_equal(v.ps[1].offcpu_ns, 60);
	path_agg__free(&a);
}

/* ------------------------------------------------------------ protobuf */

static void check_varint(uint64_t v, const uint8_t *want, size_t n)
{
	struct pb_buf b = { 0 };

	pb_varint(&b, v);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.data, want, n);
	assert_int_equal(pb_varint_len(v), n);
	pb_free(&b);
}

static void test_varint(void **state)
{
	struct pb_buf b = { 0 };
	uint64_t vals[3] = { 3, 270, 86942 };

	(void)state;
	check_varint(0, (const uint8_t *)"\x00", 1);
	check_varint(1, (const uint8_t *)"\x01", 1);
	check_varint(127, (const uint8_t *)"\x7f", 1);
	check_varint(128, (const uint8_t *)"\x80\x01", 2);
	check_varint(150, (const uint8_t *)"\x96\x01", 2);
	check_varint(300, (const uint8_t *)"\xac\x02", 2);
	check_varint(UINT64_MAX, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
	/* int64 -1 is its two's complement: ten bytes */
	check_varint((uint64_t)-1ll, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
		     10);

	/* the examples of the protobuf encoding guide */
	pb_uint(&b, 1, 150);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "\x08\x96\x01", 3);
	pb_reset(&b);
	pb_str(&b, 2, "testing");
	assert_int_equal(b.len, 9);
	assert_memory_equal(b.data, "\x12\x07testing", 9);
	pb_reset(&b);
	pb_packed(&b, 4, vals, 3);
	assert_int_equal(b.len, 8);
	assert_memory_equal(b.data, "\x22\x06\x03\x8e\x02\x9e\xa7\x05", 8);
	pb_reset(&b);
	pb_uint(&b, 1, 0);	/* proto3: a zero scalar is not written */
	pb_packed(&b, 2, vals, 0);
	assert_int_equal(b.len, 0);
	pb_str(&b, 6, "");	/* a string table entry is, even empty */
	assert_int_equal(b.len, 2);
	assert_memory_equal(b.data, "\x32\x00", 2);
	pb_free(&b);
}

/* A reader for the wire format, written from the encoding spec, not from protobuf.c. */
struct rd {
	const uint8_t *p, *end;
};

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;
	int shift = 0;

	for (;;) {
		uint8_t byte;

		assert_true(r->p < r->end);
		assert_true(shift < 64);
		byte = *r->p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
		shift += 7;
	}
}

/* Next field: its number, and either its varint value or its bytes in *sub. */
static bool rd_field(struct rd *r, uint32_t *field, uint64_t *v, struct rd *sub)
{
	uint64_t key, len;

	if (r->p == r->end)
		return false;
	key = rd_varint(r);
	*field = key >> 3;
	switch (key & 7) {
	case 0:
		*v = rd_varint(r);
		sub->p = sub->end = NULL;
		break;
	case 2:
		len = rd_varint(r);
		assert_true(len <= (uint64_t)(r->end - r->p));
		sub->p = r->p;
		sub->end = r->p + len;
		r->p += len;
		break;
	default:
		fail_msg("unexpected wire type %u", (unsigned)(key & 7));
	}
	return true;
}

/* A repeated integer field: packed (one length-delimited run) or one varint. */
static size_t rd_ints(const struct rd *sub, uint64_t v, uint64_t *out, size_t max)
{
	struct rd r = *sub;
	size_t n = 0;

	if (!sub->p) {
		out[0] = v;
		return 1;
	}
	while (r.p < r.end) {
		assert_true(n < max);
		out[n++] = rd_varint(&r);
	}
	return n;
}

#define MAXN 16

struct dsample {
	uint64_t locs[PATH_MAX_STACK + 1];
	size_t nlocs;
	uint64_t vals[8];
	size_t nvals;
};

struct dprof {
	char *str[64];
	size_t nstr;
	uint64_t st_type[8], st_unit[8];
	size_t nst;
	struct dsample *samples;
	size_t nsamples;
	uint64_t fn_id[MAXN], fn_name[MAXN], fn_sys[MAXN], fn_file[MAXN];
	size_t nfn;
	uint64_t loc_id[MAXN], loc_map[MAXN], loc_fn[MAXN], loc_nlines[MAXN];
	size_t nloc;
	uint64_t map_id[MAXN], map_file[MAXN], map_hasfn[MAXN];
	size_t nmap;
	uint64_t time_nanos, duration, period, pt_type, pt_unit, comment, dflt;
};

/* A column of a decoded message table: varint field `field` of row i goes to v[i]. */
struct dcol {
	uint32_t field;
	uint64_t *v;
};

/* Field f, value v into row i of the column for f; false when no column is f's. */
static bool rd_set(const struct dcol *cols, size_t ncols, uint32_t f, uint64_t v, size_t i)
{
	size_t k;

	for (k = 0; k < ncols; k++) {
		if (cols[k].field == f) {
			cols[k].v[i] = v;
			return true;
		}
	}
	return false;
}

/* Reads the fields of one message into row i of its table's columns; others are skipped. */
static void rd_row(struct rd *msg, const struct dcol *cols, size_t ncols, size_t i)
{
	struct rd sub;
	uint32_t f;
	uint64_t v;

	while (rd_field(msg, &f, &v, &sub))
		rd_set(cols, ncols, f, v, i);
}

static void decode_value_type(struct rd *r, uint64_t *type, uint64_t *unit)
{
	const struct dcol cols[] = { { 1, type }, { 2, unit } };

	*type = *unit = 0;
	rd_row(r, cols, 2, 0);
}

static void decode(const uint8_t *buf, size_t len, struct dprof *d)
{
	/* time_nanos, duration_nanos, period, comment, default_sample_type */
	const struct dcol scalars[] = {
		{ 9, &d->time_nanos }, { 10, &d->duration }, { 12, &d->period },
		{ 13, &d->comment }, { 14, &d->dflt },
	};
	struct rd r = { buf, buf + len }, sub, sub2, sub3;
	uint32_t f, f2, f3;
	uint64_t v, v2, v3;

	memset(d, 0, sizeof(*d));
	d->samples = calloc(64, sizeof(*d->samples));
	assert_non_null(d->samples);
	while (rd_field(&r, &f, &v, &sub)) {
		switch (f) {
		case 1:
			assert_true(d->nst < 8);
			decode_value_type(&sub, &d->st_type[d->nst], &d->st_unit[d->nst]);
			d->nst++;
			break;
		case 2: {
			struct dsample *s = &d->samples[d->nsamples++];

			assert_true(d->nsamples <= 64);
			while (rd_field(&sub, &f2, &v2, &sub2)) {
				if (f2 == 1)
					s->nlocs += rd_ints(&sub2, v2, s->locs + s->nlocs,
							    PATH_MAX_STACK + 1 - s->nlocs);
				else if (f2 == 2)
					s->nvals += rd_ints(&sub2, v2, s->vals + s->nvals,
							    8 - s->nvals);
			}
			break;
		}
		case 3: {	/* Mapping: id, filename, has_functions */
			const struct dcol cols[] = {
				{ 1, d->map_id }, { 5, d->map_file }, { 7, d->map_hasfn },
			};

			assert_true(d->nmap < MAXN);
			rd_row(&sub, cols, 3, d->nmap++);
			break;
		}
		case 4:
			assert_true(d->nloc < MAXN);
			while (rd_field(&sub, &f2, &v2, &sub2)) {
				if (f2 == 1) {
					d->loc_id[d->nloc] = v2;
				} else if (f2 == 2) {
					d->loc_map[d->nloc] = v2;
				} else if (f2 == 4) {
					d->loc_nlines[d->nloc]++;
					while (rd_field(&sub2, &f3, &v3, &sub3))
						if (f3 == 1)
							d->loc_fn[d->nloc] = v3;
				}
			}
			d->nloc++;
			break;
		case 5: {	/* Function: id, name, system_name, filename */
			const struct dcol cols[] = {
				{ 1, d->fn_id }, { 2, d->fn_name }, { 3, d->fn_sys }, { 4, d->fn_file },
			};

			assert_true(d->nfn < MAXN);
			rd_row(&sub, cols, 4, d->nfn++);
			break;
		}
		case 6:
			assert_true(d->nstr < 64);
			d->str[d->nstr] = strndup((const char *)sub.p, sub.end - sub.p);
			d->nstr++;
			break;
		case 11:
			decode_value_type(&sub, &d->pt_type, &d->pt_unit);
			break;
		default:
			if (!rd_set(scalars, sizeof(scalars) / sizeof(scalars[0]), f, v, 0))
				fail_msg("unexpected Profile field %u", f);
		}
	}
}

static void dprof_free(struct dprof *d)
{
	size_t i;

	for (i = 0; i < d->nstr; i++)
		free(d->str[i]);
	free(d->samples);
}

static const char *S(const struct dprof *d, uint64_t i)
{
	assert_true(i < d->nstr);
	return d->str[i];
}

/* gunzip with zlib's own gz reader: the file must be a gzip stream. */
static uint8_t *gunzip(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	int r;

	assert_non_null(gz);
	assert_non_null(buf);
	assert_int_equal(gzdirect(gz), 0);	/* compressed, not plain */
	for (;;) {
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		r = gzread(gz, buf + n, cap - n);
		assert_true(r >= 0);
		if (r == 0)
			break;
		n += r;
	}
	assert_int_equal(gzclose(gz), Z_OK);
	*len = n;
	return buf;
}

/* The pprof file at path, gunzipped and decoded into d (dprof_free it). */
static void read_pprof(const char *path, struct dprof *d)
{
	size_t len;
	uint8_t *raw = gunzip(path, &len);

	decode(raw, len, d);
	free(raw);
}

/* The function name of location id `loc`, through location -> function -> string. */
static const char *loc_name(const struct dprof *d, uint64_t loc)
{
	size_t i, j;

	for (i = 0; i < d->nloc; i++) {
		if (d->loc_id[i] != loc)
			continue;
		for (j = 0; j < d->nfn; j++)
			if (d->fn_id[j] == d->loc_fn[i])
				return S(d, d->fn_name[j]);
	}
	fail_msg("no location %llu", (unsigned long long)loc);
	return NULL;
}

/* The sample whose stack (leaf first) reads `names`, comma-separated. */
static const struct dsample *find_sample(const struct dprof *d, const char *names)
{
	char buf[256];
	size_t i, j;

	for (i = 0; i < d->nsamples; i++) {
		buf[0] = '\0';
		for (j = 0; j < d->samples[i].nlocs; j++) {
			if (j)
				strcat(buf, ",");
			strcat(buf, loc_name(d, d->samples[i].locs[j]));
		}
		if (strcmp(buf, names) == 0)
			return &d->samples[i];
	}
	fail_msg("no sample %s", names);
	return NULL;
}

/* The five sample types, in the order of every sample's values. */
static void check_sample_types(const struct dprof *d)
{
	static const char *const want[][2] = {
		{ "calls", "count" }, { "wall", "nanoseconds" }, { "samples", "count" },
		{ "cpu", "nanoseconds" }, { "offcpu", "nanoseconds" },
	};
	size_t i;

	assert_int_equal(d->nst, 5);
	for (i = 0; i < 5; i++) {
		assert_string_equal(S(d, d->st_type[i]), want[i][0]);
		assert_string_equal(S(d, d->st_unit[i]), want[i][1]);
	}
}

/* n events written as a pprof file `name` in fx->dir, read back into d (dprof_free it). */
static void pprof_of(struct fixture *fx, const char *name, const struct bp_event *ev, int n,
		     struct dprof *d)
{
	write_out(fx, &pprof_exporter, name, ev, n);
	read_pprof(fx->path, d);
}

static void test_pprof(void **state)
{
	struct fixture *fx = *state;
	const struct dsample *sm;
	struct dprof d;
	size_t i, j;

	write_standard(fx, &pprof_exporter, "t.pb.gz");
	read_pprof(fx->path, &d);

	assert_true(d.nstr > 0);
	assert_string_equal(d.str[0], "");
	for (i = 0; i < d.nstr; i++)		/* interned: no string twice */
		for (j = i + 1; j < d.nstr; j++)
			assert_string_not_equal(d.str[i], d.str[j]);
	check_sample_types(&d);
	assert_string_equal(S(&d, d.dflt), "wall");
	assert_string_equal(S(&d, d.pt_type), "wall");
	assert_string_equal(S(&d, d.pt_unit), "nanoseconds");
	assert_int_equal(d.period, 1);
	assert_string_equal(S(&d, d.comment), "bpfprof record: ./demo \"x\"");
	assert_int_equal(d.time_nanos, 1700000001000000000ull);
	assert_int_equal(d.duration, 5000);

	/* five distinct paths; both threads' main in one sample */
	assert_int_equal(d.nsamples, 6);
	for (i = 0; i < d.nsamples; i++) {
		/* every sample has all five values; no samples were recorded */
		assert_int_equal(d.samples[i].nvals, 5);
		assert_int_equal(d.samples[i].vals[2], 0);
		assert_int_equal(d.samples[i].vals[3], 0);
		assert_int_equal(d.samples[i].vals[4], 0);
	}
	sm = find_sample(&d, "main");
	assert_int_equal(sm->vals[0], 2);
	assert_int_equal(sm->vals[1], 1002);
	sm = find_sample(&d, "malloc,run,main");	/* leaf first */
	assert_int_equal(sm->vals[0], 2);
	assert_int_equal(sm->vals[1], 300);
	sm = find_sample(&d, "malloc,main");
	assert_int_equal(sm->vals[0], 1);
	assert_int_equal(sm->vals[1], 7);
	sm = find_sample(&d, "run,main");
	assert_int_equal(sm->vals[1], 695);
	sm = find_sample(&d, ODD_NAME ",run,main");
	assert_int_equal(sm->vals[1], 5);
	sm = find_sample(&d, BAD_NAME ",main");
	assert_int_equal(sm->vals[1], 1);

	/* one function and one location per function, one mapping per module */
	assert_int_equal(d.nfn, 5);
	assert_int_equal(d.nloc, 5);
	assert_int_equal(d.nmap, 2);
	for (i = 0; i < d.nfn; i++) {
		assert_true(d.fn_id[i] != 0);
		assert_string_equal(S(&d, d.fn_name[i]), S(&d, d.fn_sys[i]));
		if (strcmp(S(&d, d.fn_name[i]), "malloc") == 0)
			assert_string_equal(S(&d, d.fn_file[i]), "/lib/x86_64-linux-gnu/libc.so.6");
		else
			assert_string_equal(S(&d, d.fn_file[i]), "/usr/bin/demo");
	}
	for (i = 0; i < d.nloc; i++) {
		assert_int_equal(d.loc_nlines[i], 1);
		assert_true(d.loc_map[i] == d.map_id[0] || d.loc_map[i] == d.map_id[1]);
	}
	for (i = 0; i < d.nmap; i++) {
		assert_true(d.map_id[i] != 0);
		assert_int_equal(d.map_hasfn[i], 1);
	}
	assert_string_equal(S(&d, d.map_file[0]), "/usr/bin/demo");
	assert_string_equal(S(&d, d.map_file[1]), "/lib/x86_64-linux-gnu/libc.so.6");
	dprof_free(&d);
}

static void test_pprof_empty(void **state)
{
	struct fixture *fx = *state;
	struct dprof d;

	pprof_of(fx, "e.pb.gz", NULL, 0, &d);
	assert_int_equal(d.nsamples, 0);
	check_sample_types(&d);
	assert_string_equal(S(&d, d.dflt), "wall");
	assert_string_equal(d.str[0], "");
	dprof_free(&d);
}

/* The profile's mapping file names, in order. */
static const char *map_file(const struct dprof *d, size_t i)
{
	assert_true(i < d->nmap);
	return S(d, d->map_file[i]);
}

/* A sampling-only recording is a CPU profile: five values, cpu by default. */
static void test_pprof_samples(void **state)
{
	struct fixture *fx = *state;
	const struct dsample *sm;
	struct bp_event ev[32];
	struct stacks st;
	struct dprof d;
	size_t i;
	int n;

	make_stacks(fx, &st);
	n = sample_events(fx, &st, ev);
	pprof_of(fx, "s.pb.gz", ev, n, &d);
	check_sample_types(&d);
	assert_string_equal(S(&d, d.dflt), "cpu");
	assert_string_equal(S(&d, d.pt_type), "cpu");
	assert_string_equal(S(&d, d.pt_unit), "nanoseconds");
	assert_int_equal(d.period, 1000);

	assert_int_equal(d.nsamples, 3);
	sm = find_sample(&d, "malloc,run,main,[unknown] libc.so.6+0x2724a");
	assert_int_equal(sm->nvals, 5);
	assert_int_equal(sm->vals[0], 0);
	assert_int_equal(sm->vals[1], 0);
	assert_int_equal(sm->vals[2], 4);
	assert_int_equal(sm->vals[3], 4000);
	assert_int_equal(sm->vals[4], 700);
	sm = find_sample(&d, "main,[unknown] libc.so.6+0x2724a");
	assert_int_equal(sm->vals[2], 1);
	assert_int_equal(sm->vals[3], 1000);
	assert_int_equal(sm->vals[4], 0);
	sm = find_sample(&d, "do_nanosleep,main,[unknown] libc.so.6+0x2724a");
	assert_int_equal(sm->vals[2], 0);
	assert_int_equal(sm->vals[3], 0);
	assert_int_equal(sm->vals[4], 5000);

	/* kernel and unknown frames are functions of their own mappings; main's binary first */
	assert_int_equal(d.nmap, 3);
	assert_string_equal(map_file(&d, 0), "/usr/bin/demo");
	assert_string_equal(map_file(&d, 1), "/lib/x86_64-linux-gnu/libc.so.6");
	assert_string_equal(map_file(&d, 2), "[kernel]");
	for (i = 0; i < d.nfn; i++) {
		if (strcmp(S(&d, d.fn_name[i]), "do_nanosleep") == 0)
			assert_string_equal(S(&d, d.fn_file[i]), "[kernel]");
		if (strcmp(S(&d, d.fn_name[i]), "[unknown] libc.so.6+0x2724a") == 0)
			assert_string_equal(S(&d, d.fn_file[i]), "/lib/x86_64-linux-gnu/libc.so.6");
	}
	dprof_free(&d);
}

/* Off-cpu only: offcpu by default; calls and samples together: wall, both kinds of stack. */
static void test_pprof_default_type(void **state)
{
	struct fixture *fx = *state;
	const struct dsample *sm;
	struct bp_event ev[32];
	struct stacks st;
	struct dprof d;
	int n;

	make_stacks(fx, &st);
	ev[0] = sample(500, 5000, 100, st.s_sleep, BP_SAMPLE_F_OFFCPU);
	pprof_of(fx, "o.pb.gz", ev, 1, &d);
	assert_string_equal(S(&d, d.dflt), "offcpu");
	assert_string_equal(S(&d, d.pt_type), "offcpu");
	dprof_free(&d);

	n = standard_events(fx, ev);
	n += sample_events(fx, &st, ev + n);
	pprof_of(fx, "m.pb.gz", ev, n, &d);
	assert_string_equal(S(&d, d.dflt), "wall");
	assert_string_equal(S(&d, d.pt_type), "wall");
	assert_int_equal(d.period, 1);
	assert_int_equal(d.nsamples, 6 + 3);
	sm = find_sample(&d, "malloc,run,main");	/* a call path */
	assert_int_equal(sm->vals[0], 2);
	assert_int_equal(sm->vals[1], 300);
	assert_int_equal(sm->vals[3], 0);
	sm = find_sample(&d, "malloc,run,main,[unknown] libc.so.6+0x2724a");	/* a stack */
	assert_int_equal(sm->vals[0], 0);
	assert_int_equal(sm->vals[3], 4000);
	dprof_free(&d);
}

static void test_pprof_deep(void **state)
{
	struct fixture *fx = *state;
	size_t depth = PATH_MAX_STACK + 3, i, ntrunc = 0;
	struct bp_event *ev = calloc(depth, sizeof(*ev));
	uint32_t *paths = calloc(depth + 1, sizeof(*paths));
	uint8_t *raw;
	size_t len;

	assert_non_null(ev);
	assert_non_null(paths);
	for (i = 1; i <= depth; i++)
		paths[i] = session__path(&fx->s, paths[i - 1], fx->f_run);
	for (i = depth; i >= 1; i--)
		ev[depth - i] = call(i, i - 1, fx->f_run, paths[i], 100, i, 2 * depth - i, 1, i - 1);
	write_out(fx, &pprof_exporter, "d.pb.gz", ev, depth);
	raw = gunzip(fx->path, &len);
	{
		/* more samples than decode() makes room for: count them with a bare reader */
		struct rd r = { raw, raw + len }, sub;
		uint32_t f;
		uint64_t v;
		size_t ns = 0;

		while (rd_field(&r, &f, &v, &sub))
			ns += f == 2;
		assert_int_equal(ns, PATH_MAX_STACK + 1);
	}
	/* the deepest kept stack: the marker leaf, then PATH_MAX_STACK - 1 frames of run */
	{
		struct rd r = { raw, raw + len }, sub, sub2;
		uint32_t f, f2;
		uint64_t v, v2, locs[PATH_MAX_STACK + 1];
		size_t nl, maxl = 0;

		while (rd_field(&r, &f, &v, &sub)) {
			if (f != 2)
				continue;
			while (rd_field(&sub, &f2, &v2, &sub2)) {
				if (f2 != 1)
					continue;
				nl = rd_ints(&sub2, v2, locs, PATH_MAX_STACK + 1);
				if (nl > maxl)
					maxl = nl;
				if (locs[0] != fx->f_run + 1) {
					ntrunc++;
					assert_int_equal(nl, PATH_MAX_STACK);
				}
			}
		}
		assert_int_equal(maxl, PATH_MAX_STACK);
		assert_int_equal(ntrunc, 1);
	}
	free(raw);
	free(paths);
	free(ev);
}

/* ------------------------------------------------------------ speedscope */

static void test_speedscope(void **state)
{
	struct fixture *fx = *state;
	struct bp_event ev[8];
	int n = 0;

	/*
	 * Thread 100, in end order: main [0,1000] > run [0,900] (the same begin:
	 * main must open first) > malloc [100,200], malloc [200,300] (begins as
	 * the first ends), odd [850,950] (ends after its parent: clamped).
	 */
	ev[n++] = call(3, 2, fx->f_malloc, fx->p_run_malloc, 100, 100, 200, 100, 2);
	ev[n++] = call(4, 2, fx->f_malloc, fx->p_run_malloc, 100, 200, 300, 100, 2);
	ev[n++] = call(5, 2, fx->f_odd, fx->p_odd, 100, 850, 950, 100, 2);
	ev[n++] = unit__loss(960, 7, 0);
	ev[n++] = call(2, 1, fx->f_run, fx->p_run, 100, 0, 900, 600, 1);
	ev[n++] = call(6, 0, fx->f_main, fx->p_main, 101, 5, 6, 1, 0);
	ev[n++] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 1000, 100, 0);
	write_out(fx, &speedscope_exporter, "t.speedscope.json", ev, n);
	assert_file_is(fx,
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		"\"exporter\":\"bpfprof 0.1\",\"name\":\"./demo \\\"x\\\" (7 records lost)\","
		"\"activeProfileIndex\":0,\"shared\":{\"frames\":[\n"
		"{\"name\":\"malloc\",\"file\":\"/lib/x86_64-linux-gnu/libc.so.6\"},\n"
		"{\"name\":\"o;d\\\"d\\\\,x\\ny\",\"file\":\"/usr/bin/demo\"},\n"
		"{\"name\":\"run\",\"file\":\"/usr/bin/demo\"},\n"
		"{\"name\":\"main\",\"file\":\"/usr/bin/demo\"}\n"
		"]},\"profiles\":[\n"
		"{\"type\":\"evented\",\"name\":\"demo (pid 100, tid 100)\",\"unit\":\"nanoseconds\","
		"\"startValue\":0,\"endValue\":1000,\"events\":[\n"
		"{\"type\":\"O\",\"frame\":3,\"at\":0},{\"type\":\"O\",\"frame\":2,\"at\":0},"
		"{\"type\":\"O\",\"frame\":0,\"at\":100},{\"type\":\"C\",\"frame\":0,\"at\":200},"
		"{\"type\":\"O\",\"frame\":0,\"at\":200},{\"type\":\"C\",\"frame\":0,\"at\":300},"
		"{\"type\":\"O\",\"frame\":1,\"at\":850},{\"type\":\"C\",\"frame\":1,\"at\":900},"
		"{\"type\":\"C\",\"frame\":2,\"at\":900},{\"type\":\"C\",\"frame\":3,\"at\":1000}\n"
		"]},\n"
		"{\"type\":\"evented\",\"name\":\"worker (pid 100, tid 101)\",\"unit\":\"nanoseconds\","
		"\"startValue\":5,\"endValue\":6,\"events\":[\n"
		"{\"type\":\"O\",\"frame\":3,\"at\":5},{\"type\":\"C\",\"frame\":3,\"at\":6}\n"
		"]}\n"
		"]}\n");
}

/*
 * Samples: per thread, after its evented profile, a sampled profile of its
 * cpu samples and one of its off-cpu time, stacks outermost first, in time
 * order; a checker replays them with a real JSON parser.
 */
static const char sampled_checker[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"names = [f['name'] for f in d['shared']['frames']]\n"
	"ps = d['profiles']\n"
	"got = [(p['type'], p['name']) for p in ps]\n"
	"assert got == [('evented', 'demo (pid 100, tid 100)'),\n"
	"               ('sampled', 'demo (pid 100, tid 100) (cpu samples)'),\n"
	"               ('sampled', 'demo (pid 100, tid 100) (off-cpu)'),\n"
	"               ('sampled', 'worker (pid 100, tid 101) (cpu samples)'),\n"
	"               ('sampled', 'worker (pid 100, tid 101) (off-cpu)')], got\n"
	"assert d['activeProfileIndex'] == int(sys.argv[2]), d['activeProfileIndex']\n"
	"def stacks(p):\n"
	"    assert p['unit'] == 'nanoseconds' and len(p['samples']) == len(p['weights'])\n"
	"    assert p['startValue'] == 0 and p['endValue'] == sum(p['weights'])\n"
	"    return [(';'.join(names[i] for i in s), w) for s, w in zip(p['samples'], p['weights'])]\n"
	"U = '[unknown] libc.so.6+0x2724a'\n"
	"M = U + ';main;run;malloc'\n"
	"assert stacks(ps[1]) == [(M, 1000), (U + ';main', 1000), (M, 1000), (M, 1000)], stacks(ps[1])\n"
	"assert stacks(ps[2]) == [(U + ';main;do_nanosleep', 5000)], stacks(ps[2])\n"
	"assert stacks(ps[3]) == [(M, 1000)], stacks(ps[3])\n"
	"assert stacks(ps[4]) == [(M, 700)], stacks(ps[4])\n";

static void test_speedscope_samples(void **state)
{
	struct fixture *fx = *state;
	struct bp_event ev[32];
	char script[128], cmd[512];
	struct stacks st;
	char *out;
	FILE *f;
	int n;

	make_stacks(fx, &st);
	snprintf(script, sizeof(script), "%s/check.py", fx->dir);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs(sampled_checker, f);
	fclose(f);

	n = 0;
	ev[n++] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 1000, 1000, 0);
	n += sample_events(fx, &st, ev + n);
	write_out(fx, &speedscope_exporter, "s.speedscope.json", ev, n);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s' '%s' 0", script, fx->path);
	assert_int_equal(system(cmd), 0);

	/* without calls the busiest thread's cpu samples open first; no "no calls" placeholder */
	n = sample_events(fx, &st, ev);
	ev[n++] = call(1, 0, fx->f_main, fx->p_main, 100, 0, 1000, 1000, 0);
	write_out(fx, &speedscope_exporter, "t.speedscope.json", ev, n - 1);
	out = unit__slurp(fx->path, NULL);
	unit__assert_contains(out, "\"activeProfileIndex\":0,");
	unit__assert_contains(out, "{\"type\":\"sampled\",\"name\":\"demo (pid 100, tid 100) (cpu samples)\","
			"\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":4000,\"samples\":[\n");
	assert_null(strstr(out, "no calls"));
	assert_null(strstr(out, "evented"));
	free(out);
}

static void test_speedscope_empty(void **state)
{
	struct fixture *fx = *state;
	char *out;

	write_out(fx, &speedscope_exporter, "e.speedscope.json", NULL, 0);
	out = unit__slurp(fx->path, NULL);
	unit__assert_contains(out, "\"profiles\":[\n{\"type\":\"evented\",\"name\":\"no calls\","
			"\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":5000,\"events\":[]}\n]}\n");
	free(out);
}

/*
 * Many calls on interleaved threads: buffers spill to the temporary file in
 * blocks and are read back per thread.  A Python checker (a real JSON parser)
 * replays every profile the way speedscope does.
 */
static const char checker[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"names = [f['name'] for f in d['shared']['frames']]\n"
	"want = int(sys.argv[2])\n"
	"assert len(d['profiles']) == 3, len(d['profiles'])\n"
	"for p in d['profiles']:\n"
	"    st, last, opens = [], p['startValue'], {}\n"
	"    for e in p['events']:\n"
	"        assert e['at'] >= last, e\n"
	"        last = e['at']\n"
	"        if e['type'] == 'O':\n"
	"            st.append(e['frame'])\n"
	"            opens[names[e['frame']]] = opens.get(names[e['frame']], 0) + 1\n"
	"        else:\n"
	"            assert st.pop() == e['frame'], e\n"
	"    assert not st and last <= p['endValue']\n"
	"    assert opens == {'main': want, 'run': want}, opens\n";

static void test_speedscope_many(void **state)
{
	struct fixture *fx = *state;
	const int per_thread = 3000;
	struct bp_event *ev = calloc(per_thread * 2 * 3, sizeof(*ev));
	char script[128], cmd[512];
	uint64_t id = 1;
	int i, t, n = 0;
	FILE *f;

	assert_non_null(ev);
	for (i = 0; i < per_thread; i++) {
		for (t = 0; t < 3; t++) {
			uint64_t b = (uint64_t)i * 100;

			ev[n++] = call(id + 1, id, fx->f_run, fx->p_run, 200 + t, b + 10, b + 20, 10,
				       1);
			ev[n++] = call(id, 0, fx->f_main, fx->p_main, 200 + t, b, b + 50, 40, 0);
			id += 2;
		}
	}
	write_out(fx, &speedscope_exporter, "m.speedscope.json", ev, n);
	snprintf(script, sizeof(script), "%s/check.py", fx->dir);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs(checker, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s' '%s' %d", script, fx->path, per_thread);
	assert_int_equal(system(cmd), 0);
	free(ev);
}

/* ------------------------------------------------------------ write errors */

/* What a child of test_write_errors writes, and with which exporter. */
struct full_write {
	struct fixture *fx;
	const struct exporter_ops *ops;
	const struct bp_event *evs;
	int n;
};

/* In the child: 0 when writing to a full standard output fails with ENOSPC. */
static int write_to_full_stdout(void *arg)
{
	const struct full_write *w = arg;
	struct exporter *e = NULL;
	int i, err = 0;

	if (!freopen("/dev/full", "w", stdout))
		return 10;
	if (exporter__new(w->ops, "-", &w->fx->s, &e))
		return 0;	/* begin() already failed: also right */
	for (i = 0; i < w->n && !err; i++)
		err = exporter__event(e, &w->fx->s, &w->evs[i]);
	if (!err)
		err = exporter__finish(e, &w->fx->s);
	exporter__free(e);
	return err == -ENOSPC ? 0 : 13;
}

/* Standard output on a full device: every format reports ENOSPC, none succeeds. */
static void test_write_errors(void **state)
{
	static const struct exporter_ops *const ops[] = {
		&speedscope_exporter, &pprof_exporter, &folded_exporter, &csv_exporter,
		&dot_exporter,
	};
	struct bp_event evs[32];
	struct full_write w = { .fx = *state, .evs = evs };
	struct stacks st;
	size_t k;
	int status;

	w.n = standard_events(w.fx, evs);
	make_stacks(w.fx, &st);
	w.n += sample_events(w.fx, &st, evs + w.n);
	evs[w.n++] = edge(BP_EDGE_WAKEUP, w.fx->f_run, w.fx->f_malloc, 10, 20);

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		w.ops = ops[k];
		status = unit__in_child(write_to_full_stdout, &w);
		if (status)
			fail_msg("%s: exit %d", ops[k]->name, status);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_csv_escape),
		cmocka_unit_test(test_dot_escape),
		cmocka_unit_test(test_folded_escape),
		cmocka_unit_test(test_varint),
		cmocka_unit_test_setup_teardown(test_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_calls_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folded_merges_same_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folded_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folded_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dot_edges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recursion_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_stacks_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_agg_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_agg_samples_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_default_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_deep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
