/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause OR MIT */
/*
 * bpfprof.h -- let a program speak into its bpfprof profile.
 *
 * Header-only, C and C++.  Each macro is a USDT probe (<sys/sdt.h>, Debian
 * package systemtap-sdt-dev): a single nop instruction in the program plus
 * a note in the binary.  Nothing happens when nobody traces the program;
 * `bpfprof record` and `attach` find the probes and attach to them on their
 * own.  Strings must stay valid for the duration of the macro (literals are
 * best); they are read up to 63 bytes, from the program's memory or, for a
 * literal on a page the program never touched, from its binary.
 *
 *   BPFPROF_MARK("label")            checkpoint: report --marks shows the time
 *                                    since the previous mark of the thread and
 *                                    since its first
 *   BPFPROF_INFO("key", int64)       key=value added to the innermost traced
 *   BPFPROF_INFO_STR("key", "value") call of the thread (its Chrome args)
 *   BPFPROF_EVENT("name", int64)     instant event with a value (also a
 *                                    counter track per name)
 *   BPFPROF_SPAN_BEGIN("name")       a custom slice, nested like calls
 *   BPFPROF_SPAN_END("name")
 *   BPFPROF_START() / BPFPROF_STOP() with record --gated: nothing is recorded
 *                                    outside these windows.  The window is
 *                                    process-wide: a STOP in any thread
 *                                    closes it for every thread.
 *
 * Define BPFPROF_DISABLE before including to compile every macro to nothing.
 */
#ifndef BPFPROF_H
#define BPFPROF_H

#if defined(BPFPROF_DISABLE) || !defined(__linux__)
#define BPFPROF_MARK(label) ((void)0)
#define BPFPROF_INFO(key, value) ((void)0)
#define BPFPROF_INFO_STR(key, value) ((void)0)
#define BPFPROF_EVENT(name, value) ((void)0)
#define BPFPROF_SPAN_BEGIN(name) ((void)0)
#define BPFPROF_SPAN_END(name) ((void)0)
#define BPFPROF_START() ((void)0)
#define BPFPROF_STOP() ((void)0)
#else
#include <stdint.h>
#include <sys/sdt.h>

#define BPFPROF_MARK(label) DTRACE_PROBE1(bpfprof, mark, (const char *)(label))
#define BPFPROF_INFO(key, value) \
	DTRACE_PROBE2(bpfprof, info, (const char *)(key), (int64_t)(value))
#define BPFPROF_INFO_STR(key, value) \
	DTRACE_PROBE2(bpfprof, info_str, (const char *)(key), (const char *)(value))
#define BPFPROF_EVENT(name, value) \
	DTRACE_PROBE2(bpfprof, event, (const char *)(name), (int64_t)(value))
#define BPFPROF_SPAN_BEGIN(name) DTRACE_PROBE1(bpfprof, span_begin, (const char *)(name))
#define BPFPROF_SPAN_END(name) DTRACE_PROBE1(bpfprof, span_end, (const char *)(name))
#define BPFPROF_START() DTRACE_PROBE(bpfprof, start)
#define BPFPROF_STOP() DTRACE_PROBE(bpfprof, stop)
#endif

#endif /* BPFPROF_H */
