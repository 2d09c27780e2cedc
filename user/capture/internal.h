/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The capture's state, shared by capture.c (the pipeline) and
 * capture_usdt.c (its USDT probes).  Not for use outside user/capture/.
 */
#ifndef BPFPROF_CAPTURE_INTERNAL_H
#define BPFPROF_CAPTURE_INTERNAL_H

#include <dirent.h>
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
#include <sys/stat.h>
#include "capture.h"
#include "target/launch.h"
#include "probes/trace.h"
#include "probes/usdt.h"
#include "cpython/cpython.h"
#include "bpf/events.h"
#include "base/log.h"
#include "base/util.h"
#include "cost/overhead.h"
#include "cost/governor.h"
#include "probes/where.h"
#include "symbols/placement.h"
#include "symbols/select.h"
#include "symbols/symbolize.h"
#include "symbols/ustrings.h"

struct capture {
	struct capture_opts o;
	struct bp_session *s;
	struct select_opts sopts;
	struct probe_set ps, unw;
	char *exe;		/* the main executable, NULL with -a and no command */
	bool launching;		/* a command is started (record) */
	struct launch l;

	struct decoder *dec;
	struct tracer *tr;
	struct sampler *smp;
	struct where *where;	/* the thin-executable hint's counts (where.h) */
	struct symbolizer *sym;
	struct usdt_tracer *usd;	/* loaded on first need (usdt_ensure) */
	struct usdt_opts uopts;
	struct ustrings *strings;	/* probe strings the BPF side could not read */
	struct py_capture *py;	/* Python calls of CPython targets (cpython/pycap.c) */
	bool py_wanted;		/* python_wanted() */
	bool python;		/* the main target is CPython: its Python calls are traced */
	bool py_refused;	/* an exec'd CPython's Python calls cannot be traced: exit 1 */

	struct stat *images;	/* executables already probed (dev, ino) */
	size_t nimages;

	int ncpus;
	uint64_t *lost_seen, *lost_now;

	bool child_running, stopping;
	int exit_code;
	uint64_t stop_deadline;
	uint64_t next_count;	/* when to count the targets again */
	uint64_t held_cpu_ns;	/* this thread's CPU in holds (symbols, attaches): not decoding */
	size_t ntargets;
	uint64_t st_time, st_calls, st_samples;	/* at the last status line (status.c) */

	decoder_sink_fn sink;	/* the caller's */
	void *sink_ctx;
	struct overhead *ovh;	/* probe cost estimate (cost/overhead.c) */
	struct governor *gov;	/* --max-overhead (cost/governor.c), NULL: exact */
	struct dlfollow *dl;	/* LIB: files loaded later (dlfollow.c), NULL: none named */
	bool exec_hooked;	/* execs are followed (capture_follow_exec) */
	size_t nexec_held;	/* execs held for their new image (an image probed already is not) */
	bool dl_hooked;		/* the dynamic linker is hooked (capture_dl_follow) */
};

/*
 * targets.c: the targets and the selection, resolved before anything is
 * loaded (0 or -errno, said); running targets named from /proc; has an
 * executable (st) been probed already (remembered if not); do the patterns
 * select main-executable functions (so execs are followed); the decoder's
 * exec hook (ctx the capture): the new image probed, then let run.
 */
int capture_resolve_targets(struct capture *c);
void capture_name_existing(struct bp_session *s, pid_t pid);
bool capture_image_known(struct capture *c, const struct stat *st);
bool capture_follows_exec(const struct capture_opts *o);
void capture_follow_exec(void *ctx, uint32_t pid, const char *filename);
/*
 * The decoder's hold hook (decode.h, decode/hold.h): the one way an exec
 * or a dlopen that held a process reaches the pipeline; to
 * capture_follow_exec() or capture_dl_follow() when they are on.
 */
struct hold;
void capture_on_hold(void *ctx, const struct hold *h);

/* Probes ps, found in pid's new image or mappings ("pid N `how` FILE" in messages). */
void capture_attach_later(struct capture *c, const struct probe_set *ps, uint32_t pid,
			  const char *how, bool say);

/*
 * Files dlopen'ed later, named by file name (dlfollow.c): prepare before
 * the selection, start once the tracer is loaded (before the targets run),
 * finish after the last record (warns of patterns that matched nothing).
 */
void capture_dl_prepare(struct capture *c);
/*
 * A -U LIB:PROVIDER:NAME whose LIB (a file name) matches no file yet: its
 * probe is attached, with `cookie`, to the matching files the process loads
 * later.  false: nothing can be followed here (-a, or no process named).
 */
bool capture_dl_defer_usdt(struct capture *c, const char *spec, const char *lib,
			   const char *provider, const char *name, uint64_t cookie);
void capture_dl_start(struct capture *c);
/*
 * The sampler's hook on the same linker, which records the libraries it
 * maps into the sampled processes (best effort: warns).
 */
void capture_dl_sample(struct capture *c);
void capture_dl_follow(void *ctx, uint32_t pid, uint32_t stopped);
void capture_dl_finish(struct capture *c);
void capture_dl_free(struct capture *c);

/*
 * Forks bpfprof-release (teardown.c), which removes the probes (and ends the
 * keeper or guard) while bpfprof only closes its descriptors and exits.
 * The write end of a pipe, which the caller closes once all its own
 * descriptors are closed (bpfprof-release waits for that), or -errno
 * (nothing forked: bpfprof removes them itself).
 */
int capture_hand_off(struct capture *c);

/*
 * A process held at an exec or a dlopen while its new files' symbols are
 * read and probed (holdlimit.c): never for longer than HOLD_LIMIT_MS.  The
 * symbol work is the files' owners' to make slow (a huge debug file, an xz
 * bomb: each has its own cap in symbols/debugsyms.c, this bounds them all);
 * past the limit the process goes on, the work goes on, its files are
 * probed late, and that is said on stderr.  begin arms the limit; end lets
 * the process go unless the limit did (and then says so, naming `what`).
 */
#define HOLD_LIMIT_MS	3000
struct watchdog;
struct capture_hold {
	struct tracer *tr;
	pid_t pid;
	uint32_t stopped;	/* BP_STOP_*; exec: how is looked up (tracer__resume_exec_pid) */
	bool exec;
	struct watchdog *w;
	struct overhead *ov;	/* the hold's time goes into the estimate (overhead__add_wait) */
	uint64_t t0;		/* CLOCK_MONOTONIC ns of its beginning */
	uint64_t cpu0;		/* the thread's CPU time then (CLOCK_THREAD_CPUTIME_ID) */
	uint64_t *held_cpu;	/* capture's held_cpu_ns, which the hold's CPU time adds to */
};
void capture_hold_begin(struct capture *c, struct capture_hold *h, pid_t pid, uint32_t stopped,
			bool exec);
void capture_hold_end(struct capture_hold *h, const char *what);

/* Loads the USDT object if it is not yet (it shares the tracer's maps).  0 or -errno. */
int capture_usdt_ensure(struct capture *c);
/* The bpfprof.h probes of the binary at path, if it has any. */
/* path: pinned here (symbols/binfile.h), checked against pid's mappings when pid > 0 */
void capture_usdt_attach_bpfprof(struct capture *c, const char *path, pid_t pid);
/* The bpfprof.h probes of every traced binary, and the -U probes.  0 or -errno (printed). */
int capture_attach_usdts(struct capture *c);

#endif
