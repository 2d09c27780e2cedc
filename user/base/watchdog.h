/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A deadline on some work: fn(ctx) is called from a thread of its own once
 * `ms` milliseconds have passed, unless the work ended first
 * (watchdog__end).  capture/holdlimit.c lets a process held for symbol work
 * go on at its deadline, whatever the files being read cost.
 */
#ifndef BPFPROF_WATCHDOG_H
#define BPFPROF_WATCHDOG_H

#include <stdbool.h>

struct watchdog;

/* Armed; NULL when no thread could be started (then nothing will fire). */
struct watchdog *watchdog__start(unsigned int ms, void (*fn)(void *ctx), void *ctx);
/*
 * Disarms and frees w: true when fn ran or was running (then it has
 * returned), false when it never will.  Accepts NULL (false).
 */
bool watchdog__end(struct watchdog *w);

#endif
