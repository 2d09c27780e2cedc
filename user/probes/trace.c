// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skel/trace.skel.h"
#include "bpf/events.h"
#include "decode/hold.h"
#include "base/log.h"
#include "base/util.h"
#include "ringbuf.h"
#include "symbols/binfile.h"
#include "symbols/select.h"
#include "model/session.h"
#include "target/keeper.h"
#include "trace.h"
#include "model/argsig.h"
#include "internal.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* the kernel's "instruction cannot be probed" */
#endif



/* Records per tracer__poll(): the caller still sees signals and child exits under overload. */
#define POLL_BUDGET	65536
/*
 * And its time: the caller's periodic work (the governor's windows and
 * re-links, exec holds' deadlines) comes between polls.  A record holds
 * many calls: 65,536 of them took 8-10 s to decode while cc1 ran traced
 * on a loaded machine, and the governor decided once per 10 s.  Checked
 * every POLL_CHUNK records.
 */
#define POLL_TIME_NS	50000000ull
#define POLL_CHUNK	256
/* The longest a record waits in the ring buffer when nothing asks for it sooner. */
#define DRAIN_LATENCY_NS	50000000ull

/* Every record: a hold is acted on first (hold.h), then the record goes to the caller. */
static int on_record(void *ctx, const void *data, size_t size)
{
	struct tracer *t = ctx;
	struct hold h;

	switch (hold__read(data, size, &h)) {
	case HOLD_UNWIND:
	case HOLD_REARM:
		tracer__restore_unwind(t, &h);
		break;
	case HOLD_EXEC:
	case HOLD_DLOPEN:
		/* a process stopped whole: its pidfd now, while it is surely the one stopped */
		tracer__note_stop(t, &h);
		/* detaching: only threads stopped by us matter now */
		if (!t->fn)
			tracer__resume(t, h.pid, h.stopped);
		break;
	case HOLD_NONE:
		break;
	}
	return t->fn ? t->fn(t->ctx, data, size) : 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || (level == LIBBPF_DEBUG && verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void tracer__route_libbpf_log(void)
{
	libbpf_set_print(libbpf_print);
}

int tracer__new(const struct tracer_opts *opts, tracer_record_fn fn, void *ctx,
		struct tracer **out)
{
	struct tracer *t = xcalloc(1, sizeof(*t));
	size_t rb_size = 4096;
	int err;

	pthread_mutex_init(&t->stop_lock, NULL);
	t->fn = fn;
	t->ctx = ctx;
	t->args = opts->args;
	t->gated = opts->gated;
	t->skel = trace_bpf__open();
	err = probe_obj__opened(&t->po, "call tracing", false, t->skel);
	if (err)
		goto cleanup;
	t->skel->rodata->follow_forks = opts->follow_forks;
	t->follow_forks = opts->follow_forks;
	t->skel->rodata->trace_all = opts->trace_all;
	t->skel->rodata->stop_on_exec = opts->stop_on_exec;
	t->skel->rodata->wakeups = opts->wakeups;
	t->skel->rodata->start_gated = opts->gated;
	/* not even loaded when off: they would run on every context switch */
	bpf_program__set_autoload(t->skel->progs.wake_waking, opts->wakeups);
	bpf_program__set_autoload(t->skel->progs.wake_running, opts->wakeups);
	bpf_program__set_autoload(t->skel->progs.wake_irq_in, opts->wakeups);
	bpf_program__set_autoload(t->skel->progs.wake_irq_out, opts->wakeups);
	bpf_program__set_autoload(t->skel->progs.wake_softirq_in, opts->wakeups);
	bpf_program__set_autoload(t->skel->progs.wake_softirq_out, opts->wakeups);
	bpf_program__set_autoload(t->skel->progs.wake_hrtimer_in, opts->wakeups);
	bpf_program__set_autoload(t->skel->progs.wake_hrtimer_out, opts->wakeups);
	/* the kernel wants a power of two of pages */
	while (rb_size < opts->buffer_size)
		rb_size <<= 1;
	err = bpf_map__set_max_entries(t->skel->maps.rb, rb_size);
	if (err) {
		p_err("invalid buffer size %zu: %s", rb_size, strerror(-err));
		goto cleanup;
	}
	/* Only one set of call programs is used (plain or --args); the other is never attached. */
	bpf_program__set_autoload(t->skel->progs.call_entry, !opts->args);
	bpf_program__set_autoload(t->skel->progs.call_entry_args, opts->args);
	bpf_program__set_autoload(t->skel->progs.call_xval, opts->args);
	/* a session link per group where the kernel has them, else an entry and a return link */
	tracer_session_prepare(t, tracer_session_wanted());
	/* the keeper creates its own instances, one task at a time */
	bpf_program__set_autoattach(t->skel->progs.unwind_slots, false);

	/* the owner of the shared maps: none to reuse */
	err = probe_obj__load_skel(&t->po, t->skel, NULL);
	if (err && t->session) {
		/* a kernel whose BTF has them but whose verifier refused: again with the pair */
		tracer_session_refused(err);
		tracer__free(t);
		return tracer__new(opts, fn, ctx, out);
	}
	if (err)
		goto cleanup;
	tracer_session_say(t->session);
	/* Task tracepoints: fork/exit/rename/exec keep the pid set and names current. */
	err = trace_bpf__attach(t->skel);
	if (err) {
		p_err("cannot attach the task tracepoints: %s", strerror(-err));
		goto cleanup;
	}
	t->bits = mmap(NULL, sizeof(*t->bits), PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(t->skel->maps.recording), 0);
	if (t->bits == MAP_FAILED) {
		t->bits = NULL;
		err = -errno;
		p_err("cannot map the traced-process bitmap: %s", strerror(-err));
		goto cleanup;
	}
	/* 1 MB of the default 16 MB: ~10 ms at a million calls a second */
	t->drain_bytes = rb_size / 16;
	t->ncpus = libbpf_num_possible_cpus();
	err = ringbuf__new(bpf_map__fd(t->skel->maps.rb), &t->rb);
	if (err) {
		p_err("cannot map the ring buffer: %s", strerror(-err));
		goto cleanup;
	}
	*out = t;
	return 0;
cleanup:
	tracer__free(t);
	return err;
}

void tracer__shared_maps(struct tracer *t, struct shared_maps *m)
{
	m->rb = bpf_map__fd(t->skel->maps.rb);
	m->tgids = bpf_map__fd(t->skel->maps.tgids);
	m->batches = bpf_map__fd(t->skel->maps.batches);
	m->recording = bpf_map__fd(t->skel->maps.recording);
}

static int add_pid(struct tracer *t, pid_t pid, __u8 state)
{
	__u32 key = pid;
	int err;

	err = bpf_map__update_elem(t->skel->maps.tgids, &key, sizeof(key), &state, sizeof(state),
				   BPF_ANY);
	if (err)
		return -errno;
	/* the BPF side may set other bits of the word at the same time */
	if (state == BP_TGID_RECORDING && (unsigned)pid < BP_TGID_WORDS * 64)
		__atomic_fetch_or(&t->bits->w[pid >> 6], 1ull << (pid & 63), __ATOMIC_SEQ_CST);
	return 0;
}

int tracer__add_pid(struct tracer *t, pid_t pid)
{
	return add_pid(t, pid, t->gated ? BP_TGID_GATED : BP_TGID_RECORDING);
}

int tracer__add_launched(struct tracer *t, pid_t pid)
{
	return add_pid(t, pid, BP_TGID_LAUNCHING);
}

static int attach_one(struct tracer *t, struct bpf_program *prog, bool ret, const char *path,
		      const unsigned long *offsets, const uint64_t *cookies, size_t n)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = offsets, .cookies = (const __u64 *)cookies,
		    .cnt = n, .retprobe = ret);
	struct bpf_link *link = NULL;
	int err;

	if (prog == tracer_session_prog(t)) {
		err = tracer_session_link(t, prog, path, offsets, cookies, n, &link);
		if (err)
			return err;
	} else {
		link = bpf_program__attach_uprobe_multi(prog, -1, path, NULL, &o);
		if (!link)
			return -errno;
	}
	t->links = xrealloc(t->links, (t->nlinks + 1) * sizeof(*t->links));
	t->kinds = xrealloc(t->kinds, (t->nlinks + 1) * sizeof(*t->kinds));
	/* the linker hook goes with the entries: first, before any return probe */
	t->kinds[t->nlinks] = prog == t->skel->progs.unwind_enter ? LINK_UNWIND :
			      ret ? LINK_RETURN : LINK_ENTRY;
	t->links[t->nlinks++] = link;
	t->nmade++;
	return 0;
}

int tracer__attach_loader(struct tracer *t, const char *path, unsigned long offset)
{
	return attach_one(t, t->skel->progs.dl_state, false, path, &offset, NULL, 1);
}

/*
 * Attaches a range; when the kernel refuses the whole link (one function it
 * cannot probe, e.g. a first instruction with a lock prefix), splits it in
 * halves to find the refused ones, which are reported through `refused`.
 */
static int attach_range(struct tracer *t, struct bpf_program *entry, struct bpf_program *ret,
			const char *path, const unsigned long *offsets, const uint64_t *cookies,
			size_t n, uint64_t *refused, size_t *nrefused, int depth)
{
	size_t half;
	int err;

	/* Return probes first: an entry without its return would nest later calls under it. */
	err = ret ? attach_one(t, ret, true, path, offsets, cookies, n) : 0;
	if (!err) {
		err = attach_one(t, entry, false, path, offsets, cookies, n);
		if (!err)
			return 0;
		if (ret)
			bpf_link__destroy(t->links[--t->nlinks]);	/* the return link just made */
	}
	if (err != -EINVAL && err != -ENOTSUPP && err != -EOPNOTSUPP && err != -EPERM)
		return err;	/* not about one function: give up */
	if (n == 1) {
		refused[(*nrefused)++] = cookies[0];
		return 0;
	}
	if (depth > 40)
		return err;
	half = n / 2;
	err = attach_range(t, entry, ret, path, offsets, cookies, half, refused, nrefused,
			   depth + 1);
	if (err)
		return err;
	return attach_range(t, entry, ret, path, offsets + half, cookies + half, n - half, refused,
			    nrefused, depth + 1);
}

int tracer__attach(struct tracer *t, const char *path, const unsigned long *offsets,
		   const uint64_t *cookies, size_t n, bool entry_only, uint64_t *refused,
		   size_t *nrefused)
{
	return tracer_attach_kind(t, path, offsets, cookies, n, entry_only, t->session, refused,
				  nrefused);
}

int tracer_attach_kind(struct tracer *t, const char *path, const unsigned long *offsets,
		       const uint64_t *cookies, size_t n, bool entry_only, bool session,
		       uint64_t *refused, size_t *nrefused)
{
	struct bpf_program *entry = t->args ? t->skel->progs.call_entry_args : t->skel->progs.call_entry;
	struct bpf_program *ret = t->args ? t->skel->progs.call_exit_ret : t->skel->progs.call_exit;

	if (entry_only) {
		ret = NULL;
	} else if (session) {
		entry = tracer_session_prog(t);	/* both halves in one link */
		ret = NULL;
	}
	*nrefused = 0;
	if (!n)
		return 0;
	return attach_range(t, entry, ret, path, offsets, cookies, n, refused, nrefused, 0);
}

/*
 * --args: the probes that read floats inside functions (the "@" places of
 * their signatures, model/argsig.h), one link for the module.  A failure
 * only leaves those values unavailable: said once, never fatal.
 */
static void attach_xvals(struct tracer *t, const struct bp_session *s,
			 const struct probe_module *pm)
{
	unsigned long *offsets = NULL;
	uint64_t *cookies = NULL;
	size_t n = 0, cap = 0;
	int err;

	for (size_t i = 0; i < pm->n; i++) {
		__u32 id = (__u32)pm->cookies[i];
		struct argxprobe xp[AS_MAX_XPROBES];
		const struct bp_func *f = id < s->nfuncs ? &s->funcs[id] : NULL;
		int nx = f ? argsig__xprobes(f->sig, xp, AS_MAX_XPROBES) : 0;

		for (int k = 0; k < nx; k++) {
			/* a parameter's place must come after the entry probe */
			if (xp[k].slot != BP_ARGX_XRET && xp[k].delta <= f->probe_skip)
				continue;
			if (xp[k].deref > 1)	/* in rax at the return probe: nothing to add */
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				offsets = xrealloc(offsets, cap * sizeof(*offsets));
				cookies = xrealloc(cookies, cap * sizeof(*cookies));
			}
			offsets[n] = f->offset - f->probe_skip + xp[k].delta;
			cookies[n++] = id | (uint64_t)xp[k].slot << 32 | (uint64_t)xp[k].reg << 36 |
				       (uint64_t)xp[k].deref << 40 | (uint64_t)(uint16_t)xp[k].off << 48;
		}
	}
	err = n ? attach_one(t, t->skel->progs.call_xval, false, pm->path, offsets, cookies, n) : 0;
	if (err)
		p_warn("cannot read float arguments in %s: %s", pm->path, strerror(-err));
	free(offsets);
	free(cookies);
}

int tracer__attach_module(struct tracer *t, const struct bp_session *s,
			  const struct probe_module *pm)
{
	uint64_t *refused = xcalloc(pm->n, sizeof(*refused));
	size_t nrefused = 0;
	int err;

	/* --args: which argument words are strings, before the first hit */
	for (size_t i = 0; t->args && i < pm->n; i++) {
		__u32 id = (__u32)pm->cookies[i];
		__u32 mask = id < s->nfuncs ? argsig__str_mask(s->funcs[id].sig) : 0;

		if (mask)
			bpf_map__update_elem(t->skel->maps.func_strs, &id, sizeof(id), &mask,
					     sizeof(mask), BPF_ANY);
	}
	err = tracer__attach(t, pm->path, pm->offsets, pm->cookies, pm->n, pm->entry_only, refused,
			     &nrefused);
	if (!err)
		tracer__warn_refused(s, pm->path, refused, nrefused);
	if (!err && t->args)
		attach_xvals(t, s, pm);
	free(refused);
	return err;
}

void tracer__attach_unwinders(struct tracer *t, const struct probe_set *unw)
{
	int *fds = NULL;
	size_t i, nfds = 0;
	int err;

	for (i = 0; i < unw->nmods; i++) {
		const struct probe_module *m = &unw->mods[i];

		if (!m->n)
			continue;
		err = attach_one(t, t->skel->progs.unwind_enter, false, m->path, m->offsets, NULL,
				 m->n);
		if (err) {
			p_warn("cannot hook the exception unwinder in %s: %s", binfile__name(m->path),
			       strerror(-err));
			continue;
		}
		fds = xrealloc(fds, (nfds + 1) * sizeof(*fds));
		fds[nfds++] = bpf_link__fd(t->links[t->nlinks - 1]);
	}
	if (nfds && !t->keeper && !t->skel->rodata->trace_all)
		tracer_start_keeper(t, fds, nfds);
	free(fds);
}

int tracer__attach_set(struct tracer *t, const struct bp_session *s, const struct probe_set *ps)
{
	size_t i;
	int err;

	for (i = 0; i < ps->nmods; i++) {
		err = tracer__attach_module(t, s, &ps->mods[i]);
		if (err) {
			p_err("cannot attach %zu probes to %s: %s", ps->mods[i].n,
			      binfile__name(ps->mods[i].path), strerror(-err));
			return err;
		}
	}
	return 0;
}

void tracer__wait(struct tracer *t, int timeout_ms)
{
	/* Only records submitted with a wakeup (forks, exits, exceptions) end the wait early. */
	if (ringbuf__wait(t->rb, timeout_ms))
		t->woken = true;
}

/*
 * Sends the call records waiting in the per-CPU batches (bpf/common.bpf.h):
 * batch_flush_cpu runs on each CPU, in an interrupt there.  With `wait`
 * (only once paused: nothing is added any more), until every batch is
 * empty; a batch stays held only while a preempted writer finishes its
 * record, so this is short.
 */
static void flush_batches(struct tracer *t, bool wait)
{
	int fd = bpf_program__fd(t->skel->progs.batch_flush_cpu);
	struct bp_rec_batch *v = NULL;
	__u32 zero = 0;
	int cpu, tries;

	if (t->ncpus <= 0)
		return;
	for (tries = 0; tries < 200; tries++) {
		bool left = false;

		for (cpu = 0; cpu < t->ncpus; cpu++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

			bpf_prog_test_run_opts(fd, &o);	/* offline CPUs refuse: nothing waits there */
		}
		if (!wait)
			return;
		if (!v)
			v = xcalloc(t->ncpus, sizeof(*v));
		if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.batches), &zero, v))
			break;
		for (cpu = 0; cpu < t->ncpus; cpu++)
			left |= v[cpu].n != 0;
		if (!left)
			break;
		if (tries == 199 && !t->stranded) {
			/*
			 * A CPU gone offline, or a writer that never resumed:
			 * what its batch holds is lost, and counted so.
			 */
			for (cpu = 0; cpu < t->ncpus && cpu < BP_MAX_CPUS; cpu++)
				if (v[cpu].n)
					__atomic_fetch_add(&t->skel->bss->lost[cpu],
							   v[cpu].n < BP_BATCH_RECS ? v[cpu].n : BP_BATCH_RECS,
							   __ATOMIC_RELAXED);
			t->stranded = true;
		}
		usleep(1000);
	}
	free(v);
}

int tracer__poll(struct tracer *t, bool all)
{
	struct timespec ts;
	uint64_t now;
	long n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	/*
	 * Small drains are dear for the traced threads, not for us: reading
	 * records just written on the other CPU added ~45 ns to every traced
	 * event when the buffer was drained every 2 ms, next to nothing when
	 * drained every 1 MB (bpf_stats run times of call_entry, f_push loop).
	 * So records wait until there are enough of them, or until they are
	 * DRAIN_LATENCY_NS old, unless a record asked for a wakeup (fork, exit,
	 * exec, a thread held for the exception unwinder) or the caller wants
	 * everything now.
	 */
	if (!all && !t->woken && !t->draining && now - t->last_drain < DRAIN_LATENCY_NS &&
	    ringbuf__pending(t->rb) < t->drain_bytes)
		return 0;
	/*
	 * A drain's first budget: what waits in the batches comes too; once
	 * paused (nothing is added any more), until they are empty.
	 */
	if (!t->draining)
		flush_batches(t, all && t->paused);
	t->woken = false;
	for (n = 0; n < POLL_BUDGET;) {
		long k = ringbuf__consume(t->rb, on_record, t, POLL_CHUNK);

		if (k < 0) {
			n = k;
			break;
		}
		n += k;
		if (k < POLL_CHUNK) {
			t->draining = false;
			break;
		}
		/* a drain once started goes on to the end, one budget per call */
		t->draining = true;
		if (now_ns(CLOCK_MONOTONIC) - now >= POLL_TIME_NS)
			break;
	}
	if (n < 0)
		t->draining = false;
	if (!t->draining)
		t->last_drain = now;
	return n;
}

size_t tracer__ntargets(struct tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	__u32 key, next;
	size_t n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

uint64_t tracer__lost(struct tracer *t, uint64_t *per_cpu, size_t ncpu)
{
	return probe_obj__lost(&t->po, per_cpu, ncpu);
}

void tracer__pause(struct tracer *t)
{
	probe_obj__pause(&t->po);
	t->paused = true;
}

/* Serves threads stopped at the exception unwinder for about `ms`. */
static void serve_unwinder(struct tracer *t, int ms)
{
	uint64_t end;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec * 1000ull + ts.tv_nsec / 1000000 + ms;
	do {
		ringbuf__consume(t->rb, on_record, t, POLL_BUDGET);
		ringbuf__wait(t->rb, 1);
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while ((uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 < end);
}

static bool has_kind(const struct tracer *t, int kind)
{
	size_t i;

	for (i = 0; i < t->nlinks; i++)
		if (t->links[i] && t->kinds[i] == kind)
			return true;
	return false;
}

void tracer__detach(struct tracer *t)
{
	struct frozen *frozen = NULL;
	size_t nfrozen;

	/*
	 * Records are no longer decoded, but a thread that throws through a
	 * return trampoline still stops at the unwinder hook and must be resumed
	 * with its return addresses put back.  Entry probes go first: then no
	 * new trampoline is armed, and removing the return probes does not wait
	 * behind a target that keeps calling.  The unwinder hooks go last, and
	 * the ring buffer is served until they are gone.
	 */
	t->fn = NULL;
	if (!t->nlinks) {
		tracer_end_keeper(t);
		return;
	}
	/* threads stopped at the unwinder first: they are resumed by serving */
	serve_unwinder(t, 2);
	if (t->background && (t->keeper || !has_kind(t, LINK_UNWIND))) {
		/*
		 * bpfprof-release: the targets run on.  The entry and return links
		 * go at once, each removal unregistering its uprobes first, then
		 * waiting; once all are unregistered no new return probe renews the
		 * pending ones' leases, which expire (100 ms).  Held still, the
		 * targets would wait as long as the grace periods take, whoever
		 * holds them off machine-wide.  Meanwhile the keeper serves the
		 * unwinder's stops; then it holds the threads, puts every return
		 * address back and lets go, and the unwinder hooks go last.
		 */
		t->fn = NULL;
		tracer_destroy_parallel(t, true);
		tracer_end_keeper(t);
		tracer_destroy_parallel(t, false);
		ringbuf__consume(t->rb, on_record, t, POLL_BUDGET);
		t->nlinks = 0;
		return;
	}
	if (t->keeper)
		keeper__hold(t->keeper);	/* its threads, which tracer_freeze_targets cannot take */
	nfrozen = tracer_freeze_targets(t, &frozen);
	if (tracer__ntargets(t) == 0 || nfrozen || t->keeper) {
		/*
		 * Nothing of ours can run: the order no longer matters, and each
		 * link's removal waits for grace periods (30-50 ms here), so they
		 * go in parallel.
		 */
		tracer_destroy_parallel(t, false);
	} else {
		tracer_destroy_kind(t, LINK_ENTRY);
		tracer_destroy_kind(t, LINK_RETURN);
		tracer_destroy_kind(t, LINK_UNWIND);
	}
	/* no return probe left to arm one: the keeper puts back every return address, lets go */
	tracer_end_keeper(t);
	tracer_thaw_targets(frozen, nfrozen);
	ringbuf__consume(t->rb, on_record, t, POLL_BUDGET);
	t->nlinks = 0;
}

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	tracer__release_targets(t);
	if (t->disowned)
		tracer_drop_links(t);	/* their release is bpfprof-release's (tracer__disown) */
	else
		tracer__detach(t);
	free(t->links);
	free(t->kinds);
	ringbuf__free(t->rb);
	if (t->bits)
		munmap(t->bits, sizeof(*t->bits));
	tracer__forget_stops(t);
	pthread_mutex_destroy(&t->stop_lock);
	trace_bpf__destroy(t->skel);
	free(t);
}
