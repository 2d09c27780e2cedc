/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live pipeline, one for record, attach and serve: the targets (a
 * command started held, or running processes held still while the probes go
 * in), the selection, the BPF objects (tracer, sampler, USDT: loaded only
 * when needed), the drain loop's step with its loss accounting, exec
 * following, and the end (pause, last drain, open calls closed).  Decoded
 * events go to the caller's sink; where they are written is the caller's
 * business.
 *
 * Lifecycle:
 *   capture__new()     header, targets and selection into the session: the
 *                      function table is complete, nothing is loaded yet (an
 *                      output can be opened, and fail, before anything runs)
 *   capture__start()   load, start the command held / hold the targets,
 *                      attach, release
 *   capture__poll()    until capture__done(); capture__stop() begins the end
 *   capture__finish()  pause, drain the rest, close open calls, duration
 *   capture__free()
 */
#ifndef BPFPROF_CAPTURE_H
#define BPFPROF_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "probes/sample.h"
#include "decode/decode.h"
#include "model/session.h"

struct capture;
struct debug_conf;

struct capture_opts {
	/* What runs: a command to start (record), running processes, or -a. */
	char *const *argv;	/* the command, NULL-terminated; NULL: none */
	pid_t *pids;		/* attach, serve */
	size_t npids;
	bool all;		/* -a: every process */
	bool as_root;		/* under sudo, the command runs as root */
	const char *verb;	/* header of a pid capture: "attach" or "serve" */

	/* where debug files are (symbols/debugsyms.h); NULL: /usr/lib/debug only */
	const struct debug_conf *debug;

	/* What is traced. */
	char **includes, **excludes;	/* -F, -N */
	size_t nincludes, nexcludes;
	bool no_skip_endbr;
	char **usdts;		/* -U [LIB:]PROVIDER:NAME */
	size_t nusdts;
	bool no_exec_follow;	/* exec'd images are not probed (serve) */

	/* The tracer. */
	uint64_t buffer_size;
	bool no_follow;		/* forks are not traced */
	bool args;		/* argument registers and return values */
	bool deps;		/* data edges (with args) */
	bool no_wakeups;
	bool gated;		/* only inside BPFPROF_START/STOP windows */
	bool no_compensation;	/* durations on the raw clock (decode/compensate.h) */
	double max_overhead;	/* percent: drop functions past it (governor.h); 0: exact */

	/* Sampling. */
	unsigned sample_hz;	/* 0: no cpu samples */
	bool offcpu;
	bool no_kernel_stacks;
	enum stack_mode stack;
	unsigned stack_size;
	/*
	 * When the governor detaches CPython's probes and nothing samples cpu
	 * stacks yet, they are sampled at this rate from then on (record and
	 * attach: CAPTURE_FALLBACK_HZ); 0: not (serve exports no samples).
	 */
	unsigned fallback_hz;
};

/*
 * 99 Hz: the fall-back is there because the probes cost too much, so the
 * sampling that replaces them must cost little (a sample copies up to
 * 16 KiB of user stack and walks the Python frames: some microseconds, at
 * 99 Hz well under 0.1% of a CPU), yet a function that takes a second
 * shows in ~99 samples; off the 100 Hz of periodic timers (no lockstep).
 */
#define CAPTURE_FALLBACK_HZ	99

/*
 * What the options ask together (--stack without sampling, -a's needs, ...):
 * 0, or -EINVAL with the first problem printed (capture_opts.c).
 */
int capture_opts__validate(const struct capture_opts *co);
/* Frees the option lists: -p, -F, -N, -U (filled with strv_push/parse_pids). */
void capture_opts__free(struct capture_opts *co);

/*
 * Fills the session's header and function table (s initialised by the
 * caller); events will go to sink(ctx, ev), called from capture__poll().
 * 0 or -errno (printed).
 */
int capture__new(const struct capture_opts *o, struct bp_session *s, decoder_sink_fn sink,
		 void *ctx, struct capture **out);
/* Loads, starts or holds the targets, attaches, releases.  0 or -errno (printed). */
int capture__start(struct capture *c);
/*
 * One step of the drain loop: decodes what is due (everything with `all`),
 * and the records lost since the last step.  Returns how many records were
 * decoded (0: nothing was due) or -errno (printed unless a sink's).
 */
int capture__poll(struct capture *c, bool all);
/* tracer__poll()'s budget: a poll that returns fewer emptied the buffer. */
#define CAPTURE_POLL_BUDGET 65536
/* Sleeps up to ms, less when a record asks to be decoded at once. */
void capture__wait(struct capture *c, int ms);
/*
 * Is the recording over: the command and what it forked have exited, the
 * attached processes are gone, or capture__stop()'s grace has run out?
 * Reaps children (record); counts the targets at most every 100 ms.
 */
bool capture__done(struct capture *c);
/* Traced processes alive, as last counted by capture__done(). */
size_t capture__ntargets(const struct capture *c);
/*
 * The probes' estimated slowdown of the traced processes (1 + overhead
 * factor, overhead.h) since the start and recently, 0 when not known;
 * *limit: --max-overhead as a slowdown, 0 when exact.
 */
void capture__slowdown(const struct capture *c, double *total, double *recent, double *limit);
/*
 * The live status line (base/status.h), when due: elapsed, calls (and cpu
 * samples) with their rate, lost records, the estimated slowdown, functions
 * the governor dropped.  Called from the drain loop; nothing off a terminal.
 */
void capture__status(struct capture *c);
/* Its decoder (serve ages out the state of threads whose exit was lost). */
struct decoder *capture__decoder(struct capture *c);
/*
 * Begins the end (a signal, --duration): a started command is sent SIGTERM
 * and given a second to exit (its exit is recorded, like perf); otherwise
 * the next capture__done() says yes.
 */
void capture__stop(struct capture *c);
/* Pauses the probes, drains the rest, closes open calls; sets s->duration, losses. */
int capture__finish(struct capture *c);
/* The started command's exit status (128 + signal), 0 without one. */
int capture__exit_code(const struct capture *c);
/* Functions traced, files they are in (for the summary). */
void capture__counts(const struct capture *c, size_t *nfuncs, size_t *nmods);
/*
 * Leaves the probes' removal (which waits for grace periods) to
 * bpfprof-release, whatever ended the capture, and returns at once.
 */
void capture__free(struct capture *c);	/* accepts NULL */

#endif
