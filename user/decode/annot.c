// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Annotations: bpfprof.h marks, events, infos and spans, and -U probes, from
 * the USDT records; spans become calls of a "[span]" function.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "base/log.h"
#include "symbols/symbolize.h"
#include "symbols/ustrings.h"
#include "internal.h"

/* The session function standing for span `name` (created on first use). */
static uint32_t span_func(struct decoder *d, const char *name)
{
	struct bp_func f = { .nparams = -1, .flags = BP_FUNC_SPAN };
	size_t i;

	for (i = 0; i < d->nspans; i++)
		if (!strcmp(d->spans[i].name, name))
			return d->spans[i].func;
	f.name = (char *)name;
	f.module = session__add_module(d->s, "[span]");
	d->spans = xrealloc(d->spans, (d->nspans + 1) * sizeof(*d->spans));
	d->spans[d->nspans].name = xstrdup(name);
	d->spans[d->nspans].func = session__add_func(d->s, &f);
	return d->spans[d->nspans++].func;
}

/*
 * The record's two strings, NUL-terminated in @s0 and @s1 (BP_USDT_STR + 1
 * bytes each), those the program never touched read from the file or the
 * process; returns the mask of the arguments they came from (a -U probe's
 * string arguments; 0 for the others, whose strings are the first two).
 */
static uint32_t usdt_strings(struct decoder *d, const struct bp_rec_usdt *r, uint32_t pid,
			     char *s0, char *s1)
{
	uint32_t i, mask = 0, at[2] = { 0, 1 }, nat = 0;

	memcpy(s0, r->s0, BP_USDT_STR);
	s0[BP_USDT_STR] = 0;
	memcpy(s1, r->s1, BP_USDT_STR);
	s1[BP_USDT_STR] = 0;
	/* which arguments s0/s1 came from: a -U probe's string arguments, else the first two */
	if (r->h.flags == BP_USDT_OTHER) {
		mask = BP_USDT_STR_ARGS(r->cookie);
		for (i = 0; i < 6 && i < r->nargs && nat < BP_USDT_MAX_STR_ARGS; i++)
			if (mask & (1u << i))
				at[nat++] = i;
		mask = 0;
		for (i = 0; i < nat; i++)
			mask |= 1u << at[i];
	}
	/* strings on pages the program never touched: from the file or the process */
	if ((r->unread & BP_USDT_S0_UNREAD) && d->strings && r->nargs > at[0])
		ustrings__read(d->strings, pid, (uint64_t)r->args[at[0]], &r->where[0], s0,
			       BP_USDT_STR + 1);
	if ((r->unread & BP_USDT_S1_UNREAD) && d->strings && r->nargs > at[1])
		ustrings__read(d->strings, pid, (uint64_t)r->args[at[1]], &r->where[1], s1,
			       BP_USDT_STR + 1);
	return mask;
}

/* An info probe (key and value): merged into the innermost open call; dropped outside any. */
static void usdt_info(struct tstate *t, const struct bp_rec_usdt *r, const char *s0,
		      const char *s1)
{
	struct bp_info *in;

	if (!t->depth)
		return;
	if (t->ninfos == t->infos_cap) {
		t->infos_cap = t->infos_cap ? t->infos_cap * 2 : 8;
		t->infos = xrealloc(t->infos, t->infos_cap * sizeof(*t->infos));
	}
	in = &t->infos[t->ninfos++];
	memset(in, 0, sizeof(*in));
	snprintf(in->key, sizeof(in->key), "%.63s", s0);
	if (r->h.flags == BP_USDT_INFO_STR) {
		in->is_str = 1;
		snprintf(in->str, sizeof(in->str), "%.63s", s1);
	} else {
		in->value = r->nargs > 1 ? r->args[1] : 0;
	}
}

/*
 * A mark, event, capture start/stop or -U probe: an annotation event on the
 * thread's innermost open call (@mask: usdt_strings' string arguments).
 */
static int usdt_annot(struct decoder *d, struct tstate *t, const struct bp_rec_usdt *r,
		      uint64_t ts, const char *s0, const char *s1, uint32_t mask)
{
	struct bp_event ev = { .kind = BP_EV_ANNOT };
	struct bp_annot *a = &ev.annot;
	uint32_t i;

	a->ts = ts;
	a->pid = r->h.pid_tgid >> 32;
	a->tid = (uint32_t)r->h.pid_tgid;
	a->call = t->depth ? t->stack[t->depth - 1].id : 0;
	a->nargs = r->nargs > 6 ? 6 : r->nargs;
	for (i = 0; i < 6; i++)
		a->args[i] = r->args[i];
	switch (r->h.flags) {
	case BP_USDT_MARK:
		a->kind = BP_ANNOT_MARK;
		snprintf(a->name, sizeof(a->name), "%.63s", s0);
		break;
	case BP_USDT_EVENT:
		a->kind = BP_ANNOT_EVENT;
		snprintf(a->name, sizeof(a->name), "%.63s", s0);
		a->value = r->nargs > 1 ? r->args[1] : 0;
		break;
	case BP_USDT_START:
		a->kind = BP_ANNOT_START;
		snprintf(a->name, sizeof(a->name), "capture start");
		break;
	case BP_USDT_STOP:
		a->kind = BP_ANNOT_STOP;
		snprintf(a->name, sizeof(a->name), "capture stop");
		break;
	default:
		a->kind = BP_ANNOT_PROBE;
		i = BP_USDT_INDEX(r->cookie);
		snprintf(a->name, sizeof(a->name), "%s",
			 i < d->s->nprobes ? d->s->probes[i] : "usdt");
		a->value = r->args[0];
		a->str_args = mask;
		snprintf(a->strs[0], sizeof(a->strs[0]), "%.63s", s0);
		snprintf(a->strs[1], sizeof(a->strs[1]), "%.63s", s1);
		break;
	}
	d->s->nannots++;
	return d->sink(d->ctx, &ev);
}

int dec_on_usdt(struct decoder *d, const struct bp_rec_usdt *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	struct tstate *t = dec_thread_state(d, tid, pid, ts);
	char s0[BP_USDT_STR + 1], s1[BP_USDT_STR + 1];
	uint32_t i, func, mask;
	int err = 0;

	mask = usdt_strings(d, r, pid, s0, s1);
	switch (r->h.flags) {
	case BP_USDT_INFO:
	case BP_USDT_INFO_STR:
		usdt_info(t, r, s0, s1);
		break;
	case BP_USDT_SPAN_BEGIN:
		/* a span is a frame: it nests with the calls around and inside it */
		func = span_func(d, s0[0] ? s0 : "[span]");
		dec_push(d, t, func, ts, r->sp, d->next_id++, false);
		break;
	case BP_USDT_SPAN_END:
		func = span_func(d, s0[0] ? s0 : "[span]");
		for (i = t->depth; i-- > 0;) {
			if (t->stack[i].func != func)
				continue;
			/* calls still open inside the span end with it */
			while (t->depth > i + 1 && !err)
				err = dec_pop_emit(d, t, ts, BP_CALL_UNWOUND);
			if (!err)
				err = dec_pop_emit(d, t, ts, 0);
			break;
		}
		break;
	case BP_USDT_MARK:
	case BP_USDT_EVENT:
	case BP_USDT_START:
	case BP_USDT_STOP:
	case BP_USDT_OTHER:
		err = usdt_annot(d, t, r, ts, s0, s1, mask);
		break;
	default:
		return -EINVAL;
	}
	if (ts > t->last_ts)
		t->last_ts = ts;
	return err;
}
