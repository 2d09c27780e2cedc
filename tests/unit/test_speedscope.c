// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The speedscope exporter on known events (tests/unit/formats_fixture.h):
 * calls, stack samples, an empty recording and many threads, checked by an
 * outside parser.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_speedscope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_many, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
