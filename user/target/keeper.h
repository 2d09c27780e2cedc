/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The keeper: a small process, forked by the tracer, that is the ptrace
 * tracer of every target whose exception unwinder is hooked, and the one
 * that writes into their stacks.
 *
 * A thread that enters the unwinder with return trampolines on its stack
 * sends itself SIGSTOP (bpf/trace.bpf.c, hold_for_keeper()); under ptrace
 * that stops this thread alone (a signal-delivery stop: no group stop, no
 * SIGCONT, nothing its parent or its other threads see).  The keeper reads
 * the thread's pending return probes (the unwind_slots task iterator),
 * puts the original return addresses back, and resumes the thread without
 * the signal.  The same for the re-arm at the thread's next traced call,
 * and for the stop of an exec'd image, held until the loader has probed it.
 *
 * It outlives bpfprof: when bpfprof is gone (any exit, SIGKILL, the OOM
 * killer), it holds every thread, puts back every return address a return
 * probe still holds, lets them all go and exits.  It keeps the unwinder
 * hook until then, so no exception finds a trampoline in between.  And
 * it continues every process still listed in the sig_stops map (stopped
 * whole by SIGSTOP at an exec or a dlopen, not yet continued by bpfprof).
 * Started without any target to trace, that last part is all it does:
 * the tracer's guard (tracer__start_guard).
 */
#ifndef BPFPROF_KEEPER_H
#define BPFPROF_KEEPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct keeper;
struct trace_bpf;

/*
 * Forks the keeper, its process named `name` ("bpfprof-keeper", or
 * "bpfprof-guard" for one that will trace nothing).  It keeps, of
 * bpfprof's descriptors, only the `holds` and `sig_stops` maps, the
 * unwind_slots program and keep_fds (the unwinder hook links); with
 * follow_forks, processes the targets fork are traced too.
 */
int keeper__start(struct trace_bpf *skel, const char *name, const int *keep_fds, size_t nkeep,
		  bool follow_forks, struct keeper **out);
pid_t keeper__pid(const struct keeper *k);
/*
 * Traces every thread of pid (and those it creates); with hold, they stay
 * stopped.  How many, or -errno.
 */
int keeper__seize(struct keeper *k, pid_t pid, bool hold);
/* Stops every traced thread (ptrace: nothing else sees it) until keeper__release(). */
int keeper__hold(struct keeper *k);
/* Resumes what keeper__hold() stopped. */
int keeper__release(struct keeper *k);
/* Resumes the threads of pid held at exec (BP_STOP_KEEPER at HOLD_EXEC, decode/hold.h): how many. */
int keeper__release_exec(struct keeper *k, pid_t pid);
/*
 * The end: every thread held, every armed return slot given its original
 * address back (once the return probes are gone none is re-armed), every
 * thread let go, the keeper gone.  Return addresses restored and failures,
 * over the whole run.  Frees k.
 */
void keeper__end(struct keeper *k, uint64_t *restored, uint64_t *failed);
/* bpfprof's end of the socket (to keep in a process that ends it for bpfprof). */
int keeper__fd(const struct keeper *k);
/* Frees k without ending the keeper: another process holding the socket ends it. */
void keeper__disown(struct keeper *k);

#endif
