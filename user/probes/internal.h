/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tracer's state, shared by trace.c (the skeleton, the ring buffer, the
 * targets), trace_links.c (links handed to the overhead governor) and
 * trace_stops.c (processes stopped whole, continued).  Not
 * for use outside user/capture/.
 */
#ifndef BPFPROF_TRACE_INTERNAL_H
#define BPFPROF_TRACE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "object.h"
#include "trace.h"

struct trace_bpf;
struct bp_ringbuf;
struct bpf_link;
struct bp_tgid_bits;
struct frozen;
struct keeper;
struct stop_fd;

struct tracer {
	struct trace_bpf *skel;
	struct probe_obj po;	/* its load, losses and pause (object.h); the links are below */
	struct bp_ringbuf *rb;
	struct bpf_link **links;
	unsigned char *kinds;	/* LINK_* of each link */
	size_t nlinks;
	tracer_record_fn fn;
	void *ctx;
	bool args;
	bool gated;
	bool session;		/* calls probed by uprobe session links (trace_session.c) */
	uint64_t unwind_restored, unwind_failed;
	size_t drain_bytes;	/* tracer__poll() drains once this much is pending... */
	uint64_t last_drain;	/* ...or DRAIN_LATENCY_NS after the last drain */
	bool woken;		/* a record asked for a wakeup */
	bool draining;		/* the last tracer__poll() stopped at its budget */
	int ncpus;		/* possible CPUs: the batches to flush */
	struct bp_tgid_bits *bits;	/* the `recording` map, mapped */
	bool stranded;		/* records left in batches at the end were counted lost */
	bool paused;		/* tracer__pause() was called */
	struct frozen *held;	/* tracer__hold_targets() */
	size_t nheld;
	bool follow_forks;
	struct keeper *keeper;	/* the ptrace helper of targets with a hooked unwinder */
	bool keeper_held;	/* tracer__hold_targets() went through the keeper */
	struct keeper *guard;	/* without a keeper: one that only continues (tracer__start_guard) */
	struct stop_fd *stop_fds;	/* pidfds of processes stopped whole (trace_stops.c) */
	size_t nstop_fds;
	pthread_mutex_t stop_lock;	/* stop_fds: the hold watchdog's thread too */
	size_t nmade;		/* links made over the run (governor's included) */
	bool disowned;		/* tracer__disown(): bpfprof-release removes the links */
	bool background;	/* tracer__in_background(): this is bpfprof-release */
};

enum { LINK_ENTRY, LINK_RETURN, LINK_UNWIND };

/* trace_stops.c: processes stopped whole, continued through pidfds */
struct hold;
/* An exec or dlopen record: the pidfd of its stopped process, taken now. */
void tracer__note_stop(struct tracer *t, const struct hold *h);
/* Puts back the return addresses of an unwind stop, continues the process. */
void tracer__restore_unwind(struct tracer *t, const struct hold *h);
/* Closes the pidfds of stops never continued (the guard or keeper does it). */
void tracer__forget_stops(struct tracer *t);
/*
 * trace_stops.c too, the targets held still: the keeper started for the
 * unwinder hooks' fds (nfds), and ended; every traced thread not the
 * keeper's frozen (a ptrace seize) and thawed.
 */
void tracer_start_keeper(struct tracer *t, const int *fds, size_t nfds);
void tracer_end_keeper(struct tracer *t);
struct frozen;
size_t tracer_freeze_targets(struct tracer *t, struct frozen **out);
void tracer_thaw_targets(struct frozen *v, size_t n);
/* trace_links.c: the links of one kind removed, one after the other */
void tracer_destroy_kind(struct tracer *t, int kind);
/*
 * Every link (the skeleton's too) removed at once: their grace periods
 * overlap; with calls_only, the entry and return probes' links alone.
 */
void tracer_destroy_parallel(struct tracer *t, bool calls_only);
/* closed without removing them (tracer__disown) */
void tracer_drop_links(struct tracer *t);
/*
 * trace_session.c: uprobe session links.  Whether to try them
 * (BPFPROF_NO_SESSION unset, no load of them failed); a failed
 * load (-errno) noted: the next tracer__new() uses the pair; before load,
 * which call programs are loaded; the session program to link (NULL: the
 * pair); a session link made (0 or -errno).
 */
bool tracer_session_wanted(void);
void tracer_session_say(bool on);	/* -v, once: the session links are used */
void tracer_session_refused(int err);
void tracer_session_prepare(struct tracer *t, bool on);
struct bpf_program;
struct bpf_program *tracer_session_prog(struct tracer *t);
/* tracer__attach() with session links or not (the governor's groups: never). */
int tracer_attach_kind(struct tracer *t, const char *path, const unsigned long *offsets,
		       const uint64_t *cookies, size_t n, bool entry_only, bool session,
		       uint64_t *refused, size_t *nrefused);
int tracer_session_link(struct tracer *t, struct bpf_program *prog, const char *path,
			const unsigned long *offsets, const uint64_t *cookies, size_t n,
			struct bpf_link **out);

#endif
