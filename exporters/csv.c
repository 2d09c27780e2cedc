// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CSV, one row per call, streamed as calls end (children before parents:
 * sort by start_ns for a timeline).  Fields are quoted per RFC 4180; lines
 * end in LF, which every CSV reader accepts and line tools prefer to CRLF.
 *
 *   pid,tid,function,module,start_ns,duration_ns,depth,self_ns,id,parent_id,flags,args,return
 *
 * Times are ns since the start of the recording; module is the full path of
 * the binary or library; flags is empty or `|`-joined names: unfinished,
 * began_before_recording, entry_lost, unwound, no_retprobe (see the Chrome trace).
 * args and return (--args) are the values as C writes them, `a=0, s="x"`
 * and `1`, typed from DWARF; without DWARF the registers, `rdi=0x0, ...`;
 * empty without --args or for a void function.
 *
 * CSV has no comments, and lost records must not vanish silently, so a gap
 * is a row of its own: the function and module fields are empty, pid and
 * tid are 0, start_ns is when the loss was noticed, duration_ns 0, and flags
 * is `lost|count=N|cpu=C`.  A reader that counts calls skips rows whose
 * function is empty.  A function the overhead governor stopped tracing
 * (--max-overhead) is a row of the same kind at the moment of the drop:
 * flags `dropped_by_max_overhead|calls=N|function=NAME` (NAME's `|`, `,`,
 * `"` and line ends written as `_`); its calls before it are rows as usual.
 *
 * Stack samples and dependency edges are not rows: a CSV file is one table,
 * and theirs would need other columns (a stack, a weight; two ends and a
 * kind).  `bpfprof report --edges --format csv` writes the edges aggregated
 * (kind,from,to,count,latency_ns), `report --format json` the sampled
 * functions, and the Chrome trace every sample and edge one by one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "base/escape.h"
#include "exporter.h"
#include "model/argsig.h"

/* A function name inside the flags field: nothing that would need CSV quoting or split it. */
static void csv_flag_value(FILE *f, const char *v)
{
	for (; v && *v; v++)
		putc(*v == '|' || *v == ',' || *v == '"' || *v == '\n' || *v == '\r' ? '_' : *v, f);
}

static int csv_begin(struct exporter *e, const struct bp_session *s)
{
	fputs("pid,tid,function,module,start_ns,duration_ns,depth,self_ns,id,parent_id,flags,args,"
	      "return\n", e->out);
	return 0;
}

static void write_flags(FILE *f, uint32_t flags)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ BP_CALL_UNFINISHED, "unfinished" },
		{ BP_CALL_NO_ENTRY, "began_before_recording" },
		{ BP_CALL_ENTRY_LOST, "entry_lost" },
		{ BP_CALL_UNWOUND, "unwound" },
		{ BP_CALL_NO_RETPROBE, "no_retprobe" },
		{ BP_CALL_DROPPED, "dropped" },
		{ BP_CALL_SUSPENDED, "suspended" },
		{ BP_CALL_RESUMED, "resumed" },
		{ BP_CALL_RAISED, "raised" },
	};
	const char *sep = "";
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (flags & names[i].bit) {
			fprintf(f, "%s%s", sep, names[i].name);
			sep = "|";
		}
	}
}

/* The args and return fields. */
static void write_args(FILE *f, const struct bp_session *s, const struct bp_call *c)
{
	static struct argvals av;
	static char buf[4096];
	size_t len = 0;

	argsig__values(s, c, &av);
	buf[0] = 0;
	for (int i = 0; i < av.n && len < sizeof(buf); i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s=%s", i ? ", " : "", av.v[i].name,
				av.v[i].text);
	csv_str(f, buf);
	putc(',', f);
	if (av.has_ret)
		csv_str(f, av.ret.text);
}

static void write_call(FILE *f, const struct bp_session *s, const struct bp_call *c)
{
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;

	fprintf(f, "%" PRIu32 ",%" PRIu32 ",", c->pid, c->tid);
	csv_str(f, session__func_name(s, c->func));
	putc(',', f);
	if (c->func < s->nfuncs && s->funcs[c->func].module < s->nmodules)
		csv_str(f, s->modules[s->funcs[c->func].module].path);
	fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
		c->begin, dur, c->depth, c->self, c->id, c->parent_id);
	write_flags(f, c->flags);
	putc(',', f);
	if (c->flags & (BP_CALL_HAS_ARGS | BP_CALL_HAS_RET))
		write_args(f, s, c);
	else
		putc(',', f);
	putc('\n', f);
}

static int csv_event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	switch (ev->kind) {
	case BP_EV_CALL:
		write_call(e->out, s, &ev->call);
		break;
	case BP_EV_LOSS:
		fprintf(e->out, "0,0,,,%" PRIu64 ",0,,,,,lost|count=%" PRIu64 "|cpu=%" PRIu32 ",,\n",
			ev->loss.ts, ev->loss.count, ev->loss.cpu);
		break;
	case BP_EV_ANNOT:
		if (ev->annot.kind != BP_ANNOT_DROP)
			break;
		/* like a gap: a row of its own, no function (not a call), said in flags */
		fprintf(e->out, "0,0,,,%" PRIu64 ",0,,,,,dropped_by_max_overhead|calls=%" PRId64
			"|function=", ev->annot.ts, ev->annot.args[1]);
		csv_flag_value(e->out, session__func_name(s, (uint32_t)ev->annot.value));
		fputs(",,\n", e->out);
		break;
	default:
		break;
	}
	return 0;
}

const struct exporter_ops csv_exporter = {
	.name = "csv",
	.suffix = ".csv",
	.help = "CSV, one row per call (spreadsheets, pandas, sqlite)",
	.begin = csv_begin,
	.event = csv_event,
};
