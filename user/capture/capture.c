// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The live pipeline shared by record, attach and serve (see capture.h).
 * What it does, in order: header; targets and selection; load the tracer
 * (and the sampler, and the USDT object when a probe can be met); start the
 * command held or hold the running targets; unwinder hooks before any return
 * probe; USDT probes; function probes; release.  Then, step by step: drain,
 * account losses, follow execs, notice the end.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "capture.h"
#include "internal.h"
#include "target/launch.h"
#include "probes/trace.h"
#include "probes/usdt.h"
#include "cpython/cpython.h"
#include "bpf/events.h"
#include "base/log.h"
#include "base/status.h"
#include "base/util.h"
#include "symbols/binfile.h"
#include "symbols/debugsyms.h"
#include "cost/overhead.h"
#include "symbols/placement.h"
#include "symbols/select.h"
#include "symbols/symbolize.h"
#include "symbols/ustrings.h"

/* How long a command asked to stop (SIGTERM) has to exit before the recording ends anyway. */
#define STOP_GRACE_NS		1000000000ull
/*
 * How often to count the traced processes: a walk of the BPF hash map, a
 * syscall per key, whose cost grows with its size; done on every drain at a
 * million calls a second it was 40% of bpfprof's time (measured in serve).
 */
#define TARGETS_EVERY_NS	100000000ull


/* Every decoded event passes the overhead estimate on its way to the caller's sink. */
static int watch_sink(void *ctx, const struct bp_event *ev)
{
	struct capture *c = ctx;

	overhead__event(c->ovh, ev);
	governor__event(c->gov, ev);
	return c->sink(c->sink_ctx, ev);
}

/* ---------------------------------------------------------------- header */

static char *join_argv(char *const *argv)
{
	size_t len = 0, i;
	char *cmd;

	for (i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	cmd = xcalloc(1, len + 1);
	for (i = 0; argv[i]; i++) {
		if (i)
			strcat(cmd, " ");
		strcat(cmd, argv[i]);
	}
	return cmd;
}

static void fill_header(struct bp_session *s, const struct capture_opts *o)
{
	struct utsname u;
	char host[256] = "";
	size_t len, i;

	if (o->npids) {
		s->cmdline = xmalloc(32 + 12 * o->npids);
		len = sprintf(s->cmdline, "%s --pid ", o->verb ? o->verb : "attach");
		for (i = 0; i < o->npids; i++)
			len += sprintf(s->cmdline + len, "%s%d", i ? "," : "", o->pids[i]);
	} else if (!o->argv) {
		s->cmdline = xstrdup("record -a (system-wide)");
	} else {
		s->cmdline = join_argv(o->argv);
	}
	gethostname(host, sizeof(host) - 1);
	s->hostname = xstrdup(host);
	s->kernel = xstrdup(uname(&u) ? "" : u.release);
}

int capture__new(const struct capture_opts *o, struct bp_session *s, decoder_sink_fn sink,
		 void *ctx, struct capture **out)
{
	struct capture *c = xcalloc(1, sizeof(*c));
	int err;

	debugsyms__configure(o->debug);	/* before any name is read */
	c->o = *o;
	c->s = s;
	c->l.release_fd = c->l.err_fd = -1;
	c->launching = !o->npids && o->argv;
	c->sink = sink;
	c->sink_ctx = ctx;
	fill_header(s, o);
	err = capture_resolve_targets(c);
	if (!err)
		err = decoder__new(s, watch_sink, c, &c->dec);
	if (err) {
		capture__free(c);
		return err;
	}
	c->strings = ustrings__new();
	decoder__set_strings(c->dec, c->strings);
	*out = c;
	return 0;
}

/* ---------------------------------------------------------------- start */

static int check_losses(void *ctx);

static int feed(void *ctx, const void *rec, size_t size)
{
	struct capture *c = ctx;

	return decoder__feed(c->dec, rec, size);
}

/* Sampled CPython processes get their Python frames (cpython/pycap.c, python_stack.bpf.h). */
static void py_sample_proc(void *ctx, uint32_t pid)
{
	struct capture *c = ctx;

	if (c->smp)
		pycap__sample_proc(c->py, c->smp, pid, NULL);
}

static int py_name_code(void *ctx, uint32_t pid, uint64_t code, char *name, size_t name_len,
			char *file, size_t file_len, uint32_t *line)
{
	struct capture *c = ctx;

	return pycap__name_code(c->py, pid, code, name, name_len, file, file_len, line);
}

/*
 * The cpu sampler (hz; off-cpu time too if offcpu) on the tracer's maps, and
 * the symbolizer and Python hooks its stacks are decoded with: for --sample
 * and --offcpu at the start, and for the governor's Python fallback.  Not
 * attached yet.  The fallback's (instead) sends no mapping records: it
 * samples interpreters that run already, decoded while they live, and is
 * started because the probes cost too much (its mapping programs were half
 * of its 1.3-2.3 s start under load, time the decoder's thread takes from
 * the targets).
 */
static int new_sampler(struct capture *c, unsigned hz, bool offcpu, bool instead)
{
	const struct capture_opts *o = &c->o;
	struct sampler_opts so = {
		.hz = hz,
		.offcpu = offcpu,
		.trace_all = o->all,
		.kernel_stacks = !o->no_kernel_stacks,
		.stack = o->stack,
		.stack_size = o->stack_size,
		.no_maps = instead,
	};
	struct shared_maps maps;
	int err;

	tracer__shared_maps(c->tr, &maps);
	err = sampler__new(&so, &maps, &c->smp);
	if (!err)
		err = symbolizer__new(c->s, &c->sym);
	if (err)
		return err;
	decoder__set_symbolizer(c->dec, c->sym);
	decoder__set_python_hooks(c->dec, py_sample_proc, py_name_code, c);
	if (!o->no_kernel_stacks)
		symbolizer__preload_kernel(c->sym);
	return 0;
}

/*
 * The governor detached CPython's probes (governor__set_sample_hook): with
 * no sampler yet, one starts as --sample=fallback_hz would have started it
 * (on the tracer's maps, with a symbolizer and the Python hooks), and the
 * CPython targets known get their Python frames read; others at their
 * first sample (py_sample_proc).  Runs on the decoder's thread (from
 * capture__poll), so the decoder gets its symbolizer between two records.
 */
static int sample_instead(void *ctx, bool *already)
{
	struct capture *c = ctx;
	const struct capture_opts *o = &c->o;
	size_t i;
	int err;

	*already = c->smp && o->sample_hz;
	if (c->smp || !o->fallback_hz)
		return 0;
	err = new_sampler(c, o->fallback_hz, false, true);
	if (!err) {
		for (i = 0; i < o->npids; i++)
			symbolizer__preload(c->sym, o->pids[i]);
		err = sampler__attach(c->smp);
	}
	if (err) {
		p_warn("cannot sample the stacks in place of the Python probes: %s; nothing "
		       "says where Python's time goes from now on", strerror(-err));
		decoder__set_python_hooks(c->dec, NULL, NULL, NULL);
		decoder__set_symbolizer(c->dec, NULL);
		sampler__free(c->smp);
		symbolizer__free(c->sym);
		c->smp = NULL;
		c->sym = NULL;
		return err;
	}
	if (c->launching && c->child_running)
		pycap__sample_proc(c->py, c->smp, c->l.pid, NULL);
	for (i = 0; i < o->npids; i++)
		pycap__sample_proc(c->py, c->smp, o->pids[i], NULL);
	capture_dl_sample(c);
	return (int)o->fallback_hz;
}

static int load(struct capture *c)
{
	const struct capture_opts *o = &c->o;
	struct tracer_opts topts = {
		.buffer_size = o->buffer_size,
		.follow_forks = !o->no_follow,
		.args = o->args || o->deps,
		/*
		 * Hold exec'd images for probing only when main-executable
		 * patterns apply: never system-wide (-a would probe every
		 * program on the machine, and return probes on processes that
		 * call continuously can hold off the kernel's uprobe SRCU grace
		 * periods for every other tracer), and not when only sampling or
		 * only library functions are asked for.
		 */
		.stop_on_exec = !o->all && capture_follows_exec(o),
		.trace_all = o->all,
		.gated = o->gated,
		.wakeups = !o->no_wakeups && (c->ps.nfuncs > 0 || c->python),
	};
	char **pinc, **pexc;
	size_t npinc, npexc;
	int err;

	tracer__route_libbpf_log();
	if (o->deps)
		decoder__enable_data_edges(c->dec);
	pycap__patterns_get(c->py, &pinc, &npinc, &pexc, &npexc);
	decoder__set_python_filter(c->dec, pinc, npinc, pexc, npexc);
	c->exec_hooked = topts.stop_on_exec;
	decoder__set_hold_hook(c->dec, capture_on_hold, c);
	if (c->ps.exe_ino) {
		/*
		 * The inode probed, not what the path names now: a file put in its
		 * place before the command execs it is a new image to probe.
		 */
		struct stat st = { .st_dev = c->ps.exe_dev, .st_ino = c->ps.exe_ino };

		capture_image_known(c, &st);
	} else if (c->exe) {
		struct stat st;

		if (!stat(c->exe, &st))
			capture_image_known(c, &st);
	}
	err = tracer__new(&topts, feed, c, &c->tr);
	if (err)
		return err;
	if (o->sample_hz || o->offcpu) {
		err = new_sampler(c, o->sample_hz, o->offcpu, false);
		if (err)
			return err;
	}
	c->uopts.trace_all = o->all;
	c->uopts.gated = o->gated;
	if (o->gated)
		return capture_usdt_ensure(c);	/* the window opens at a probe */
	return 0;
}

/* Starts the command held, or registers the running targets. */
static int add_targets(struct capture *c)
{
	const struct capture_opts *o = &c->o;
	size_t i;
	int err = 0;

	if (c->launching) {
		char *path = NULL;

		prctl(PR_SET_CHILD_SUBREAPER, 1);	/* orphaned descendants come back to us */
		/* exec'd as named (a symbolic link stays one); c->exe, the file, if it is gone */
		if (launch__find(o->argv[0], &path))
			path = xstrdup(c->exe);
		err = launch__start(&c->l, path, o->argv, o->as_root);
		if (err) {
			p_err("cannot start '%s': %s", o->argv[0], strerror(-err));
			return err;
		}
		err = tracer__add_launched(c->tr, c->l.pid);
		overhead__set_target(c->ovh, c->l.pid, c->tr);
	} else {
		for (i = 0; i < o->npids && !err; i++)
			err = tracer__add_pid(c->tr, o->pids[i]);
		for (i = 0; c->sym && i < o->npids; i++)
			symbolizer__preload(c->sym, o->pids[i]);
		for (i = 0; i < o->npids; i++)
			capture_name_existing(c->s, o->pids[i]);
		if (o->npids)
			overhead__set_target(c->ovh, o->pids[0], c->tr);
	}
	if (err)
		p_err("cannot register the target: %s", strerror(-err));
	/* sampled CPython targets: Python frames from their first samples */
	for (i = 0; !err && c->smp && c->launching && i < 1; i++)
		pycap__sample_proc(c->py, c->smp, c->l.pid, c->exe);
	for (i = 0; !err && c->smp && i < o->npids; i++)
		pycap__sample_proc(c->py, c->smp, o->pids[i], NULL);
	return err;
}

int capture__start(struct capture *c)
{
	const struct capture_opts *o = &c->o;
	char buf[256];
	uint64_t t_attach;
	int err;

	/* this machine's probe costs, before anything of the target runs (or functions may come at exec) */
	if (c->ps.nfuncs || c->sopts.lenient || c->python) {
		c->ovh = overhead__new(c->s);
		if (!o->no_compensation)
			overhead__compensate(c->ovh, c->dec, c->s);
	}
	err = load(c);
	if (err)
		return err;
	err = add_targets(c);
	if (err)
		return err;
	if (o->max_overhead > 0 && c->ovh) {
		c->gov = governor__new(o->max_overhead, c->s, c->tr, c->ovh, c->dec);
		governor__set_sample_hook(c->gov, sample_instead, c);
	}
	/*
	 * The probes' share sampled in the targets, for the governor and the
	 * summary: a cpu-clock event on every CPU, idle ones too (their timer
	 * wakes them 499 times a second); in an exact recording only once the
	 * targets ran a while (overhead.h).  Not with --offcpu in an exact
	 * recording: beside it, an interval whose switch-in was lost ended a
	 * few us after the recv() that blocked (test_python_offcpu.py, 3 runs
	 * of 12; cause not found).  After the governor's closer is forked: it
	 * keeps none of these descriptors.
	 */
	if (c->gov || !o->offcpu) {
		struct shared_maps maps;

		tracer__shared_maps(c->tr, &maps);
		overhead__measure(c->ovh, &maps, c->gov != NULL);
	}

	c->s->t0 = now_ns(CLOCK_MONOTONIC);
	c->s->realtime_offset = (int64_t)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC));
	/* Running targets stand still while the links go in (see tracer__hold_targets). */
	if (o->npids)
		tracer__hold_targets(c->tr);
	/* The exception-unwinder hooks first, before any return probe. */
	if (c->exe && c->ps.nfuncs)
		select__unwinders(c->exe, o->npids ? o->pids[0] : 0, &c->unw);
	tracer__attach_unwinders(c->tr, &c->unw);
	err = capture_attach_usdts(c);
	if (!err)
		capture_dl_start(c);
	/* stops at an exec or a dlopen with no keeper: continued even if bpfprof dies */
	if (!err && (c->dl || capture_follows_exec(o)))
		tracer__start_guard(c->tr);	/* it refuses -a itself */
	if (!err)
		err = c->gov ? governor__attach_set(c->gov, &c->ps) :
		      tracer__attach_set(c->tr, c->s, &c->ps);
	/* --args: a string argument not paged in is read from its file */
	for (size_t i = 0; !err && (o->args || o->deps) && i < c->ps.nmods; i++)
		ustrings__add_file(c->strings, c->ps.mods[i].path);
	if (!err && c->python) {
		struct shared_maps maps;

		tracer__shared_maps(c->tr, &maps);
		err = pycap__attach(c->py, &maps);
		if (!err)
			governor__set_python(c->gov, c->py);
	}
	if (!err && c->smp)
		err = sampler__attach(c->smp);
	if (!err && c->smp)
		capture_dl_sample(c);
	if (!err && !o->all && !o->sample_hz && !o->nincludes && c->exe && !c->python &&
	    c->ps.nfuncs) {
		struct shared_maps maps;

		tracer__shared_maps(c->tr, &maps);
		where__new(&maps, &c->where);	/* best effort: only a hint */
	}
	tracer__release_targets(c->tr);
	if (err)
		return err;
	t_attach = now_ns(CLOCK_MONOTONIC) - c->s->t0;
	if (c->python)
		p_info("tracing Python calls (CPython)");
	if (c->ps.nfuncs || (!c->smp && !c->python && !c->dl))
		p_info("traced %zu functions in %zu file%s (attached in %s)", c->ps.nfuncs,
		       c->ps.nmods, c->ps.nmods == 1 ? "" : "s",
		       fmt_duration(t_attach, buf, sizeof(buf)));
	if (c->ps.nfuncs && placement__paths(c->s, buf, sizeof(buf)))
		p_info("%s", buf);
	if (c->smp)
		p_info("sampling%s%s%s", o->sample_hz ? " cpu stacks at " : "",
		       o->sample_hz ? (snprintf(buf, sizeof(buf), "%u Hz", o->sample_hz), buf) : "",
		       o->offcpu ? (o->sample_hz ? " and off-cpu time" : " off-cpu time") : "");

	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0)
		c->ncpus = 1;
	c->lost_seen = xcalloc(c->ncpus, sizeof(*c->lost_seen));
	c->lost_now = xcalloc(c->ncpus, sizeof(*c->lost_now));
	decoder__set_loss_check(c->dec, check_losses, c);

	if (c->launching) {
		err = launch__release(&c->l);
		if (err) {
			p_err("cannot execute '%s': %s", o->argv[0], strerror(-err));
			waitpid(c->l.pid, NULL, 0);
			c->l.pid = 0;
			return err;
		}
		c->child_running = true;
	}
	return 0;
}

/* ---------------------------------------------------------------- the loop */

/* Reserve failures of every BPF object, per CPU, into c->lost_now; the total. */
static uint64_t read_losses(struct capture *c)
{
	uint64_t total;

	memset(c->lost_now, 0, c->ncpus * sizeof(*c->lost_now));
	total = tracer__lost(c->tr, c->lost_now, c->ncpus);
	if (c->smp)
		total += sampler__lost(c->smp, c->lost_now, c->ncpus);
	if (c->usd)
		total += usdt__lost(c->usd, c->lost_now, c->ncpus);
	total += pycap__lost(c->py, c->lost_now, c->ncpus);
	return total;
}

/* Loss markers for what was lost since the last look. */
static int account_losses(struct capture *c)
{
	int i, err;

	c->s->lost_total = read_losses(c);
	for (i = 0; i < c->ncpus; i++) {
		if (c->lost_now[i] == c->lost_seen[i])
			continue;
		err = decoder__loss(c->dec, i, c->lost_now[i] - c->lost_seen[i]);
		if (err)
			return err;
		c->lost_seen[i] = c->lost_now[i];
	}
	return 0;
}

/* The decoder asks before it judges a return without entry (decoder__set_loss_check). */
static int check_losses(void *ctx)
{
	struct capture *c = ctx;

	return c->lost_now ? account_losses(c) : 0;	/* not after capture__finish */
}

int capture__poll(struct capture *c, bool all)
{
	uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID), held = c->held_cpu_ns;
	int n = tracer__poll(c->tr, all), err;

	/* bpfprof's decoding, in the governor's estimate (the holds' attaches are the waits') */
	governor__own_cpu(c->gov, now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 - (c->held_cpu_ns - held));
	if (n < 0) {
		if (n != -EIO && n != -ENOSPC && n != -EFBIG)
			p_err("cannot decode the trace: %s", strerror(-n));
		return n;
	}
	/*
	 * Also without events: a dropped Python function's calls are filtered
	 * in BPF, and a program then in its loop sends nothing while its
	 * probes still trap (the fallback is decided in a window without events).
	 */
	overhead__check(c->ovh, now_ns(CLOCK_MONOTONIC) - c->s->t0);
	governor__check(c->gov, now_ns(CLOCK_MONOTONIC) - c->s->t0);
	err = account_losses(c);
	return err ? err : n;
}

void capture__wait(struct capture *c, int ms)
{
	tracer__wait(c->tr, ms);
}

static size_t count_targets(struct capture *c)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (now >= c->next_count) {
		c->ntargets = tracer__ntargets(c->tr);
		c->next_count = now + TARGETS_EVERY_NS;
	}
	return c->ntargets;
}

struct decoder *capture__decoder(struct capture *c)
{
	return c->dec;
}

size_t capture__ntargets(const struct capture *c)
{
	return c->ntargets;
}

void capture__slowdown(const struct capture *c, double *total, double *recent, double *limit)
{
	overhead__slowdown(c->ovh, total, recent);
	*limit = c->gov ? 1 + c->o.max_overhead / 100 : 0;
}

bool capture__done(struct capture *c)
{
	int status;
	pid_t w;

	if (c->stopping && now_ns(CLOCK_MONOTONIC) >= c->stop_deadline)
		return true;
	if (!c->launching) {
		/* -a with no command: only the clock or a signal ends it */
		return c->o.npids ? count_targets(c) == 0 : false;
	}
	while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
		if (w == c->l.pid) {
			c->child_running = false;
			c->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) :
				       128 + WTERMSIG(status);
		}
	}
	return !c->child_running && (c->o.no_follow || c->o.all || w < 0 || count_targets(c) == 0);
}

void capture__stop(struct capture *c)
{
	if (c->stopping)
		return;
	c->stopping = true;
	c->stop_deadline = now_ns(CLOCK_MONOTONIC);
	if (!c->launching)
		return;
	/* Like perf: the command is ended with SIGTERM, its exit is recorded. */
	if (c->child_running)
		kill(c->l.pid, SIGTERM);
	c->stop_deadline += STOP_GRACE_NS;
}

/*
 * Drains what is left and closes open calls.  Probes are detached only
 * afterwards (capture__free): removing return probes waits for an SRCU grace
 * period that can take seconds, and the output must not wait for it.
 * Pausing first bounds the drain when targets still run.
 */
int capture__finish(struct capture *c)
{
	int err;

	status__clear();	/* before the summary */
	tracer__pause(c->tr);
	if (c->smp)
		sampler__pause(c->smp);
	if (c->usd)
		usdt__pause(c->usd);
	pycap__pause(c->py);
	do {
		err = tracer__poll(c->tr, true);
	} while (err > 0);
	if (err < 0)
		return err;
	governor__drained(c->gov, now_ns(CLOCK_MONOTONIC) - c->s->t0);
	err = account_losses(c);
	if (err)
		return err;
	c->s->ncpus = c->ncpus;
	free(c->s->lost_per_cpu);
	c->s->lost_per_cpu = c->lost_now;
	c->lost_now = NULL;
	err = decoder__finish(c->dec);
	if (err)
		return err;
	c->s->duration = now_ns(CLOCK_MONOTONIC) - c->s->t0;
	if (c->ovh)
		overhead__compensate_end(c->ovh, c->dec, c->s);
	capture_dl_finish(c);
	if (c->exec_hooked)
		p_dbg("execs held for their new image: %zu (an image probed already is not held)",
		      c->nexec_held);
	overhead__summary(c->ovh, c->s->duration);
	where__hint(c->where, c->exe, c->s);
	return 0;
}

int capture__exit_code(const struct capture *c)
{
	/* as when the command itself is such a CPython (refused before it starts) */
	if (c->py_refused)
		return 1;
	return c->exit_code;
}

void capture__counts(const struct capture *c, size_t *nfuncs, size_t *nmods)
{
	*nfuncs = c->ps.nfuncs;
	*nmods = c->ps.nmods;
}

void capture__free(struct capture *c)
{
	int go = -1;

	if (!c)
		return;
	status__clear();
	if (c->launching && c->l.pid > 0 && c->l.release_fd >= 0)
		launch__abort(&c->l);
	launch__free(&c->l);
	if (c->tr)
		tracer__pause(c->tr);
	governor__release(c->gov);	/* its links are detached with the tracer's */
	/*
	 * Also after an error: whoever drops the links pays their grace
	 * periods, and an error line must not wait on them either.
	 */
	if (c->tr && (go = capture_hand_off(c)) < 0)
		p_dbg("cannot fork bpfprof-release: the probes are removed here");
	sampler__free(c->smp);
	where__free(c->where);
	usdt__free(c->usd);
	pycap__free(c->py);
	tracer__free(c->tr);
	governor__free(c->gov);
	symbolizer__free(c->sym);
	decoder__free(c->dec);
	overhead__free(c->ovh);
	ustrings__free(c->strings);
	probe_set__free(&c->ps);
	probe_set__free(&c->unw);
	capture_dl_free(c);
	free(c->images);
	free(c->lost_seen);
	free(c->lost_now);
	free(c->exe);
	free(c);
	if (go >= 0)
		close(go);	/* bpfprof's copies are closed: bpfprof-release may remove the links */
}
