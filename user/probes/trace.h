/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The call tracer: the trace.bpf.c skeleton, its uprobe_multi links and the
 * ring buffer.  Lifecycle: tracer__new() (open, size, set rodata, load),
 * tracer__add_pid(), tracer__attach(), tracer__poll() until done, then
 * tracer__lost() and tracer__free().
 */
#ifndef BPFPROF_TRACE_H
#define BPFPROF_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bp_session;
struct probe_module;
struct probe_set;

struct tracer;

/* Routes libbpf's messages through -v (debug ones with -v -v); before any load. */
void tracer__route_libbpf_log(void);

struct tracer_opts {
	size_t buffer_size;	/* ring buffer bytes, rounded up to a power of two of pages */
	bool follow_forks;
	bool trace_all;		/* every process (-a) */
	bool args;		/* capture argument registers and return values */
	bool stop_on_exec;	/* SIGSTOP a traced process at exec (HOLD_EXEC, decode/hold.h) */
	bool wakeups;		/* wakeup edges between traced threads */
	bool gated;		/* targets start outside the capture window (BPFPROF_START opens it) */
};

/* Called for each ring buffer record; a negative return stops tracer__poll(). */
typedef int (*tracer_record_fn)(void *ctx, const void *rec, size_t size);

int tracer__new(const struct tracer_opts *opts, tracer_record_fn fn, void *ctx,
		struct tracer **out);
int tracer__add_pid(struct tracer *t, pid_t pid);
/* bpfprof's held launcher: a member whose calls are recorded from its exec on. */
int tracer__add_launched(struct tracer *t, pid_t pid);
/* The maps other BPF objects share (bpf/common.bpf.h), so the stream stays one. */
struct shared_maps {
	int rb;		/* the ring buffer */
	int tgids;	/* the traced processes */
	int batches;	/* the per-CPU batches of call records */
	int recording;	/* the recording processes, a bitmap */
};
void tracer__shared_maps(struct tracer *t, struct shared_maps *m);
/*
 * Attaches entry and return probes (entry only with `entry_only`) at
 * `offsets` (file offsets) of `path`, with cookies[i] the function id
 * reported in the records.  One uprobe_multi link per direction, whatever
 * the count.  Functions the kernel refuses to probe are skipped and their
 * cookies stored in `refused` (room for n).
 */
int tracer__attach(struct tracer *t, const char *path, const unsigned long *offsets,
		   const uint64_t *cookies, size_t n, bool entry_only, uint64_t *refused,
		   size_t *nrefused);
/*
 * tracer__attach() for one module of a probe set; the functions the kernel
 * refused are named in a warning (never silently missing from the trace).
 */
int tracer__attach_module(struct tracer *t, const struct bp_session *s,
			  const struct probe_module *pm);
/* The warning that names functions the kernel refused (nothing when nrefused is 0). */
void tracer__warn_refused(const struct bp_session *s, const char *path, const uint64_t *refused,
			  size_t nrefused);
/*
 * tracer__attach(), but the links made are handed to the caller (*links,
 * *nlinks; free the array, bpf_link__destroy() each, entry links first) and
 * are not the tracer's to detach: the overhead governor re-creates them.
 */
struct bpf_link;
int tracer__attach_owned(struct tracer *t, const char *path, const unsigned long *offsets,
			 const uint64_t *cookies, size_t n, bool entry_only, uint64_t *refused,
			 size_t *nrefused, struct bpf_link ***links, size_t *nlinks);
/* Gives links of tracer__attach_owned() back (entry_only: as made for it), to be detached. */
void tracer__adopt_links(struct tracer *t, struct bpf_link **links, size_t n, bool entry_only);
/* The governor's group words (bpf/trace.bpf.c, BP_GOV_GROUPS), mapped. */
uint32_t *tracer__gov_groups(struct tracer *t);
/* The map of dropped function ids (key u32, value u8). */
int tracer__gov_dropped_fd(struct tracer *t);
/* Hits (entry or return) of dropped functions on old links still attached. */
uint64_t tracer__gov_dropped_hits(struct tracer *t);
/* tracer__attach_module() for each module of ps; -errno (named) at the first failure. */
int tracer__attach_set(struct tracer *t, const struct bp_session *s, const struct probe_set *ps);
/*
 * Hooks the exception unwinder entry points of unw (select__unwinders():
 * libgcc_s, or an executable with libgcc_eh linked in), so that unwinding
 * works through functions with return probes.  Before any return probe: a
 * running target may throw through a trampoline the moment it is armed.  A
 * failure is a warning: tracing works, only exceptions through traced calls
 * would not.
 */
void tracer__attach_unwinders(struct tracer *t, const struct probe_set *unw);
/*
 * Holds the threads of the running targets still (ptrace: their parent sees
 * nothing) while probes are attached, so that no call starts between the
 * return link and the entry link and shows a return without an entry; and
 * lets them go.  Threads traced by someone else are left running.
 */
void tracer__hold_targets(struct tracer *t);
/*
 * Without a keeper, for processes stopped whole at an exec or a dlopen
 * (HOLD_EXEC, HOLD_DLOPEN with BP_STOP_SIGNAL: decode/hold.h): a process of the keeper's kind that
 * traces nothing and, when bpfprof ends or dies, continues each of them
 * bpfprof did not.  Never with -a.
 */
void tracer__start_guard(struct tracer *t);
/*
 * The executable (dev, ino: a stat() of it) needs nothing more at an exec:
 * its probes are in place.  Its next execs go on without being held
 * (stop_on_exec); 0 or -errno.
 */
int tracer__exec_known(struct tracer *t, dev_t dev, ino_t ino);
void tracer__release_targets(struct tracer *t);
/*
 * Lets pid go on after a stop of the BPF side (BP_STOP_*: how it was held,
 * decode/hold.h), once its new image is probed: SIGCONT, or the keeper's
 * hold ended.
 */
void tracer__resume(struct tracer *t, pid_t pid, uint32_t stopped);
/*
 * Hooks the dynamic linker's _dl_debug_state at `offset` of `path`: each
 * call of a traced process gives a HOLD_DLOPEN record, the process held
 * (capture/dlfollow.c).
 */
int tracer__attach_loader(struct tracer *t, const char *path, unsigned long offset);
/* The same, knowing only the pid (the decoder's exec hook): the keeper's hold, else SIGCONT. */
void tracer__resume_exec_pid(struct tracer *t, pid_t pid);
/* The keeper's pid (keeper.h), 0 when none runs. */
pid_t tracer__keeper_pid(struct tracer *t);
/* Sleeps up to timeout_ms, less when a record asked for a wakeup. */
void tracer__wait(struct tracer *t, int timeout_ms);
/* Return addresses put back for the exception unwinder, and failures to. */
void tracer__unwind_stats(struct tracer *t, uint64_t *restored, uint64_t *failed);
/*
 * Drains up to 65536 records; returns how many (more may be pending) or
 * -errno.  Unless `all`, only once enough records are pending, they are old
 * enough, or one asked for a wakeup (see tracer__poll's comment): 0 then.
 */
int tracer__poll(struct tracer *t, bool all);
/* Number of traced processes still alive (the BPF side forgets a process at its exit). */
size_t tracer__ntargets(struct tracer *t);
/*
 * CPU time (ns) of every traced thread: those alive now (whole lives so
 * far) and those that exited during the recording; how many processes are
 * traced now into *nprocs (may be NULL); into *wait (may be NULL) the
 * same threads' time runnable, waiting for a CPU (schedstat's run delay).
 * Subtract a first reading for the time since then.  each (may be NULL)
 * is given each live process's own figure.
 */
uint64_t tracer__targets_cpu_ns(struct tracer *t, size_t *nprocs, uint64_t *wait,
				void (*each)(uint32_t pid, uint64_t ns, void *ctx), void *ctx);
/* Sum of reserve failures; adds the per-CPU counts into per_cpu (ncpu entries, see object.h). */
uint64_t tracer__lost(struct tracer *t, uint64_t *per_cpu, size_t ncpu);
/* Stops recording (the probes stay attached but write nothing): the end of a recording. */
void tracer__pause(struct tracer *t);
/* Detaches every probe (records already in the buffer stay readable). */
void tracer__detach(struct tracer *t);
/*
 * Links made over the run (the governor's re-links included), and those
 * alive now: uprobe_multi links (each one's removal waits for the uprobes'
 * grace periods) and the skeleton's others.
 */
void tracer__count_links(const struct tracer *t, size_t *made, size_t *uprobe, size_t *other);
/* The descriptors a process that ends the tracer for bpfprof needs beside the BPF ones. */
size_t tracer__keep_fds(const struct tracer *t, int *fds, size_t max);
/*
 * In bpfprof, once bpfprof-release (teardown.c) holds copies of every
 * descriptor: tracer__free() then only closes its own.
 */
void tracer__disown(struct tracer *t);
/* The descriptors of the tracer's uprobe links, into a new array (*fds); how many. */
size_t tracer__link_fds(const struct tracer *t, int **fds);
/* In bpfprof-release: tracer__free() removes the links without holding the targets. */
void tracer__in_background(struct tracer *t);
void tracer__free(struct tracer *t);

#endif
