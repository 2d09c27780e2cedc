// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Probe cost calibration (see calibrate.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "calibrate.h"
#include "cpython/cpython.h"
#include "probes/trace.h"
#include "probes/usdt.h"
#include "decode/decode.h"
#include "symbols/select.h"
#include "base/away.h"
#include "base/log.h"
#include "base/util.h"

/*
 * The functions the helper calls.  Their first instruction decides the
 * path: push (emulated), mov (single-stepped: nothing is placed here, the
 * probes go on the entries), the 5-byte nop; the reference is the push one's
 * twin, never probed.  bpfprof_cal_outer (emulated) calls the emulated one
 * and returns: the inner return's timestamp to its own is the return
 * probe's whole cost (the tail, T in decode/compensate.h), 2 instructions
 * apart.
 */
asm(".text\n"
    ".globl bpfprof_cal_emulated\n.type bpfprof_cal_emulated,@function\n.p2align 4\n"
    "bpfprof_cal_emulated:\n\tpush %rbp\n\tpop %rbp\n\tret\n"
    ".size bpfprof_cal_emulated, .-bpfprof_cal_emulated\n"
    ".globl bpfprof_cal_step\n.type bpfprof_cal_step,@function\n.p2align 4\n"
    "bpfprof_cal_step:\n\tmov %rdi, %rax\n\tret\n"
    ".size bpfprof_cal_step, .-bpfprof_cal_step\n"
    ".globl bpfprof_cal_nop5\n.type bpfprof_cal_nop5,@function\n.p2align 4\n"
    "bpfprof_cal_nop5:\n\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret\n"
    ".size bpfprof_cal_nop5, .-bpfprof_cal_nop5\n"
    ".globl bpfprof_cal_outer\n.type bpfprof_cal_outer,@function\n.p2align 4\n"
    "bpfprof_cal_outer:\n\tpush %rbp\n\tcall bpfprof_cal_emulated\n\tpop %rbp\n\tret\n"
    ".size bpfprof_cal_outer, .-bpfprof_cal_outer\n"
    ".globl bpfprof_cal_ref\n.type bpfprof_cal_ref,@function\n.p2align 4\n"
    "bpfprof_cal_ref:\n\tpush %rbp\n\tpop %rbp\n\tret\n"
    ".size bpfprof_cal_ref, .-bpfprof_cal_ref\n");

#define CAL_CALLS	100	/* per path and round: ~3 ms single-stepped on the slow VM */
#define CAL_WARMUP	30	/* first calls, not measured: the kernel maps its XOL page, optimises nop5 */
#define CAL_ROUNDS	5
#define CAL_OUTER	PP_PYTHON	/* the session's function id of bpfprof_cal_outer (Python has none) */
#define CACHE_DIR	"/run/bpfprof"
#define CACHE_FILE	CACHE_DIR "/calibration"
#define CACHE_MAX_AGE	3600

/* Rough figures of the development VM (make bench), for when nothing can be measured. */
static const struct probe_costs fallback = {
	.total_ns = { 7500, 23000, 3000, 13000 },
	.inside_ns = { 3700, 11500, 1500, 6500 },
	.exit_ns = 1500,
	.annot_ns = 13000,
};

static void (*const cal_fn[PP_NPATHS])(void) = {
	bpfprof_cal_emulated, bpfprof_cal_step, bpfprof_cal_nop5, bpfprof_cal_py,
};

const char *calibrate__path_name(enum probe_path_kind k)
{
	static const char *const names[] = { "emulated", "single-step", "nop5", "python" };

	return k < PP_NPATHS ? names[k] : "?";
}

/* per event (the overhead's and the governor's counts): no names compared */
enum probe_path_kind calibrate__path(const struct bp_func *f)
{
	/* a Python call: python.bpf.c at a RESUME handler and a return site */
	if (f->flags & BP_FUNC_PYTHON)
		return PP_PYTHON;
	switch (select__probe_kind(f)) {
	case SELECT_SINGLE_STEP:
		return PP_SINGLE_STEP;
	case SELECT_NOP5:
		return PP_NOP5;
	default:
		return PP_EMULATED;
	}
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * The helper's loops are timed on the wall clock, what the traced program
 * lives by: on a VM the probes' traps also cost time the hypervisor takes
 * (here 7,300 ns of CPU time per emulated call was 22,000 ns of wall time).
 * To keep other programs of a busy machine from taking the CPU at the
 * traps, the helper runs SCHED_FIFO when it may (root), and the median of
 * the rounds counts.
 */
static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* What the helper measured; warm_end: when its warm-up ended (CLOCK_MONOTONIC ns). */
struct cal_result {
	uint64_t warm_end;
	double v[CAL_ROUNDS][PP_NPATHS][2];	/* ns per call: traced loop, reference loop */
	double annot[CAL_ROUNDS][2];		/* the same, of bpfprof_cal_annot */
};

/* ns per call of CAL_CALLS calls of f, then of the reference: v[0], v[1] */
static void timed(void (*f)(void), double *v)
{
	void (*volatile fn)(void) = f;
	uint64_t t0, t1, t2;
	int i;

	t0 = cpu_ns();
	for (i = 0; i < CAL_CALLS; i++)
		fn();
	t1 = cpu_ns();
	fn = bpfprof_cal_ref;
	for (i = 0; i < CAL_CALLS; i++)
		fn();
	t2 = cpu_ns();
	v[0] = (double)(t1 - t0) / CAL_CALLS;
	v[1] = (double)(t2 - t1) / CAL_CALLS;
}

/* The helper: waits for the go, warms up, then per round and path the traced loop and the reference. */
static void __attribute__((noreturn)) helper(int go, int res)
{
	struct cal_result cr;
	void (*volatile fn)(void);
	char c;
	int r, p, i;

	if (read(go, &c, 1) != 1)
		_exit(1);
	{
		struct sched_param sp = { .sched_priority = 10 };

		sched_setscheduler(0, SCHED_FIFO, &sp);	/* best effort (see cpu_ns) */
	}
	for (p = 0; p <= PP_NPATHS + 1; p++) {
		fn = p < PP_NPATHS ? cal_fn[p] : p == PP_NPATHS ? bpfprof_cal_outer : bpfprof_cal_annot;
		for (i = 0; i < CAL_WARMUP; i++)
			fn();
	}
	cr.warm_end = mono_ns();
	for (r = 0; r < CAL_ROUNDS; r++) {
		for (p = 0; p < PP_NPATHS; p++)
			timed(cal_fn[p], cr.v[r][p]);
		fn = bpfprof_cal_outer;
		for (i = 0; i < CAL_CALLS; i++)
			fn();
		timed(bpfprof_cal_annot, cr.annot[r]);
	}
	if (write(res, &cr, sizeof(cr)) != (ssize_t)sizeof(cr))
		_exit(1);
	_exit(0);
}

/* File offset of code address `addr` of this process, and the file's path. */
static int self_offset(const void *addr, char *path, size_t len, unsigned long *off)
{
	unsigned long a = (unsigned long)addr, lo, hi, foff;
	char line[4400], p[4097];
	FILE *f = fopen("/proc/self/maps", "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		p[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4096s", &lo, &hi, &foff, p) < 3)
			continue;
		if (a < lo || a >= hi || p[0] != '/')
			continue;
		snprintf(path, len, "%s", p);
		*off = a - lo + foff;
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

/* The measured calls' durations per path (the median is what counts: preemption only adds). */
struct cal_sink {
	double dur[PP_NPATHS][CAL_CALLS * CAL_ROUNDS];
	uint64_t n[PP_NPATHS];
	double tail[CAL_CALLS * CAL_ROUNDS];	/* inner return -> outer return */
	uint64_t ntail;
	uint64_t inner_begin, inner_end;	/* the last emulated call */
	uint64_t from;		/* calls before (session time) are the warm-up */
	uint64_t t0;		/* the session's t0 */
	uint64_t py_begin;	/* the Python call open (raw ts), 0: none */
	uint64_t nannot;	/* bpfprof_cal_annot's events */
	struct decoder *dec;
};

/* A duration of path p, once the warm-up is over. */
static void sink_add(struct cal_sink *cs, unsigned p, uint64_t begin, uint64_t end)
{
	if (begin >= cs->from && cs->n[p] < CAL_CALLS * CAL_ROUNDS)
		cs->dur[p][cs->n[p]++] = (double)(end - begin);
}

static int on_event(void *ctx, const struct bp_event *ev)
{
	struct cal_sink *cs = ctx;

	if (ev->kind == BP_EV_ANNOT)
		cs->nannot++;
	if (ev->kind != BP_EV_CALL || (ev->call.flags & (BP_CALL_UNFINISHED | BP_CALL_UNWOUND |
							  BP_CALL_NO_ENTRY | BP_CALL_ENTRY_LOST)))
		return 0;
	if (ev->call.func < PP_PYTHON)
		sink_add(cs, ev->call.func, ev->call.begin, ev->call.end);
	if (ev->call.func == PP_EMULATED) {
		cs->inner_begin = ev->call.begin;
		cs->inner_end = ev->call.end;
	} else if (ev->call.func == CAL_OUTER && ev->call.begin >= cs->from &&
		   cs->inner_begin > ev->call.begin && cs->inner_end < ev->call.end &&
		   cs->ntail < CAL_CALLS * CAL_ROUNDS) {
		cs->tail[cs->ntail++] = (double)(ev->call.end - cs->inner_end);
	}
	return 0;
}

/* The Python path's calls are timed here, from its records: the decoder keeps them as Python frames. */
static int on_record(void *ctx, const void *rec, size_t size)
{
	struct cal_sink *cs = ctx;
	uint64_t ts;
	int py = decoder__py_call(rec, size, &ts);

	if (py && ts > cs->t0) {
		if (py > 0) {
			cs->py_begin = ts - cs->t0;
		} else if (cs->py_begin) {
			sink_add(cs, PP_PYTHON, cs->py_begin, ts - cs->t0);
			cs->py_begin = 0;
		}
	}
	return decoder__feed(cs->dec, rec, size);
}

/*
 * Detaching return probes waits for an SRCU grace period (up to a second
 * here): the private tracer is freed by a thread meanwhile, joined by
 * calibrate__join() at the end of the recording.
 */
static pthread_t releaser;
static bool releasing;
static struct py_tracer *releasing_py;
static struct usdt_tracer *releasing_annot;

static void *release_fn(void *tr)
{
	struct away a = { .pid = -1 };
	int *fds = NULL;
	size_t n = tr ? tracer__link_fds(tr, &fds) : 0, borrowed;

	/*
	 * The uprobe links' last close happens in a child (base/away.h), the
	 * Python and annotation probes' as the others': a thread blocked in it
	 * would hold up bpfprof's exit (calibrate__join) as long as the grace
	 * periods take, for ever while a thread elsewhere keeps a return probe
	 * pending and calls on (every uprobe's removal waits for them).  The
	 * annotation's links are libbpf's, inside its USDT link: opened anew by
	 * id for the child, and those copies closed here.  The child is not
	 * waited for: it ends alone, reaped as bpfprof's other children are or
	 * by init.
	 */
	n = python__link_fds(releasing_py, &fds, n);
	borrowed = n;
	n = usdt__link_fds(releasing_annot, &fds, n);	/* opened anew: closed here */
	if (n && !away__start(&a, fds, n) && tr)
		tracer__disown(tr);
	while (n > borrowed)
		close(fds[--n]);
	free(fds);
	calpy__free(releasing_py);
	releasing_py = NULL;
	usdt__free(releasing_annot);
	releasing_annot = NULL;
	tracer__free(tr);
	away__finish(&a);
	away__leave(&a);
	return NULL;
}

static void release_tracer(struct tracer *tr, struct py_tracer *py, struct usdt_tracer *annot)
{
	calibrate__join();
	releasing_py = py;
	releasing_annot = annot;
	if (!tr && !py && !annot)
		return;
	if (pthread_create(&releaser, NULL, release_fn, tr) == 0)
		releasing = true;
	else
		release_fn(tr);
}

void calibrate__join(void)
{
	if (releasing)
		pthread_join(releaser, NULL);
	releasing = false;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The session of the calibration: this executable (path, len bytes; other:
 * as many, scratch) with the native paths' functions, then
 * bpfprof_cal_outer as CAL_OUTER (their file offsets in offs), and the
 * Python path's.  0 or -errno.
 */
static int cal_session(struct bp_session *s, char *path, char *other, size_t len,
		       unsigned long *offs)
{
	int err, p;

	for (p = 0; p < PP_NPATHS; p++) {
		err = self_offset((const void *)cal_fn[p], p ? other : path, len, &offs[p]);
		if (err)
			return err;
		if (p && strcmp(other, path))
			return -EINVAL;
	}
	/* the native paths' functions, then bpfprof_cal_outer as CAL_OUTER */
	err = self_offset((const void *)bpfprof_cal_outer, other, len, &offs[PP_NPATHS]);
	if (err)
		return err;
	if (strcmp(other, path))
		return -EINVAL;
	session__add_module(s, path);
	for (p = 0; p <= PP_PYTHON; p++) {
		struct bp_func f = { .name = p < PP_PYTHON ? (char *)calibrate__path_name(p) :
							   (char *)"outer", .nparams = -1 };

		session__add_func(s, &f);
	}
	return 0;
}

/* The figures of each path from the helper's timings (cr) and the records' (cs). */
static int cal_figures(struct cal_sink *cs, const struct cal_result *cr, int py_err,
		       struct probe_costs *out)
{
	int p, r;

	for (p = 0; p < PP_NPATHS; p++) {
		double tot[CAL_ROUNDS], ref[CAL_ROUNDS];

		if (p == PP_PYTHON && (py_err || cs->n[p] < CAL_CALLS * CAL_ROUNDS / 2)) {
			/* the native paths stand: the Python one alone is a guess */
			p_dbg("Python probe calibration failed (%s): using the development VM's "
			      "figure", py_err ? strerror(-py_err) : "no records");
			out->total_ns[p] = fallback.total_ns[p];
			out->inside_ns[p] = fallback.inside_ns[p];
			continue;
		}
		/* the records did not come: no figure is better than a wrong one */
		if (cs->n[p] < CAL_CALLS * CAL_ROUNDS / 2)
			return -ENODATA;
		for (r = 0; r < CAL_ROUNDS; r++) {
			tot[r] = cr->v[r][p][0] - cr->v[r][p][1];
			ref[r] = cr->v[r][p][1];
		}
		qsort(tot, CAL_ROUNDS, sizeof(double), cmp_double);
		qsort(ref, CAL_ROUNDS, sizeof(double), cmp_double);
		out->total_ns[p] = tot[CAL_ROUNDS / 2];
		qsort(cs->dur[p], cs->n[p], sizeof(double), cmp_double);
		out->inside_ns[p] = cs->dur[p][cs->n[p] / 2] - ref[CAL_ROUNDS / 2];
		if (out->inside_ns[p] < 0)
			out->inside_ns[p] = 0;
		if (out->inside_ns[p] > out->total_ns[p])
			out->inside_ns[p] = out->total_ns[p];
		if (tot[CAL_ROUNDS / 2] > 0 &&
		    (tot[CAL_ROUNDS - 1] - tot[0]) / tot[CAL_ROUNDS / 2] > out->spread)
			out->spread = (tot[CAL_ROUNDS - 1] - tot[0]) / tot[CAL_ROUNDS / 2];
	}
	if (cs->ntail >= CAL_CALLS * CAL_ROUNDS / 2) {
		qsort(cs->tail, cs->ntail, sizeof(double), cmp_double);
		out->exit_ns = cs->tail[cs->ntail / 2];
	} else {
		out->exit_ns = fallback.exit_ns;
	}
	if (out->exit_ns > out->total_ns[PP_EMULATED])
		out->exit_ns = out->total_ns[PP_EMULATED];
	return 0;
}

/* annot_ns: the median round's, as the paths' totals; the fallback's when the events did not come */
static void annot_figure(const struct cal_sink *cs, const struct cal_result *cr, int err,
			 struct probe_costs *out)
{
	double tot[CAL_ROUNDS];
	int r;

	if (err || cs->nannot < CAL_CALLS * CAL_ROUNDS / 2) {
		p_dbg("annotation probe calibration failed (%s): using the development VM's figure",
		      err ? strerror(-err) : "no records");
		out->annot_ns = fallback.annot_ns;
		return;
	}
	for (r = 0; r < CAL_ROUNDS; r++)
		tot[r] = cr->annot[r][0] - cr->annot[r][1];
	qsort(tot, CAL_ROUNDS, sizeof(double), cmp_double);
	out->annot_ns = tot[CAL_ROUNDS / 2] > 0 ? tot[CAL_ROUNDS / 2] : fallback.annot_ns;
}

static int measure(struct probe_costs *out)
{
	struct tracer_opts topts = { .buffer_size = 1 << 20 };
	struct cal_result cr;
	struct bp_session s;
	struct cal_sink *cs = xcalloc(1, sizeof(*cs));
	struct decoder *dec = NULL;
	struct tracer *tr = NULL;
	struct py_tracer *py = NULL;
	struct usdt_tracer *annot = NULL;
	unsigned long offs[PP_NPATHS + 1];
	uint64_t refused[PP_NPATHS + 1];
	size_t nrefused = 0;
	char path[4097], other[4097];
	int go[2] = { -1, -1 }, res[2] = { -1, -1 }, err, py_err = -ENOENT, annot_err, p, status;
	pid_t child = -1;

	session__init(&s);
	err = cal_session(&s, path, other, sizeof(path), offs);
	if (err)
		goto cleanup;
	s.t0 = cs->t0 = mono_ns();
	err = decoder__new(&s, on_event, cs, &cs->dec);
	if (err)
		goto cleanup;
	dec = cs->dec;
	err = tracer__new(&topts, on_record, cs, &tr);
	if (err)
		goto cleanup;
	if (pipe2(go, O_CLOEXEC) || pipe2(res, O_CLOEXEC)) {
		err = -errno;
		goto cleanup;
	}
	py_err = calpy__prepare();
	child = fork();
	if (child < 0) {
		err = -errno;
		goto cleanup;
	}
	if (child == 0) {
		close(go[1]);
		close(res[0]);
		helper(go[0], res[1]);
	}
	close(go[0]);
	close(res[1]);
	go[0] = res[1] = -1;
	err = tracer__add_pid(tr, child);
	if (!err) {
		/* the native paths and the outer function, cookies = the session's ids */
		unsigned long o4[PP_PYTHON + 1];
		uint64_t c4[PP_PYTHON + 1];

		for (p = 0; p < PP_PYTHON; p++) {
			o4[p] = offs[p];
			c4[p] = (uint64_t)p;
		}
		o4[CAL_OUTER] = offs[PP_NPATHS];
		c4[CAL_OUTER] = CAL_OUTER;
		err = tracer__attach(tr, path, o4, c4, PP_PYTHON + 1, false, refused, &nrefused);
	}
	if (!err && nrefused)
		err = -ENOTSUP;
	if (err)
		goto cleanup;
	if (!py_err)
		py_err = calpy__attach(tr, path, offs[PP_PYTHON], &py);
	annot_err = calannot__attach(tr, path, &annot);
	if (write(go[1], "g", 1) != 1) {
		err = -EPIPE;
		goto cleanup;
	}
	if (read(res[0], &cr, sizeof(cr)) != (ssize_t)sizeof(cr)) {
		err = -EPIPE;
		goto cleanup;
	}
	cs->from = cr.warm_end > s.t0 ? cr.warm_end - s.t0 : 0;
	tracer__pause(tr);
	calpy__pause(py);
	if (annot)
		usdt__pause(annot);
	do {
		err = tracer__poll(tr, true);
	} while (err > 0);
	if (err < 0)
		goto cleanup;
	err = decoder__finish(dec);
	if (err)
		goto cleanup;
	err = cal_figures(cs, &cr, py_err, out);
	if (!err)
		annot_figure(cs, &cr, annot_err, out);
	if (err)
		goto cleanup;
	out->measured = true;
	err = 0;
cleanup:
	if (go[1] >= 0)
		close(go[1]);	/* a helper still waiting reads EOF and leaves */
	if (child > 0)
		waitpid(child, &status, 0);
	if (go[0] >= 0)
		close(go[0]);
	if (res[0] >= 0)
		close(res[0]);
	if (res[1] >= 0)
		close(res[1]);
	release_tracer(tr, py, annot);
	decoder__free(dec);
	session__free(&s);
	free(cs);
	return err;
}

/* "kernel exe-dev:ino:mtime": what the figures hold for. */
static void cache_key(char *buf, size_t len)
{
	struct utsname u;
	struct stat st;

	if (uname(&u))
		u.release[0] = '\0';
	if (stat("/proc/self/exe", &st))
		memset(&st, 0, sizeof(st));
	snprintf(buf, len, "%s %lu:%lu:%lld", u.release, (unsigned long)st.st_dev,
		 (unsigned long)st.st_ino, (long long)st.st_mtime);
}

static bool read_cache(struct probe_costs *out)
{
	char key[512], line[1024], fkey[512];
	long long when;
	struct probe_costs c = { 0 };
	FILE *f = fopen(CACHE_FILE, "r");
	bool ok = false;

	if (!f)
		return false;
	cache_key(key, sizeof(key));
	if (fgets(fkey, sizeof(fkey), f) && fgets(line, sizeof(line), f)) {
		fkey[strcspn(fkey, "\n")] = '\0';
		ok = !strcmp(fkey, key) &&
		     sscanf(line, "%lld %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &when,
			    &c.total_ns[0], &c.inside_ns[0], &c.total_ns[1], &c.inside_ns[1],
			    &c.total_ns[2], &c.inside_ns[2], &c.total_ns[3], &c.inside_ns[3],
			    &c.spread, &c.exit_ns, &c.annot_ns) == 12 &&
		     time(NULL) - when >= 0 && time(NULL) - when < CACHE_MAX_AGE;
	}
	fclose(f);
	if (ok) {
		*out = c;
		out->measured = out->cached = true;
	}
	return ok;
}

/* Best effort: a read-only /run only costs the next command a calibration. */
static void write_cache(const struct probe_costs *c)
{
	char key[512], tmp[] = CACHE_FILE ".XXXXXX";
	FILE *f;
	int fd;

	if (mkdir(CACHE_DIR, 0755) && errno != EEXIST)
		return;
	fd = mkstemp(tmp);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return;
	}
	cache_key(key, sizeof(key));
	fprintf(f, "%s\n%lld %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.3f %.1f %.1f\n", key,
		(long long)time(NULL), c->total_ns[0], c->inside_ns[0], c->total_ns[1], c->inside_ns[1],
		c->total_ns[2], c->inside_ns[2], c->total_ns[3], c->inside_ns[3], c->spread,
		c->exit_ns, c->annot_ns);
	if (fclose(f) || rename(tmp, CACHE_FILE))
		unlink(tmp);
}

/*
 * For the tests: BPFPROF_TEST_CALIBRATION_SCALE=K multiplies the figures in
 * use (not those cached) by K, as a calibration made at another load would
 * (the cache keeps one for an hour; 0.7-1.4x what the target's own probes
 * cost were seen here).
 */
static void test_scale(struct probe_costs *c)
{
	const char *env = getenv("BPFPROF_TEST_CALIBRATION_SCALE");
	double k = env ? strtod(env, NULL) : 0;
	int i;

	if (!(k > 0) || k == 1)
		return;
	for (i = 0; i < PP_NPATHS; i++) {
		c->total_ns[i] *= k;
		c->inside_ns[i] *= k;
	}
	c->exit_ns *= k;
	c->annot_ns *= k;
	p_dbg("probe costs scaled by %g (BPFPROF_TEST_CALIBRATION_SCALE)", k);
}

static void run(struct probe_costs *out, bool fresh)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (!fresh && read_cache(out))
		return;
	err = measure(out);
	if (err) {
		p_dbg("probe calibration failed (%s): using the development VM's figures",
		      strerror(-err));
		*out = fallback;
		return;
	}
	p_dbg("probe costs here, ns per call (total/inside): emulated %.0f/%.0f, single-step "
	      "%.0f/%.0f, nop5 %.0f/%.0f, Python %.0f/%.0f, return probe %.0f, annotation %.0f (spread %.0f%%)",
	      out->total_ns[0],
	      out->inside_ns[0], out->total_ns[1], out->inside_ns[1], out->total_ns[2],
	      out->inside_ns[2], out->total_ns[3], out->inside_ns[3], out->exit_ns, out->annot_ns,
	      100 * out->spread);
	write_cache(out);
}

void calibrate__run(struct probe_costs *out, bool fresh)
{
	run(out, fresh);
	test_scale(out);
}
