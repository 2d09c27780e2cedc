// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * record/attach/serve's live status line (capture.h capture__status; the
 * line itself: base/status.c): what a user watching a long recording wants
 * to know -- is it tracing, how fast, is anything lost, what does it cost.
 */
#include <stdio.h>
#include <time.h>
#include "capture.h"
#include "internal.h"
#include "cost/governor.h"
#include "base/status.h"
#include "base/util.h"

/* 1234567 -> "1.23M": the line stays short at any rate. */
static const char *count(double n, char *buf, size_t len)
{
	if (n >= 1e9)
		snprintf(buf, len, "%.2fG", n / 1e9);
	else if (n >= 1e6)
		snprintf(buf, len, "%.2fM", n / 1e6);
	else if (n >= 1e4)
		snprintf(buf, len, "%.1fk", n / 1e3);
	else
		snprintf(buf, len, "%.0f", n);
	return buf;
}

void capture__status(struct capture *c)
{
	const struct bp_session *s = c->s;
	char calls[32], rate[32], samples[64] = "", slow[48] = "", drop[64] = "";
	double total, recent, limit, dt;
	uint64_t now;
	size_t ndrop;

	if (!status__due())
		return;
	now = now_ns(CLOCK_MONOTONIC);
	dt = (now - (c->st_time ? c->st_time : s->t0)) / 1e9;
	capture__slowdown(c, &total, &recent, &limit);
	if (recent || total)
		snprintf(slow, sizeof(slow), ", ~%.2fx slower", recent ? recent : total);
	if (s->nsamples) {
		char n[32], r[32];

		snprintf(samples, sizeof(samples), ", %s samples (%s/s)",
			 count(s->nsamples, n, sizeof(n)),
			 count(dt > 0 ? (s->nsamples - c->st_samples) / dt : 0, r, sizeof(r)));
	}
	ndrop = governor__ndropped(c->gov);
	if (ndrop)
		snprintf(drop, sizeof(drop), ", %zu function%s dropped", ndrop, ndrop == 1 ? "" : "s");
	status__show("bpfprof: %.1f s, %s calls (%s/s)%s, %llu lost%s%s",
		     now > s->t0 ? (now - s->t0) / 1e9 : 0, count(s->ncalls, calls, sizeof(calls)),
		     count(dt > 0 ? (s->ncalls - c->st_calls) / dt : 0, rate, sizeof(rate)),
		     samples, (unsigned long long)s->lost_total, slow, drop);
	c->st_time = now;
	c->st_calls = s->ncalls;
	c->st_samples = s->nsamples;
}
