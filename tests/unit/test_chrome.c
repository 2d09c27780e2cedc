// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Chrome exporter and the exporter lifecycle: exact output for known
 * events, JSON validity checked by a real parser, temporary files that never
 * survive a failure, and write errors that reach the caller.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "exporters/exporter.h"
#include "model/session.h"
#include "helpers.h"

struct fixture {
	char dir[64];
	char path[128];
	struct bp_session s;
	uint32_t f_main, f_work, f_quote;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct bp_func f = {0};
	uint32_t mod, lib;

	if (!fx || unit__mkdtemp(fx->dir, fx->path, sizeof(fx->path), "chrome", "trace.json"))
		return -1;
	mod = unit__demo_session(&fx->s);
	fx->s.cmdline = strdup("./demo --flag \"x\"");
	fx->s.hostname = strdup("host1");
	fx->s.kernel = strdup("6.1.0");
	lib = session__add_module(&fx->s, "/lib/x86_64-linux-gnu/libc.so.6");
	f.name = "main";
	f.module = mod;
	fx->f_main = session__add_func(&fx->s, &f);
	f.name = "malloc";
	f.module = lib;
	fx->f_work = session__add_func(&fx->s, &f);
	f.name = "op\"quote\"";
	f.module = mod;
	fx->f_quote = session__add_func(&fx->s, &f);

	strcpy(session__thread(&fx->s, 101, 100)->name, "worker-1");
	session__thread(&fx->s, 102, 100);	/* no name: "tid 102" */
	session__process(&fx->s, 200);		/* no name: "pid 200" */

	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	return unit__fixture_free(fx->dir, &fx->s, fx);
}

/* A real parser decides validity, not our own idea of JSON. */
static void assert_valid_json(const char *path)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static int count_substr(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* A call of pid 100 whose caller (at depth > 0) is call 1. */
static struct bp_event call_ev(uint64_t id, uint32_t func, uint32_t tid, uint64_t begin,
			       uint64_t end, uint64_t self, uint32_t depth, uint32_t flags)
{
	return unit__call(id, depth ? 1 : 0, func, 0, tid, begin, end, self, depth, flags);
}

/* Writes `n` events to fx->path through the full lifecycle. */
static void write_trace(struct fixture *fx, const struct bp_event *evs, int n)
{
	struct exporter *e = NULL;
	int i;

	assert_int_equal(exporter__new(&chrome_exporter, fx->path, &fx->s, &e), 0);
	assert_non_null(e);
	for (i = 0; i < n; i++)
		assert_int_equal(exporter__event(e, &fx->s, &evs[i]), 0);
	assert_int_equal(exporter__finish(e, &fx->s), 0);
	exporter__free(e);
}

static void test_lookup(void **state)
{
	int i, found = 0;

	(void)state;
	assert_ptr_equal(exporter__for_path("x.json"), &chrome_exporter);
	assert_ptr_equal(exporter__for_path("/a/b/trace.JSON"), &chrome_exporter);
	assert_null(exporter__for_path("x.txt"));
	assert_null(exporter__for_path("json"));
	assert_null(exporter__for_path(""));
	assert_ptr_equal(exporter__find("chrome"), &chrome_exporter);
	assert_null(exporter__find("nope"));
	assert_null(exporter__find(NULL));
	for (i = 0; exporter_table[i]; i++) {
		assert_non_null(exporter_table[i]->name);
		assert_non_null(exporter_table[i]->help);
		if (exporter_table[i] == &chrome_exporter)
			found = 1;
	}
	assert_true(found);
}

static void test_events(void **state)
{
	struct fixture *fx = *state;
	const char *head = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"version\":\"bpfprof 0.1\","
			   "\"command\":\"./demo --flag \\\"x\\\"\",\"hostname\":\"host1\","
			   "\"kernel\":\"6.1.0\"},\"traceEvents\":[\n";
	struct bp_event evs[5];
	struct stat st;
	char *out;

	evs[0] = call_ev(8, fx->f_work, 101, 2000, 2999, 999, 1, 0);
	evs[1] = call_ev(7, fx->f_main, 101, 1500, 3001500, 2000500, 0, 0);
	evs[2] = call_ev(9, fx->f_quote, 100, 5000, 9000, 4000, 0, BP_CALL_UNFINISHED);
	evs[3] = call_ev(10, fx->f_main, 102, 0, 10, 10, 0, BP_CALL_NO_ENTRY | BP_CALL_UNWOUND);
	evs[4] = unit__loss(1234567, 42, 3);
	write_trace(fx, evs, 5);

	assert_valid_json(fx->path);
	/* only the final file remains: the temporary was renamed */
	assert_int_equal(unit__count_entries(fx->dir), 1);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);

	out = unit__slurp(fx->path, NULL);
	assert_int_equal(strncmp(out, head, strlen(head)), 0);
	unit__assert_contains(out, "\n{\"name\":\"main\",\"cat\":\"call\",\"ph\":\"X\",\"ts\":1.500,"
			"\"dur\":3000.000,\"pid\":100,\"tid\":101,\"args\":{\"depth\":0,"
			"\"self_us\":2000.500,\"id\":7,\"module\":\"demo\"}},\n");
	unit__assert_contains(out, "{\"name\":\"malloc\",\"cat\":\"call\",\"ph\":\"X\",\"ts\":2.000,"
			"\"dur\":0.999,\"pid\":100,\"tid\":101,\"args\":{\"depth\":1,"
			"\"self_us\":0.999,\"id\":8,\"module\":\"libc.so.6\"}}");
	/* the quote in the function name is escaped; the flag is in args */
	unit__assert_contains(out, "{\"name\":\"op\\\"quote\\\"\",\"cat\":\"call\",\"ph\":\"X\","
			"\"ts\":5.000,"
			"\"dur\":4.000,\"pid\":100,\"tid\":100,\"args\":{\"depth\":0,"
			"\"self_us\":4.000,\"id\":9,\"module\":\"demo\",\"unfinished\":true}}");
	unit__assert_contains(out, "\"id\":10,\"module\":\"demo\",\"began_before_recording\":true,"
			"\"unwound\":true}}");
	unit__assert_contains(out, "{\"name\":\"lost 42 records\",\"cat\":\"loss\",\"ph\":\"i\","
			"\"s\":\"g\","
			"\"ts\":1234.567,\"pid\":0,\"tid\":0,\"args\":{\"cpu\":3,\"count\":42}}");
	/* metadata */
	unit__assert_contains(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":100,\"tid\":0,"
			"\"args\":{\"name\":\"demo\"}}");
	unit__assert_contains(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":200,\"tid\":0,"
			"\"args\":{\"name\":\"pid 200\"}}");
	unit__assert_contains(out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":100,\"tid\":101,"
			"\"args\":{\"name\":\"worker-1\"}}");
	unit__assert_contains(out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":100,\"tid\":102,"
			"\"args\":{\"name\":\"tid 102\"}}");
	/* flags appear only on the calls that have them */
	assert_int_equal(count_substr(out, "unfinished"), 1);
	assert_int_equal(count_substr(out, "began_before_recording"), 1);
	assert_int_equal(count_substr(out, "unwound"), 1);
	/* one event per line, the last closing the array without a comma */
	assert_int_equal(count_substr(out, "\n"), 1 + 5 + 2 + 3 + 1);
	unit__assert_contains(out, "\"args\":{\"name\":\"tid 102\"}}\n],\"bpfprofTiming\":\"raw clock\"}\n");
	/* how durations were measured comes last, once the recording knows it */
	unit__assert_contains(out, "\n],\"bpfprofTiming\":\"raw clock\"}\n");
	free(out);
}

static void test_zero_events(void **state)
{
	struct fixture *fx = *state;
	char *out;

	write_trace(fx, NULL, 0);
	assert_valid_json(fx->path);
	out = unit__slurp(fx->path, NULL);
	unit__assert_contains(out, "\"traceEvents\":[\n{\"name\":\"process_name\"");
	free(out);
}

/* An empty session: no events and no metadata still makes valid JSON. */
static void test_empty_session(void **state)
{
	struct fixture *fx = *state;
	struct bp_session empty;
	struct exporter *e = NULL;
	char *out;

	session__init(&empty);
	assert_int_equal(exporter__new(&chrome_exporter, fx->path, &empty, &e), 0);
	assert_int_equal(exporter__finish(e, &empty), 0);
	exporter__free(e);
	session__free(&empty);
	assert_valid_json(fx->path);
	out = unit__slurp(fx->path, NULL);
	assert_string_equal(out, "{\"displayTimeUnit\":\"ns\","
			    "\"otherData\":{\"version\":\"bpfprof 0.1\","
			    "\"command\":\"\",\"hostname\":\"\",\"kernel\":\"\"},"
			    "\"traceEvents\":[\n],\"bpfprofTiming\":\"raw clock\"}\n");
	free(out);
}

/* Names from symbol tables or comm may be anything: the output stays JSON. */
static void test_hostile_names(void **state)
{
	struct fixture *fx = *state;
	struct bp_func f = {0};
	struct bp_thread *t;
	struct bp_event ev;
	uint32_t id;

	f.name = "bad\xff\x01\n\\name\xc3";
	id = session__add_func(&fx->s, &f);
	t = session__thread(&fx->s, 103, 100);
	memcpy(t->name, "0123456789abcdef", 16);	/* full, not NUL-terminated */
	ev = call_ev(1, id, 103, 1, 2, 1, 0, 0);
	write_trace(fx, &ev, 1);
	assert_valid_json(fx->path);
	{
		char *out = unit__slurp(fx->path, NULL);

		unit__assert_contains(out, "\"name\":\"bad\\uFFFD\\u0001\\n\\\\name\\uFFFD\"");
		unit__assert_contains(out, "\"args\":{\"name\":\"0123456789abcdef\"}}");
		free(out);
	}
}

static void test_free_without_finish(void **state)
{
	struct fixture *fx = *state;
	struct exporter *e = NULL;
	struct bp_event ev = call_ev(1, fx->f_main, 100, 0, 1000, 1000, 0, 0);
	struct stat st;

	assert_int_equal(exporter__new(&chrome_exporter, fx->path, &fx->s, &e), 0);
	assert_int_equal(exporter__event(e, &fx->s, &ev), 0);
	/* the temporary exists beside the destination, the destination does not */
	assert_int_equal(unit__count_entries(fx->dir), 1);
	assert_non_null(e->tmp_path);
	assert_int_equal(strncmp(e->tmp_path, fx->path, strlen(fx->path)), 0);
	assert_int_equal(stat(e->tmp_path, &st), 0);
	assert_int_not_equal(stat(fx->path, &st), 0);
	exporter__free(e);
	assert_int_equal(unit__count_entries(fx->dir), 0);
	assert_int_not_equal(stat(fx->path, &st), 0);
}

/* A failed run must not replace an older good trace at the same path. */
static void test_failure_keeps_old_file(void **state)
{
	struct fixture *fx = *state;
	struct exporter *e = NULL;
	char *out;
	FILE *f;

	f = fopen(fx->path, "w");
	assert_non_null(f);
	fputs("old", f);
	fclose(f);
	assert_int_equal(exporter__new(&chrome_exporter, fx->path, &fx->s, &e), 0);
	exporter__free(e);
	out = unit__slurp(fx->path, NULL);
	assert_string_equal(out, "old");
	free(out);
	assert_int_equal(unit__count_entries(fx->dir), 1);
}

static void test_bad_dir(void **state)
{
	struct fixture *fx = *state;
	struct exporter *e = (struct exporter *)&e;	/* must be reset to NULL */
	char path[256];
	int err;

	snprintf(path, sizeof(path), "%s/no/such/dir/trace.json", fx->dir);
	err = exporter__new(&chrome_exporter, path, &fx->s, &e);
	assert_int_equal(err, -ENOENT);
	assert_null(e);
}

/* In the child of test_write_error: 0 when the write error reached finish. */
static int write_past_limit(void *arg)
{
	struct fixture *fx = arg;
	struct rlimit rl = { .rlim_cur = 4096, .rlim_max = 4096 };
	struct bp_event ev = call_ev(1, fx->f_main, 100, 0, 1000, 1000, 0, 0);
	struct exporter *e = NULL;
	int i, err = 0;

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl))
		return 10;
	if (exporter__new(&chrome_exporter, fx->path, &fx->s, &e))
		return 11;
	/* more than the limit, but less than the 1 MiB buffer */
	for (i = 0; i < 1000 && !err; i++)
		err = exporter__event(e, &fx->s, &ev);
	if (err)
		return 12;	/* buffered: the error shows at finish */
	err = exporter__finish(e, &fx->s);
	exporter__free(e);
	return err == -EFBIG ? 0 : 13;
}

/*
 * A write error (here the file size limit, EFBIG) reaches the caller and
 * leaves no file.  In a child: the limit and the signal setting are global.
 */
static void test_write_error(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(unit__in_child(write_past_limit, fx), 0);
	assert_int_equal(unit__count_entries(fx->dir), 0);
}

/*
 * Under sudo, the trace belongs to the user who ran sudo, not to root, in a
 * directory of theirs; in a directory of root's (/etc) it stays root's: a
 * sudo rule for bpfprof alone must not hand out files there (issue 27).
 */
/* SUDO_UID/SUDO_GID 12345/23456 on, or back to what they were. */
static void fake_sudo(bool on)
{
	static char *saved_uid, *saved_gid;

	if (on) {
		saved_uid = getenv("SUDO_UID") ? strdup(getenv("SUDO_UID")) : NULL;
		saved_gid = getenv("SUDO_GID") ? strdup(getenv("SUDO_GID")) : NULL;
		setenv("SUDO_UID", "12345", 1);
		setenv("SUDO_GID", "23456", 1);
		return;
	}
	if (saved_uid)
		setenv("SUDO_UID", saved_uid, 1);
	else
		unsetenv("SUDO_UID");
	if (saved_gid)
		setenv("SUDO_GID", saved_gid, 1);
	else
		unsetenv("SUDO_GID");
	free(saved_uid);
	free(saved_gid);
	saved_uid = saved_gid = NULL;
}

static void test_sudo_owner(void **state)
{
	struct fixture *fx = *state;
	struct exporter *e = NULL;
	struct stat st;
	int err;

	if (geteuid() != 0)
		skip();
	fake_sudo(true);
	write_trace(fx, NULL, 0);	/* the fixture's directory is root's */
	fake_sudo(false);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(unlink(fx->path), 0);

	assert_int_equal(chown(fx->dir, 12345, 23456), 0);
	fake_sudo(true);
	write_trace(fx, NULL, 0);
	fake_sudo(false);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_uid, 12345);
	assert_int_equal(st.st_gid, 23456);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(unlink(fx->path), 0);

	/* made as that user: a directory of theirs they cannot write stays so, root or not */
	assert_int_equal(chmod(fx->dir, 0500), 0);
	fake_sudo(true);
	err = exporter__new(&chrome_exporter, fx->path, &fx->s, &e);
	fake_sudo(false);
	assert_int_equal(chmod(fx->dir, 0700), 0);
	assert_int_equal(err, -EACCES);
	assert_null(e);
	assert_int_equal(unit__count_entries(fx->dir), 0);
}

/* In the child of test_stdout_full: 0 when the full device was an error. */
static int finish_on_full_stdout(void *arg)
{
	struct fixture *fx = arg;
	struct exporter *e = NULL;
	int err;

	if (!freopen("/dev/full", "w", stdout))
		return 10;
	if (exporter__new(&chrome_exporter, "-", &fx->s, &e))
		return 11;
	if (e->tmp_path)
		return 12;
	err = exporter__finish(e, &fx->s);
	exporter__free(e);
	return err == -ENOSPC ? 0 : 13;
}

/* "-" writes to stdout; a full device there is an error too. */
static void test_stdout_full(void **state)
{
	assert_int_equal(unit__in_child(finish_on_full_stdout, *state), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test_setup_teardown(test_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_without_finish, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_keeps_old_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdout_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sudo_owner, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
