// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CSV, folded and DOT exporters on known events (tests/unit/formats_fixture.h):
 * exact output, hostile names escaped for each syntax, recursion totals,
 * dependency edges in DOT, stack samples in folded; the per-path aggregates
 * they share (exporters/pathagg.h: deep stacks cut, cpu and off-cpu sample
 * counters); and every exporter's write errors.  pprof: test_pprof.c;
 * speedscope: test_speedscope.c.
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
#include "formats_fixture.h"

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
	struct bp_event *ev = deep_calls(fx, depth);
	char *out, *last;

	write_out(fx, &folded_exporter, "d.folded", ev, depth);
	out = unit__slurp(fx->path, NULL);
	last = strstr(out, ";" PATH_TRUNCATED_NAME " 10\n");
	assert_non_null(last);
	/* PATH_MAX_STACK - 1 frames kept above the marker */
	for (i = 0; last > out && last[-1] != '\n'; last--)
		i += *last == ';';
	assert_int_equal(i, PATH_MAX_STACK - 1);
	free(out);
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
		cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
