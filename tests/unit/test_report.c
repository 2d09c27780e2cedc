// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report: a hand-built session and call stream with known numbers, checked
 * exactly (calls, totals, self, min/max, tree), percentiles within the
 * histogram's stated bound, recursion counted once, filters, sort order, CSV
 * quoting, and JSON that Python's parser accepts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/log.h"
#include "report/report.h"
#include "model/session.h"
#include "helpers.h"

enum { F_MAIN, F_RUN, F_COMPUTE, F_LEAF, F_FIB, F_WEIRD, F_SPREAD, NFUNCS };
static const char *const names[NFUNCS] = { "main", "run", "compute", "leaf_add", "fib",
					   "a,\"b\"", "spread" };

/* A thread's shadow stack, as the decoder keeps it: emits calls as they end. */
struct sim {
	struct bp_session *s;
	struct report *r;
	uint32_t pid, tid;
	struct {
		uint32_t func, path;
		uint64_t begin, child, id;
	} *st;
	size_t depth;
	uint64_t next_id;
};

static void sim_init(struct sim *m, struct bp_session *s, struct report *r, uint32_t pid,
		     uint32_t tid, size_t max_depth)
{
	memset(m, 0, sizeof(*m));
	m->s = s;
	m->r = r;
	m->pid = pid;
	m->tid = tid;
	m->st = calloc(max_depth, sizeof(*m->st));
	m->next_id = 1;
	assert_non_null(m->st);
}

static void enter(struct sim *m, uint32_t func, uint64_t ts)
{
	uint32_t parent = m->depth ? m->st[m->depth - 1].path : 0;

	m->st[m->depth].func = func;
	m->st[m->depth].path = session__path(m->s, parent, func);
	m->st[m->depth].begin = ts;
	m->st[m->depth].child = 0;
	m->st[m->depth].id = m->next_id++;
	m->depth++;
}

static void leave(struct sim *m, uint64_t ts)
{
	struct bp_event ev = { .kind = BP_EV_CALL };
	struct bp_call *c = &ev.call;

	m->depth--;
	c->id = m->st[m->depth].id;
	c->parent_id = m->depth ? m->st[m->depth - 1].id : 0;
	c->begin = m->st[m->depth].begin;
	c->end = ts;
	c->self = ts - c->begin - m->st[m->depth].child;
	c->pid = m->pid;
	c->tid = m->tid;
	c->func = m->st[m->depth].func;
	c->depth = m->depth;
	c->path = m->st[m->depth].path;
	if (m->depth)
		m->st[m->depth - 1].child += ts - c->begin;
	m->s->ncalls++;
	assert_int_equal(report__add(m->r, m->s, &ev), 0);
}

static void call(struct sim *m, uint32_t func, uint64_t begin, uint64_t end)
{
	enter(m, func, begin);
	leave(m, end);
}

static void new_session(struct bp_session *s)
{
	struct bp_func f = { 0 };
	size_t i;

	session__init(s);
	s->cmdline = xstrdup("./prog --flag");
	s->duration = 2000;
	session__add_module(s, "/usr/bin/prog");
	for (i = 0; i < NFUNCS; i++) {
		f.name = (char *)names[i];
		assert_int_equal(session__add_func(s, &f), i);
	}
}

/*
 * pid 100 tid 100:
 *   main      [0, 1000]                        self 20
 *     run     [10, 990]                        self 980 - 200 - 500 = 280
 *       compute [20, 120]: leaf_add 10, 20     self 70
 *       compute [200, 300]: leaf_add 30        self 70
 *       fib [400, 900]                         self 500 - 380 = 120
 *         fib [410, 600]                       self 190 - 80 = 110
 *           fib [420, 500]                     self 80
 *         fib [610, 800]                       self 190
 * pid 100 tid 101: a,"b" [0, 50]
 * pid 200 tid 200: leaf_add [0, 5]
 * a loss of 7 records
 */
static void feed(struct bp_session *s, struct report *r)
{
	struct bp_event loss = { .kind = BP_EV_LOSS };
	struct sim m;

	sim_init(&m, s, r, 100, 100, 16);
	enter(&m, F_MAIN, 0);
	enter(&m, F_RUN, 10);
	enter(&m, F_COMPUTE, 20);
	call(&m, F_LEAF, 30, 40);
	call(&m, F_LEAF, 50, 70);
	leave(&m, 120);
	enter(&m, F_COMPUTE, 200);
	call(&m, F_LEAF, 210, 240);
	leave(&m, 300);
	enter(&m, F_FIB, 400);
	enter(&m, F_FIB, 410);
	call(&m, F_FIB, 420, 500);
	leave(&m, 600);
	call(&m, F_FIB, 610, 800);
	leave(&m, 900);
	leave(&m, 990);
	leave(&m, 1000);
	free(m.st);

	sim_init(&m, s, r, 100, 101, 4);
	call(&m, F_WEIRD, 0, 50);
	free(m.st);
	sim_init(&m, s, r, 200, 200, 4);
	call(&m, F_LEAF, 0, 5);
	free(m.st);

	loss.loss.count = 7;
	loss.loss.cpu = 1;
	assert_int_equal(report__add(r, s, &loss), 0);
}

/* Runs a report with `o` over the standard stream; returns its output (free it). */
static char *run_report(const struct report_opts *o)
{
	struct bp_session s;
	struct report *r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	new_session(&s);
	assert_int_equal(report__new(o, &r), 0);
	feed(&s, r);
	assert_int_equal(report__print(r, &s, f), 0);
	assert_int_equal(fclose(f), 0);
	report__free(r);
	session__free(&s);
	return buf;
}

/* Runs `check` (Python statements about d, the parsed JSON) over `json`; asserts success. */
static void python_check(const char *json, const char *check)
{
	char cmd[4096];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json, sys\n"
		 "d = json.load(open(sys.argv[1]))\n"
		 "F = {x[\"name\"]: x for x in d[\"functions\"]}\n"
		 /* a node names its parent, listed before it; paths rebuilt for small trees */
		 "N = {}\n"
		 "for x in d[\"tree\"]:\n"
		 "    assert set(x) == {\"id\", \"parent\", \"depth\", \"name\", \"calls\", \"total_ns\", \"self_ns\"}, x\n"
		 "    assert x[\"depth\"] == (N[x[\"parent\"]][\"depth\"] + 1 if x[\"parent\"] else 1), x\n"
		 "    N[x[\"id\"]] = x\n"
		 "def path(x):\n"
		 "    p = [x[\"name\"]]\n"
		 "    while x[\"parent\"]:\n"
		 "        x = N[x[\"parent\"]]\n"
		 "        p.append(x[\"name\"])\n"
		 "    return p[::-1]\n"
		 "for x in d[\"tree\"][:1000]:\n"
		 "    x[\"path\"] = path(x)\n"
		 "T = {\">\".join(x[\"path\"]): x for x in d[\"tree\"][:1000]}\n"
		 "%s' \"$UNIT_FILE\"",
		 check);
	rc = unit__system_on(json, cmd);
	if (rc)
		fprintf(stderr, "JSON check failed:\n%s\n--- on\n%s\n", check, json);
	assert_int_equal(rc, 0);
}

/* The CSV row of `name` (first field), or NULL. */
static const char *csv_row(const char *csv, const char *prefix)
{
	const char *p = csv;

	for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, strlen(prefix)))
			return p;
	return NULL;
}

static void assert_csv_line(const char *csv, const char *line)
{
	const char *p = csv_row(csv, line);

	if (!p || strncmp(p, line, strlen(line)) || p[strlen(line)] != '\r')
		fail_msg("no CSV line '%s' in:\n%s", line, csv);
}

/*
 * The CSV tree row of the node at `path` (names joined by ';'), followed by
 * `rest`: follows the id,parent columns up from each row.
 */
static void assert_csv_tree(const char *csv, const char *path, const char *rest)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import csv, sys\n"
		 "rows = list(csv.reader(open(sys.argv[1], newline=\"\")))\n"
		 "assert rows[0] == [\"id\", \"parent\", \"depth\", \"name\", \"calls\", \"total_ns\", \"self_ns\"]\n"
		 "P = {}\n"
		 "for r in rows[1:]:\n"
		 "    P[r[0]] = (P[r[1]] + \";\" if r[1] != \"0\" else \"\") + r[3]\n"
		 "    assert P[r[0]].count(\";\") + 1 == int(r[2]), r\n"
		 "    if P[r[0]] == sys.argv[2]:\n"
		 "        assert \",\" + \",\".join(r[4:]) == sys.argv[3], r\n"
		 "        sys.exit(0)\n"
		 "sys.exit(\"no row %%s\" %% sys.argv[2])' \"$UNIT_FILE\" '%s' '%s'",
		 path, rest);
	if (unit__system_on(csv, cmd))
		fail_msg("CSV tree: no row %s%s in:\n%s", path, rest, csv);
}

static void test_flat_exact(void **state)
{
	struct report_opts o = { .format = REPORT_CSV };
	char *out = run_report(&o);

	(void)state;
	/* name,module,calls,total,self,avg,min,max,p50,p99,pct_wall: all below 32 ns
	 * or single calls are exact; the rest is checked in test_percentiles */
	assert_csv_line(out, "name,module,calls,total_ns,self_ns,avg_ns,min_ns,max_ns,p50_ns,"
			     "p99_ns,pct_wall");
	assert_csv_line(out, "main,prog,1,1000,20,1000,1000,1000,1000,1000,50.000");
	assert_csv_line(out, "run,prog,1,980,280,980,980,980,980,980,49.000");
	/* compute: 100 and 100 */
	assert_csv_line(out, "compute,prog,2,200,140,100,100,100,100,100,10.000");
	/* leaf_add: 10, 20, 30 and pid 200's 5; p50 = 2nd of 4 = 10 (exact below 32) */
	assert_csv_line(out, "leaf_add,prog,4,65,65,16,5,30,10,30,3.250");
	/* fib: total is the outermost call only (500), not 500+190+80+190 = 960;
	 * avg is per call: 960 / 4 = 240 */
	assert_non_null(csv_row(out, "fib,prog,4,500,500,240,80,500,"));
	assert_csv_line(out, "\"a,\"\"b\"\"\",prog,1,50,50,50,50,50,50,50,2.500");
	free(out);
}

static void test_json(void **state)
{
	struct report_opts o = { .format = REPORT_JSON };
	char *out = run_report(&o);

	(void)state;
	python_check(out,
		     "assert d[\"command\"] == \"./prog --flag\", d\n"
		     "assert d[\"duration_ns\"] == 2000 and d[\"lost\"] == 7 and d[\"calls\"] == 13\n"
		     "assert F[\"fib\"][\"calls\"] == 4 and F[\"fib\"][\"total_ns\"] == 500\n"
		     "assert F[\"fib\"][\"self_ns\"] == 500 and F[\"fib\"][\"avg_ns\"] == 240\n"
		     "assert F[\"fib\"][\"min_ns\"] == 80 and F[\"fib\"][\"max_ns\"] == 500\n"
		     "assert F[\"main\"][\"pct_wall\"] == 50.0 and F[\"main\"][\"module\"] == \"prog\"\n"
		     "assert F[\"a,\\\"b\\\"\"][\"total_ns\"] == 50\n"
		     "assert [x[\"name\"] for x in d[\"functions\"]] == [\"main\", \"run\", \"fib\", "
		     "\"compute\", \"leaf_add\", \"a,\\\"b\\\"\"]\n"
		     "want = {\"main\": (1, 1000, 20), \"main>run\": (1, 980, 280),\n"
		     "  \"main>run>compute\": (2, 200, 140), \"main>run>compute>leaf_add\": (3, 60, 60),\n"
		     "  \"main>run>fib\": (1, 500, 120), \"main>run>fib>fib\": (2, 380, 300),\n"
		     "  \"main>run>fib>fib>fib\": (1, 80, 80), \"a,\\\"b\\\"\": (1, 50, 50),\n"
		     "  \"leaf_add\": (1, 5, 5)}\n"
		     "got = {k: (v[\"calls\"], v[\"total_ns\"], v[\"self_ns\"]) for k, v in T.items()}\n"
		     "assert got == want, got\n"
		     "assert len(d[\"tree\"]) == len(want)\n"
		     /* depth-first, children by total: main's subtree before a,"b" and leaf_add */
		     "order = [\">\".join(x[\"path\"]) for x in d[\"tree\"]]\n"
		     "assert order == [\"main\", \"main>run\", \"main>run>fib\", \"main>run>fib>fib\",\n"
		     "  \"main>run>fib>fib>fib\", \"main>run>compute\", \"main>run>compute>leaf_add\",\n"
		     "  \"a,\\\"b\\\"\", \"leaf_add\"], order\n");
	free(out);
}

static void test_filters(void **state)
{
	struct report_opts o = { .format = REPORT_JSON, .pid = 200 };
	char *out = run_report(&o);

	(void)state;
	python_check(out, "assert list(F) == [\"leaf_add\"] and F[\"leaf_add\"][\"calls\"] == 1\n"
			  "assert F[\"leaf_add\"][\"total_ns\"] == 5 and list(T) == [\"leaf_add\"]\n"
			  "assert d[\"calls\"] == 1 and d[\"lost\"] == 7\n");
	free(out);

	o.pid = 0;
	o.tid = 101;
	out = run_report(&o);
	python_check(out, "assert list(F) == [\"a,\\\"b\\\"\"] and list(T) == [\"a,\\\"b\\\"\"]\n");
	free(out);

	o.pid = 100;
	o.tid = 0;
	out = run_report(&o);
	python_check(out, "assert F[\"leaf_add\"][\"calls\"] == 3 and len(F) == 6\n");
	free(out);
}

/* The first field of each data row of a CSV flat table, joined by '|'. */
static void csv_names(const char *csv, char *buf, size_t len)
{
	const char *p = strchr(csv, '\n');
	size_t n = 0;

	buf[0] = 0;
	for (p = p ? p + 1 : NULL; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *e = *p == '"' ? strstr(p, "\",") + 1 : strchr(p, ',');

		n += snprintf(buf + n, len - n, "%s%.*s", n ? "|" : "", (int)(e - p), p);
	}
}

/* The report with `o`, as CSV: its function names in this order. */
static void assert_order(struct report_opts o, const char *want)
{
	char names_buf[256], *out;

	o.format = REPORT_CSV;
	out = run_report(&o);
	csv_names(out, names_buf, sizeof(names_buf));
	assert_string_equal(names_buf, want);
	free(out);
}

static void test_sort_top(void **state)
{
	(void)state;
	assert_order((struct report_opts){ 0 }, "main|run|fib|compute|leaf_add|\"a,\"\"b\"\"\"");
	assert_order((struct report_opts){ .sort = REPORT_SORT_SELF },
		     "fib|run|compute|leaf_add|\"a,\"\"b\"\"\"|main");
	/* fib and leaf_add both have 4 calls: the tie goes to the larger total */
	assert_order((struct report_opts){ .sort = REPORT_SORT_CALLS },
		     "fib|leaf_add|compute|main|run|\"a,\"\"b\"\"\"");
	assert_order((struct report_opts){ .sort = REPORT_SORT_MAX, .top = 3 }, "main|run|fib");
	assert_order((struct report_opts){ .sort = REPORT_SORT_AVG },
		     "main|run|fib|compute|\"a,\"\"b\"\"\"|leaf_add");
}

static void test_depth_and_sections(void **state)
{
	struct report_opts o = { .format = REPORT_JSON, .depth = 2, .tree_only = true };
	struct report *r;
	char *out = run_report(&o);

	(void)state;
	python_check(out, "assert d[\"functions\"] == []\n"
			  "assert sorted(T) == [\"a,\\\"b\\\"\", \"leaf_add\", \"main\", \"main>run\"], T\n");
	free(out);

	o.depth = 0;
	o.tree_only = false;
	o.no_tree = true;
	out = run_report(&o);
	python_check(out, "assert d[\"tree\"] == [] and len(F) == 6\n");
	free(out);

	/* CSV tree: the path folded with ';', quoted because of the name */
	o.format = REPORT_CSV;
	o.no_tree = false;
	o.tree_only = true;
	out = run_report(&o);
	assert_csv_line(out, "id,parent,depth,name,calls,total_ns,self_ns");
	assert_csv_tree(out, "main;run;fib;fib", ",2,380,300");
	assert_csv_tree(out, "a,\"b\"", ",1,50,50");
	free(out);

	o.no_tree = true;
	assert_int_equal(report__new(&o, &r), -EINVAL);
	assert_null(r);
}

static void test_pretty_and_summary(void **state)
{
	struct report_opts o = { 0 };
	struct bp_session s;
	struct report *r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	char *out = run_report(&o);

	(void)state;
	assert_non_null(strstr(out, "command: ./prog --flag   duration: 2.00 us   calls: 13   "
				    "lost records: 7   unfinished: 0\n"));
	/* calls, total, self, avg, min, max, p50, p99, wall, name */
	assert_non_null(strstr(out, "\n         4    500 ns    500 ns    240 ns     80 ns    500 ns "));
	/* the tree: indented two spaces a level */
	assert_non_null(strstr(out, "         1    980 ns    280 ns    run\n"));
	assert_non_null(strstr(out, "         3     60 ns     60 ns        leaf_add\n"));
	free(out);

	f = open_memstream(&buf, &len);
	new_session(&s);
	assert_int_equal(report__new(NULL, &r), 0);
	feed(&s, r);
	report__print_summary(r, &s, f, 2);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "       calls      total       self        avg        max  function\n"
				 "           1    1.00 us      20 ns    1.00 us    1.00 us  main\n"
				 "           1     980 ns     280 ns     980 ns     980 ns  run\n"
				 "  ... 4 more functions\n");
	free(buf);
	report__free(r);
	session__free(&s);
}

/* p50/p99 against the exact nearest-rank percentiles: within 1/32 (report.c). */
static void check_pct(uint64_t got, uint64_t want)
{
	uint64_t d = got > want ? got - want : want - got;

	if (d * 32 > want)
		fail_msg("percentile %" PRIu64 ", exact %" PRIu64 ": off by more than 1/32", got,
			 want);
}

static void test_percentiles(void **state)
{
	static const uint64_t scale[] = { 1, 7, 1000, 123457, 1000000007ull };
	struct report_opts o = { .format = REPORT_CSV };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(scale) / sizeof(scale[0]); k++) {
		struct bp_session s;
		struct report *r;
		struct sim m;
		char *buf = NULL, *line;
		size_t len = 0, i;
		uint64_t ts = 0, v[6];
		FILE *f = open_memstream(&buf, &len);

		new_session(&s);
		assert_int_equal(report__new(&o, &r), 0);
		sim_init(&m, &s, r, 1, 1, 2);
		/* 1000 calls lasting 1..1000 x scale, shuffled by a stride coprime to 1000 */
		for (i = 0; i < 1000; i++) {
			uint64_t d = ((i * 337) % 1000 + 1) * scale[k];

			call(&m, F_SPREAD, ts, ts + d);
			ts += d;
		}
		free(m.st);
		assert_int_equal(report__print(r, &s, f), 0);
		assert_int_equal(fclose(f), 0);
		line = (char *)csv_row(buf, "spread,");
		assert_non_null(line);
		assert_int_equal(sscanf(line, "spread,prog,%*u,%" SCNu64 ",%*u,%" SCNu64 ",%" SCNu64
					      ",%" SCNu64 ",%" SCNu64 ",%" SCNu64,
					&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]),
				 6);
		assert_int_equal(v[0], 500500 * scale[k]);	/* total */
		assert_int_equal(v[1], 500 * scale[k] + scale[k] / 2);	/* avg, integer */
		assert_int_equal(v[2], scale[k]);		/* min, exact */
		assert_int_equal(v[3], 1000 * scale[k]);	/* max, exact */
		check_pct(v[4], 500 * scale[k]);
		check_pct(v[5], 990 * scale[k]);
		free(buf);
		report__free(r);
		session__free(&s);
	}
}

/*
 * The report with `o` of fib recursing `depth` deep on pid/tid 1: entered
 * every 10 ns, then left every 10 ns.  Returns the output (free it), its
 * length in *len.
 */
static char *deep_report(const struct report_opts *o, size_t depth, size_t *len)
{
	struct bp_session s;
	struct report *r;
	struct unit_mem mem;
	struct sim m;
	size_t i;
	char *buf;

	new_session(&s);
	assert_int_equal(report__new(o, &r), 0);
	sim_init(&m, &s, r, 1, 1, depth + 1);
	for (i = 0; i < depth; i++)
		enter(&m, F_FIB, 10 * i);
	for (i = 0; i < depth; i++)
		leave(&m, 10 * depth + 10 * i);
	free(m.st);
	assert_int_equal(report__print(r, &s, unit__mem_open(&mem)), 0);
	buf = unit__mem_close(&mem);
	*len = mem.len;
	report__free(r);
	session__free(&s);
	return buf;
}

/* Recursion 100000 deep: one path per level; linear time, no C-stack recursion. */
static void test_deep_recursion(void **state)
{
	struct report_opts o = { .format = REPORT_JSON, .depth = 3 };
	size_t len;
	char *buf = deep_report(&o, 100000, &len);

	(void)state;
	/* outermost [0, 20 D - 10]; each level 10 ns of self time on each side */
	python_check(buf, "assert F[\"fib\"][\"calls\"] == 100000\n"
			  "assert F[\"fib\"][\"total_ns\"] == 20 * 100000 - 10\n"
			  "assert F[\"fib\"][\"self_ns\"] == 20 * 100000 - 10\n"
			  "assert [len(x[\"path\"]) for x in d[\"tree\"]] == [1, 2, 3]\n");
	free(buf);
}

/*
 * Recursion 20000 deep, the whole tree: every format stays linear in the
 * number of nodes (it grew with the square of the depth: 400 MB pretty).
 */
static void test_deep_recursion_output_linear(void **state)
{
	enum { D = 20000 };
	static const enum report_format fmts[] = { REPORT_PRETTY, REPORT_JSON, REPORT_CSV };
	size_t k, i;

	(void)state;
	for (k = 0; k < 3; k++) {
		struct report_opts o = { .format = fmts[k], .tree_only = fmts[k] == REPORT_CSV };
		size_t len, lines = 0;
		char *buf = deep_report(&o, D, &len);

		for (i = 0; i < len; i++)
			lines += buf[i] == '\n';
		/* one line per level, each of bounded length */
		assert_true(lines >= D);
		if (len > (size_t)D * 200)
			fail_msg("format %zu: %zu bytes for %d nodes", k, len, D);
		if (fmts[k] == REPORT_PRETTY)
			assert_non_null(strstr(buf, "[20000] fib\n"));
		if (fmts[k] == REPORT_JSON)
			python_check(buf, "assert len(d[\"tree\"]) == 20000\n"
					  "assert [x[\"depth\"] for x in d[\"tree\"]] == list(range(1, 20001))\n"
					  "assert path(d[\"tree\"][-1]) == [\"fib\"] * 20000\n");
		free(buf);
	}
}

/* A call of a function the session does not have is corrupt input, not a crash. */
static void test_bad_func(void **state)
{
	struct bp_event ev = { .kind = BP_EV_CALL };
	struct bp_session s;
	struct report *r;

	(void)state;
	new_session(&s);
	assert_int_equal(report__new(NULL, &r), 0);
	ev.call.func = NFUNCS;
	ev.call.end = 10;
	assert_int_equal(report__add(r, &s, &ev), -EINVAL);
	ev.call.func = UINT32_MAX;
	ev.call.path = UINT32_MAX;
	assert_int_equal(report__add(r, &s, &ev), -EINVAL);
	/* a path number the session does not know: counted, left out of the tree */
	ev.call.func = F_MAIN;
	assert_int_equal(report__add(r, &s, &ev), 0);
	report__free(r);
	session__free(&s);
}

static void test_parse(void **state)
{
	enum report_sort k;
	enum report_format fmt;

	(void)state;
	assert_int_equal(report__parse_sort("self", &k), 0);
	assert_int_equal(k, REPORT_SORT_SELF);
	assert_int_equal(report__parse_sort("max", &k), 0);
	assert_int_equal(k, REPORT_SORT_MAX);
	assert_int_equal(report__parse_sort("bogus", &k), -EINVAL);
	assert_int_equal(report__parse_format("csv", &fmt), 0);
	assert_int_equal(fmt, REPORT_CSV);
	assert_int_equal(report__parse_format("xml", &fmt), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flat_exact),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_sort_top),
		cmocka_unit_test(test_depth_and_sections),
		cmocka_unit_test(test_pretty_and_summary),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_deep_recursion),
		cmocka_unit_test(test_deep_recursion_output_linear),
		cmocka_unit_test(test_bad_func),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
