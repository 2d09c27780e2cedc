// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Chrome Trace Event Format, JSON Object form, streamed: the header at
 * begin(), one complete ("X") event per call as it ends, the metadata that
 * names processes and threads at end(), when the names are final.  Perfetto
 * and chrome://tracing sort events themselves, so the order calls end in
 * (children before parents) does not matter.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "exporter.h"
#include "json.h"

struct chrome_priv {
	bool need_comma;	/* an event has been written: JSON forbids a trailing comma */
};

/* Starts an array element on its own line, so the file reads and greps well. */
static void sep(struct exporter *e)
{
	struct chrome_priv *p = e->priv;

	fputs(p->need_comma ? ",\n" : "\n", e->out);
	p->need_comma = true;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
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

static void write_call(struct exporter *e, const struct bp_session *s, const struct bp_call *c)
{
	FILE *f = e->out;
	/* A clock oddity must not become a 584-year duration. */
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;

	sep(e);
	fputs("{\"name\":", f);
	json_str(f, session__func_name(s, c->func));
	fputs(",\"cat\":\"call\",\"ph\":\"X\",\"ts\":", f);
	json_us(f, c->begin);
	fputs(",\"dur\":", f);
	json_us(f, dur);
	fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"depth\":%" PRIu32
		",\"self_us\":", c->pid, c->tid, c->depth);
	json_us(f, c->self);
	fprintf(f, ",\"id\":%" PRIu64, c->id);
	if (c->func < s->nfuncs && s->funcs[c->func].module < s->nmodules) {
		fputs(",\"module\":", f);
		json_str(f, basename_of(s->modules[s->funcs[c->func].module].path));
	}
	if (c->flags & BP_CALL_UNFINISHED)
		fputs(",\"unfinished\":true", f);
	if (c->flags & BP_CALL_NO_ENTRY)
		fputs(",\"began_before_recording\":true", f);
	if (c->flags & BP_CALL_UNWOUND)
		fputs(",\"unwound\":true", f);
	fputs("}}", f);
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

static int chrome_event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	switch (ev->kind) {
	case BP_EV_CALL:
		write_call(e, s, &ev->call);
		break;
	case BP_EV_LOSS:
		write_loss(e, &ev->loss);
		break;
	default:
		/* Kinds this format has no picture for yet are not an error. */
		break;
	}
	return 0;
}

static int chrome_end(struct exporter *e, const struct bp_session *s)
{
	FILE *f = e->out;
	char name[sizeof(s->threads[0].name) + 1];
	size_t i;

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
	fputs("\n]}\n", f);
	return 0;
}

const struct exporter_ops chrome_exporter = {
	.name = "chrome",
	.suffix = ".json",
	.help = "Chrome Trace Event JSON (Perfetto, chrome://tracing)",
	.priv_size = sizeof(struct chrome_priv),
	.begin = chrome_begin,
	.event = chrome_event,
	.end = chrome_end,
};
