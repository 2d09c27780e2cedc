// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The limit on a hold at an exec or a dlopen (internal.h): a
 * watchdog lets the process go at HOLD_LIMIT_MS from a thread of its own
 * while the drain thread goes on reading symbols and attaching.  Resuming
 * is safe from there: a SIGCONT and a map update, or a call to the keeper
 * (its socket is locked).
 */
#include <time.h>
#include "internal.h"
#include "cost/overhead.h"
#include "base/util.h"
#include "base/watchdog.h"

static void let_go(void *ctx)
{
	struct capture_hold *h = ctx;

	if (h->exec)
		tracer__resume_exec_pid(h->tr, h->pid);
	else
		tracer__resume(h->tr, h->pid, h->stopped);
}

void capture_hold_begin(struct capture *c, struct capture_hold *h, pid_t pid, uint32_t stopped,
			bool exec)
{
	*h = (struct capture_hold){ .tr = c->tr, .pid = pid, .stopped = stopped, .exec = exec,
				    .ov = c->ovh, .t0 = now_ns(CLOCK_MONOTONIC),
				    .cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID),
				    .held_cpu = &c->held_cpu_ns };
	h->w = watchdog__start(HOLD_LIMIT_MS, let_go, h);
}

void capture_hold_end(struct capture_hold *h, const char *what)
{
	/* the process waited this long for its symbols and probes: part of the estimate */
	overhead__add_wait(h->ov, (double)(now_ns(CLOCK_MONOTONIC) - h->t0), 0);
	/* reading symbols and attaching is not decoding (governor__own_cpu) */
	*h->held_cpu += now_ns(CLOCK_THREAD_CPUTIME_ID) - h->cpu0;
	if (!watchdog__end(h->w)) {
		let_go(h);
		return;
	}
	p_warn("pid %d was held %u s for the symbols of %s, the longest a hold waits: it went on, "
	       "and was probed late (its calls until then are not traced)", (int)h->pid,
	       HOLD_LIMIT_MS / 1000, what);
}
