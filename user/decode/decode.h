/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The decoder: turns ring buffer records (bpf/events.h) into decoded events
 * (session.h) with one shadow call stack per thread.
 *
 * Memory is bounded by the number of threads and their live call depth, never
 * by the number of calls: a call is emitted to the sink as soon as it ends.
 */
#ifndef BPFPROF_DECODE_H
#define BPFPROF_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/session.h"

struct decoder;

/* Receives every decoded event; a negative return stops decoding and is passed back. */
typedef int (*decoder_sink_fn)(void *ctx, const struct bp_event *ev);

/*
 * Frames deeper than this on one thread get no return probe from the kernel
 * (MAX_URETPROBE_DEPTH in kernel/events/uprobes.c); the decoder expects no
 * exit for them and closes them when later records prove them gone.
 */
#define DECODER_URETPROBE_DEPTH 64

int decoder__new(struct bp_session *s, decoder_sink_fn sink, void *ctx, struct decoder **out);
struct symbolizer;
/* Stack samples are symbolized through sy (owned by the caller); without it they are dropped. */
void decoder__set_symbolizer(struct decoder *d, struct symbolizer *sy);
struct ustrings;
/* Strings the probes could not read are read through u (owned by the caller); without it they stay empty. */
void decoder__set_strings(struct decoder *d, struct ustrings *u);
/* Data edges from the argument and return registers of BP_REC_*_ARGS records (--deps). */
void decoder__enable_data_edges(struct decoder *d);
/*
 * The one hook of the live side for the records that hold a process
 * (decode/hold.h), called after the decoder has taken what it needs:
 * HOLD_EXEC when the BPF side stopped the process at its new image's first
 * instruction (tracer_opts.stop_on_exec), HOLD_DLOPEN at each change of what
 * a process maps.  The hook probes the new image or files and must let a
 * stopped process (h->stopped not BP_STOP_NONE) go on.
 */
struct hold;
typedef void (*decoder_hold_fn)(void *ctx, const struct hold *h);
void decoder__set_hold_hook(struct decoder *d, decoder_hold_fn fn, void *ctx);
/*
 * Python functions: only those matching inc (none: all) and no exc pattern,
 * "QUALNAME" or "FILE:QUALNAME" globs (the -F/-N py: patterns); copied.
 */
void decoder__set_python_filter(struct decoder *d, char **inc, size_t ninc, char **exc,
				size_t nexc);
/*
 * Takes the probes' cost out of every thread's clock (decode/compensate.h)
 * from now on; NULL: the raw clock.  Before the first record.
 */
struct comp_costs;
void decoder__compensate(struct decoder *d, const struct comp_costs *c);
/* Whether decoder__compensate() is on: durations come without the probes' cost. */
bool decoder__compensating(const struct decoder *d);
/* The compensation's figures in use (compensator__in_use); false: no compensation. */
bool decoder__comp_in_use(const struct decoder *d, struct comp_costs *out, uint32_t *pid,
			  unsigned *mask);
/* ns taken out so far, all threads. */
double decoder__compensated_ns(const struct decoder *d);
/*
 * Sampled stacks of CPython processes: proc(ctx, pid) is called for a
 * process the first time it is met in samples (again after exec), so the
 * caller can have its Python frames read; namer(ctx, pid, code, ...)
 * names a code object met only in a sampled stack (0, or -errno).
 */
typedef void (*decoder_py_proc_fn)(void *ctx, uint32_t pid);
typedef int (*decoder_py_namer_fn)(void *ctx, uint32_t pid, uint64_t code, char *name,
				   size_t name_len, char *file, size_t file_len, uint32_t *line);
void decoder__set_python_hooks(struct decoder *d, decoder_py_proc_fn proc,
			       decoder_py_namer_fn namer, void *ctx);
/* One ring buffer record.  Returns 0, -EINVAL for a malformed record, or the sink's error. */
int decoder__feed(struct decoder *d, const void *rec, size_t size);
/* Threads with decoder state (seen, not exited). */
size_t decoder__nthreads(const struct decoder *d);
/* `count` records were lost on `cpu`: emits a loss marker at the latest time seen. */
int decoder__loss(struct decoder *d, uint32_t cpu, uint64_t count);
/*
 * The overhead governor dropped func: its open frames whose return will not
 * come are flagged BP_CALL_DROPPED when seen gone, not BP_CALL_UNWOUND.
 */
void decoder__drop_func(struct decoder *d, uint32_t func);
/* Sets open[func] for every function with a call open (entered, not returned yet) in any thread; n: open's size. */
void decoder__mark_open(const struct decoder *d, uint8_t *open, size_t n);
/* Whether func was dropped (decoder__drop_func). */
bool decoder__dropped(const struct decoder *d, uint32_t func);
/*
 * fn is told each (process, code object) of a dropped Python function: those
 * named already when it is dropped, and those named later (other processes,
 * other code objects of the same file, name and line), so that the BPF side
 * stops recording them.
 */
void decoder__set_py_drop(struct decoder *d, void (*fn)(void *ctx, uint32_t pid, uint64_t code),
			  void *ctx);
/*
 * fn reports the losses counted so far (decoder__loss for each new one), and is
 * asked before a return without its entry is judged: the loss counters live
 * apart from the records, and a record that follows a loss can be read before
 * the loss is next looked at.  Whatever made its entry lost was counted before
 * the record was written, so asking then is enough.
 */
void decoder__set_loss_check(struct decoder *d, int (*fn)(void *ctx), void *ctx);
/* An annotation of bpfprof's own (the governor's drops) into the stream. */
struct bp_annot;
int decoder__annot(struct decoder *d, const struct bp_annot *a);
/* End of recording: closes every call still open, flagged unfinished. */
int decoder__finish(struct decoder *d);
/*
 * Threads whose exit record never came (lost with the ring buffer full):
 * those with nothing decoded since `before` (ns since t0) that gone(tid,
 * pid, ctx) says no longer exist.  Their open calls are closed as unfinished
 * and their state goes, as at an exit (a long `serve` must not keep them).
 * 0 and *n reaped, or -errno from the sink.
 */
int decoder__reap(struct decoder *d, uint64_t before,
		  bool (*gone)(uint32_t tid, uint32_t pid, void *ctx), void *ctx, size_t *n);
void decoder__free(struct decoder *d);

/*
 * A raw record that starts or ends a Python call (the calibration times
 * them itself: the decoder keeps them as Python frames): 1 for a call, -1
 * for a return, its time in *ts; 0 for any other record.
 */
int decoder__py_call(const void *rec, size_t size, uint64_t *ts);

#endif
