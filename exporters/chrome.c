// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Chrome Trace Event Format, JSON Object form, streamed: the header at
 * begin(), one complete ("X") event per call as it ends, the metadata that
 * names processes and threads at end(), when the names are final.  Perfetto
 * and chrome://tracing sort events themselves, so the order calls end in
 * (children before parents) does not matter.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include "exporter.h"
#include "base/json.h"
#include "model/argsig.h"
#include "base/log.h"

#include "chrome.h"
#include "model/coro.h"


/*
 * What the JSON viewers open (README, "Viewer limits"): chrome://tracing
 * stops near 256 MB or about a million events; the Perfetto UI reads JSON
 * up to about 1 GB but calls it best effort.  Past either, the trace is
 * written all the same and the user is told to use Perfetto's own format.
 */
#define JSON_WARN_BYTES		(256ULL << 20)
#define JSON_WARN_EVENTS	1000000ULL

/* Starts an array element on its own line, so the file reads and greps well. */
static void sep(struct exporter *e)
{
	struct chrome_priv *p = e->priv;

	fputs(p->need_comma ? ",\n" : "\n", e->out);
	p->need_comma = true;
	p->nevents++;
}

static int chrome_begin(struct exporter *e, const struct bp_session *s)
{
	FILE *f = e->out;

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"version\":\"bpfprof 0.1\",\"command\":",
	      f);
	json_str(f, s->cmdline);
	fputs(",\"hostname\":", f);
	json_str(f, s->hostname);
	fputs(",\"kernel\":", f);
	json_str(f, s->kernel);
	fputs("},\"traceEvents\":[", f);
	return 0;
}

/* Formats a JSON string through json_str() into a malloc'd buffer. */
static char *escaped(const char *fmt_before, const char *str, const char *after)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	fputs(fmt_before, m);
	json_str(m, str);
	fputs(after, m);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int cache_func(struct chrome_priv *p, const struct bp_session *s, uint32_t func)
{
	size_t n = p->nhead, i;

	if (func < n && p->head[func])
		return 0;
	if (func >= n) {
		size_t want = n ? n : 64;
		char **h, **t;

		while (want <= func)
			want *= 2;
		h = realloc(p->head, want * sizeof(*h));
		if (!h)
			return -ENOMEM;
		p->head = h;
		t = realloc(p->tail, want * sizeof(*t));
		if (!t)
			return -ENOMEM;
		p->tail = t;
		for (i = n; i < want; i++)
			p->head[i] = p->tail[i] = NULL;
		p->nhead = want;
	}
	p->head[func] = escaped("{\"name\":", session__func_name(s, func),
				func < s->nfuncs && (s->funcs[func].flags & BP_FUNC_SPAN) ?
				",\"cat\":\"span\",\"ph\":\"X\",\"ts\":" :
				",\"cat\":\"call\",\"ph\":\"X\",\"ts\":");
	if (func < s->nfuncs && s->funcs[func].module < s->nmodules)
		p->tail[func] = escaped(",\"module\":", session__func_module(s, func), "");
	else
		p->tail[func] = calloc(1, 1);
	return p->head[func] && p->tail[func] ? 0 : -ENOMEM;
}

/* One typed value as JSON: numbers and booleans as such, the rest as strings. */
static void json_argval(FILE *f, const struct argval *a)
{
	switch (a->vt) {
	case AV_INT:
		fprintf(f, "%" PRId64, a->i);
		break;
	case AV_UINT:
		fprintf(f, "%" PRIu64, a->u);
		break;
	case AV_BOOL:
		fputs(a->u ? "true" : "false", f);
		break;
	case AV_DOUBLE:
		if (isfinite(a->d))	/* argsig's text: %.17g, with ".0" if integral */
			fputs(a->text, f);
		else
			json_str(f, a->text);
		break;
	case AV_STR:
		json_str(f, a->str);
		break;
	case AV_STRUCT:
		fputc('{', f);
		for (int i = 0; i < a->nmem; i++) {
			struct argval m = { .vt = a->mem[i].vt, .i = a->mem[i].i, .u = a->mem[i].u,
					    .d = a->mem[i].d };

			snprintf(m.str, sizeof(m.str), "%s", a->mem[i].text);
			snprintf(m.text, sizeof(m.text), "%s", a->mem[i].text);
			fprintf(f, "%s", i ? "," : "");
			json_str(f, a->mem[i].name);
			fputc(':', f);
			json_argval(f, &m);
		}
		fputc('}', f);
		break;
	default:	/* pointers in hex, and what was not captured: said */
		json_str(f, a->text);
		break;
	}
}

/*
 * --args, typed from DWARF: "params" {name: value}, "return", and "call",
 * the call as C writes it.  Without DWARF the registers stay raw ("arg",
 * "ret" below) and "arg_regs" says so.
 */
static void write_typed(FILE *f, const struct bp_session *s, const struct bp_call *c)
{
	static struct argvals av;
	static char line[4096];

	argsig__values(s, c, &av);
	if (!av.typed) {
		fputs(",\"arg_regs\":\"raw (no DWARF)\"", f);
		return;
	}
	if (av.has_args) {
		fputs(",\"params\":{", f);
		for (int i = 0; i < av.n; i++) {
			if (i)
				fputc(',', f);
			json_str(f, av.v[i].name[0] ? av.v[i].name : "?");
			fputc(':', f);
			json_argval(f, &av.v[i]);
		}
		fputc('}', f);
	}
	if (av.has_ret) {
		fputs(",\"return\":", f);
		json_argval(f, &av.ret);
	}
	argsig__line(&av, s->funcs[c->func].name, line, sizeof(line));
	fputs(",\"call\":", f);
	json_str(f, line);
}

static int write_call(struct exporter *e, const struct bp_session *s, const struct bp_call *c)
{
	struct chrome_priv *pr = e->priv;
	/* A clock oddity must not become a 584-year duration. */
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;
	char line[512], *p = line;
	size_t hl, tl;
	int err;

	err = cache_func(pr, s, c->func);
	if (err)
		return err;
	hl = strlen(pr->head[c->func]);
	tl = strlen(pr->tail[c->func]);
	if (hl + tl + 256 > sizeof(line)) {	/* a very long (C++) name: the slow path */
		sep(e);
		fputs(pr->head[c->func], e->out);
		json_us(e->out, c->begin);
		fputs(",\"dur\":", e->out);
		json_us(e->out, dur);
		fprintf(e->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"depth\":%" PRIu32
			",\"self_us\":", c->pid, c->tid, c->depth);
		json_us(e->out, c->self);
		fprintf(e->out, ",\"id\":%" PRIu64 "%s", c->id, pr->tail[c->func]);
	} else {
		p = put_str(p, pr->need_comma ? ",\n" : "\n");
		pr->need_comma = true;
		pr->nevents++;
		memcpy(p, pr->head[c->func], hl);
		p += hl;
		p = put_us(p, c->begin);
		p = put_str(p, ",\"dur\":");
		p = put_us(p, dur);
		p = put_pid_tid(p, c->pid, c->tid);
		p = put_str(p, ",\"args\":{\"depth\":");
		p = put_u64(p, c->depth);
		p = put_str(p, ",\"self_us\":");
		p = put_us(p, c->self);
		p = put_str(p, ",\"id\":");
		p = put_u64(p, c->id);
		memcpy(p, pr->tail[c->func], tl);
		p += tl;
		fwrite_unlocked(line, 1, p - line, e->out);
	}
	if (c->flags & BP_CALL_UNFINISHED)
		fputs(",\"unfinished\":true", e->out);
	if (c->flags & BP_CALL_NO_ENTRY)
		fputs(",\"began_before_recording\":true", e->out);
	if (c->flags & BP_CALL_ENTRY_LOST)
		fputs(",\"entry_lost\":true", e->out);
	if (c->flags & BP_CALL_UNWOUND)
		fputs(",\"unwound\":true", e->out);
	if (c->flags & (BP_CALL_NO_RETPROBE | BP_CALL_DROPPED))
		fputs(",\"end_inferred\":true", e->out);
	if (c->flags & BP_CALL_SUSPENDED)
		fputs(",\"suspended\":true", e->out);
	if (c->flags & BP_CALL_RESUMED)
		fputs(",\"resumed\":true", e->out);
	if (c->flags & BP_CALL_RAISED)
		fputs(",\"raised\":true", e->out);
	if (c->flags & (BP_CALL_HAS_ARGS | BP_CALL_HAS_RET))
		write_typed(e->out, s, c);
	if (c->flags & BP_CALL_HAS_ARGS)
		fprintf(e->out, ",\"arg\":[\"%#" PRIx64 "\",\"%#" PRIx64 "\",\"%#" PRIx64 "\",\"%#" PRIx64
			"\",\"%#" PRIx64 "\",\"%#" PRIx64 "\"]", c->args[0], c->args[1], c->args[2], c->args[3],
			c->args[4], c->args[5]);
	if (c->flags & BP_CALL_HAS_RET)
		fprintf(e->out, ",\"ret\":\"%#" PRIx64 "\"", c->ret);
	/* BPFPROF_INFO keys join the call's args; a repeated key keeps its last value */
	for (uint32_t i = 0; i < c->ninfos; i++) {
		const struct bp_info *in = &c->infos[i];
		uint32_t j;

		for (j = i + 1; j < c->ninfos && strcmp(c->infos[j].key, in->key); j++)
			;
		if (j < c->ninfos)
			continue;
		fputc(',', e->out);
		json_str(e->out, in->key);
		fputc(':', e->out);
		if (in->is_str)
			json_str(e->out, in->str);
		else
			fprintf(e->out, "%" PRId64, in->value);
	}
	fputs_unlocked("}}", e->out);
	return 0;
}

/* A global instant event: a vertical line across every track marks the gap. */
static void write_loss(struct exporter *e, const struct bp_loss *l)
{
	FILE *f = e->out;

	sep(e);
	fprintf(f, "{\"name\":\"lost %" PRIu64 " records\",\"cat\":\"loss\",\"ph\":\"i\","
		"\"s\":\"g\",\"ts\":", l->count);
	json_us(f, l->ts);
	fprintf(f, ",\"pid\":0,\"tid\":0,\"args\":{\"cpu\":%" PRIu32 ",\"count\":%" PRIu64 "}}",
		l->cpu, l->count);
}

/*
 * A stack sample: on-cpu ones are thread-scoped instant events named after
 * the leaf function; off-cpu intervals are slices ("[off-cpu] leaf") on the
 * thread's track, so blocked time shows inside the calls that blocked.  The
 * stack (outermost first) is in args.stack.
 */
static int write_sample(struct exporter *e, const struct bp_session *s, const struct bp_sample *sm)
{
	struct chrome_priv *pr = e->priv;
	uint32_t funcs[256];
	size_t n = session__path_funcs(s, sm->path, funcs, 256), i;
	bool off = sm->flags & BP_SAMPLE_F_OFFCPU;
	FILE *f = e->out;
	char name[600];

	sep(e);
	(void)pr;
	/* off-cpu: named after where the program blocked, its innermost user frame */
	i = n;
	if (off)
		while (i > 1 && funcs[i - 1] < s->nfuncs && (s->funcs[funcs[i - 1]].flags & BP_FUNC_KERNEL))
			i--;
	snprintf(name, sizeof(name), "%s%s", off ? "[off-cpu] " : "",
		 i ? session__func_name(s, funcs[i - 1]) : "[no stack]");
	fputs("{\"name\":", f);
	json_str(f, name);
	fprintf(f, ",\"cat\":\"%s\",\"ph\":\"%s\",", off ? "offcpu" : "sample", off ? "X" : "i");
	if (!off)
		fputs("\"s\":\"t\",", f);
	fputs("\"ts\":", f);
	json_us(f, sm->ts);
	if (off) {
		fputs(",\"dur\":", f);
		json_us(f, sm->weight);
	}
	fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"weight_us\":", sm->pid,
		sm->tid);
	json_us(f, sm->weight);
	if (sm->flags & BP_SAMPLE_F_TRUNCATED)
		fputs(",\"truncated\":true", f);
	fputs(",\"stack\":[", f);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_str(f, session__func_name(s, funcs[i]));
	}
	fputs("]}}", f);
	return 0;
}

/*
 * A dependency edge as a flow: "s" on the source thread at the cause, "f"
 * with "bp":"e" on the destination thread where the effect starts, so
 * Perfetto and chrome://tracing bind each end to the enclosing call slice
 * and draw the arrow.  Flow ids only need to be unique within the file.
 */
static int write_edge(struct exporter *e, const struct bp_session *s, const struct bp_edge *ed)
{
	struct chrome_priv *pr = e->priv;
	const char *kind = session__edge_kind(ed->kind);
	uint64_t id = ++pr->nflows;
	FILE *f = e->out;

	sep(e);
	fprintf(f, "{\"name\":\"%s\",\"cat\":\"edge\",\"ph\":\"s\",\"id\":%" PRIu64 ",\"ts\":",
		kind, id);
	json_us(f, ed->src_ts);
	fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"from\":", ed->src_pid,
		ed->src_tid);
	json_str(f, session__func_name(s, ed->src_func));
	fprintf(f, ",\"from_id\":%" PRIu64 ",\"to\":", ed->src_call);
	json_str(f, session__func_name(s, ed->dst_func));
	fprintf(f, ",\"to_id\":%" PRIu64, ed->dst_call);
	if (ed->kind == BP_EDGE_DATA)
		fprintf(f, ",\"value\":\"%#" PRIx64 "\"", ed->value);
	if (ed->kind == BP_EDGE_WAKEUP) {
		fputs(",\"latency_us\":", f);
		json_us(f, ed->dst_ts > ed->src_ts ? ed->dst_ts - ed->src_ts : 0);
	}
	fputs("}}", f);
	sep(e);
	fprintf(f, "{\"name\":\"%s\",\"cat\":\"edge\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64
		",\"ts\":", kind, id);
	json_us(f, ed->dst_ts);
	fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 "}", ed->dst_pid, ed->dst_tid);
	return 0;
}

/*
 * Annotations: instant events on the thread; an event's value also feeds a
 * counter track named after it ("ph":"C"), so a numeric series plots.
 */
static int write_annot(struct exporter *e, const struct bp_annot *a)
{
	static const char *const cat[] = { "", "mark", "event", "capture", "capture", "usdt",
					   "governor" };
	FILE *f = e->out;
	uint32_t i;

	sep(e);
	fputs("{\"name\":", f);
	json_str(f, a->name);
	/* a drop concerns the whole recording: a global instant, a line across every track */
	fprintf(f, ",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"%s\",\"ts\":",
		a->kind < 7 ? cat[a->kind] : "usdt", a->kind == BP_ANNOT_DROP ? "g" : "t");
	json_us(f, a->ts);
	fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{", a->pid, a->tid);
	if (a->kind == BP_ANNOT_EVENT)
		fprintf(f, "\"value\":%" PRId64 ",", a->value);
	if (a->kind == BP_ANNOT_DROP)
		fprintf(f, "\"calls_per_s\":%" PRId64 ",\"calls\":%" PRId64 ",\"overhead_pct\":%"
			PRId64 ",", a->args[0], a->args[1], a->args[2]);
	if (a->kind == BP_ANNOT_PROBE) {
		uint32_t nstr = 0;

		fputs("\"args\":[", f);
		for (i = 0; i < a->nargs && i < 6; i++) {
			if (i)
				fputc(',', f);
			if ((a->str_args & (1u << i)) && nstr < 2)
				json_str(f, a->strs[nstr++]);	/* -U ...(str): the string */
			else
				fprintf(f, "%" PRId64, a->args[i]);
		}
		fputs("],", f);
	}
	fprintf(f, "\"call_id\":%" PRIu64 "}}", a->call);
	if (a->kind == BP_ANNOT_EVENT) {
		sep(e);
		fputs("{\"name\":", f);
		json_str(f, a->name);
		fputs(",\"cat\":\"event\",\"ph\":\"C\",\"ts\":", f);
		json_us(f, a->ts);
		fprintf(f, ",\"pid\":%" PRIu32 ",\"args\":{", a->pid);
		json_str(f, a->name);
		fprintf(f, ":%" PRId64 "}}", a->value);
	}
	return 0;
}

/* chrome_coro.c's way to the line writer and the name cache */
void chrome_sep(struct exporter *e)
{
	sep(e);
}

int chrome_cache_func(struct chrome_priv *p, const struct bp_session *s, uint32_t func)
{
	return cache_func(p, s, func);
}

static int chrome_event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	switch (ev->kind) {
	case BP_EV_CALL: {
		int err = write_call(e, s, &ev->call);

		return err ? err : chrome_coro_call(e, s, &ev->call);
	}
	case BP_EV_LOSS:
		write_loss(e, &ev->loss);
		break;
	case BP_EV_SAMPLE:
		return write_sample(e, s, &ev->sample);
	case BP_EV_EDGE:
		if (ev->edge.kind == BP_EDGE_RESUME && ((struct chrome_priv *)e->priv)->coro)
			coro__edge(((struct chrome_priv *)e->priv)->coro, &ev->edge);
		return write_edge(e, s, &ev->edge);
	case BP_EV_ANNOT:
		if (ev->annot.kind == BP_ANNOT_TASK) {
			chrome_coro_annot(e, &ev->annot);	/* a track, not an instant */
			return 0;
		}
		return write_annot(e, &ev->annot);
	default:
		/* Kinds this format has no picture for yet are not an error. */
		break;
	}
	return 0;
}

static void warn_size(struct exporter *e)
{
	struct chrome_priv *p = e->priv;
	off_t bytes = e->out == stdout ? -1 : ftello(e->out);
	const char *name = e->out == stdout ? "the trace" : e->path;

	if (p->nevents <= JSON_WARN_EVENTS && (bytes < 0 || (uint64_t)bytes <= JSON_WARN_BYTES))
		return;
	if (bytes >= 0)
		p_warn("%s holds %" PRIu64 " events in %.0f MB of JSON: chrome://tracing stops near "
		       "1 M events or 256 MB, the Perfetto UI near 1 GB; Perfetto's own format opens "
		       "at this size: -o trace.pftrace", name, p->nevents, bytes / 1e6);
	else
		p_warn("%s holds %" PRIu64 " events of JSON: chrome://tracing stops near 1 M events, "
		       "the Perfetto UI near 1 GB; Perfetto's own format opens at this size: "
		       "-o trace.pftrace", name, p->nevents);
}

static int chrome_end(struct exporter *e, const struct bp_session *s)
{
	FILE *f = e->out;
	char name[sizeof(s->threads[0].name) + 1];
	size_t i;

	chrome_coro_end(e, s);
	for (i = 0; i < s->nprocs; i++) {
		const struct bp_process *p = &s->procs[i];

		sep(e);
		fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRIu32
			",\"tid\":0,\"args\":{\"name\":", p->pid);
		if (p->name && p->name[0])
			json_str(f, p->name);
		else
			fprintf(f, "\"pid %" PRIu32 "\"", p->pid);
		fputs("}}", f);
	}
	for (i = 0; i < s->nthreads; i++) {
		const struct bp_thread *t = &s->threads[i];

		/* comm is 16 bytes and need not be NUL-terminated when full. */
		memcpy(name, t->name, sizeof(t->name));
		name[sizeof(t->name)] = '\0';
		sep(e);
		fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%" PRIu32
			",\"tid\":%" PRIu32 ",\"args\":{\"name\":", t->pid, t->tid);
		if (name[0])
			json_str(f, name);
		else
			fprintf(f, "\"tid %" PRIu32 "\"", t->tid);
		fputs("}}", f);
	}
	fputs("\n]", f);
	/* how durations were measured: written last, when the recording knows it */
	fputs(",\"bpfprofTiming\":", f);
	if (s->timing)
		json_str(f, s->timing);
	else
		fputs("\"raw clock\"", f);
	fputs("}\n", f);
	warn_size(e);
	return 0;
}

static void chrome_free(struct exporter *e)
{
	struct chrome_priv *p = e->priv;
	size_t i;

	for (i = 0; p && i < p->nhead; i++) {
		free(p->head[i]);
		free(p->tail[i]);
	}
	if (p) {
		free(p->head);
		free(p->tail);
		coro__free(p->coro);
	}
}

const struct exporter_ops chrome_exporter = {
	.name = "chrome",
	.suffix = ".json",
	.help = "Chrome Trace Event JSON (Perfetto, chrome://tracing)",
	.priv_size = sizeof(struct chrome_priv),
	.begin = chrome_begin,
	.event = chrome_event,
	.end = chrome_end,
	.free = chrome_free,
};
