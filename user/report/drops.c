// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The functions the overhead governor (--max-overhead) dropped, from their
 * BP_ANNOT_DROP annotations: in the report, record's summary and the JSON
 * report, with when they were dropped and how often they were called then.
 * Their calls up to the drop are in the tables like any other.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"
#include "base/log.h"
#include "base/util.h"
#include "internal.h"

void report_drop_add(struct report *r, const struct bp_annot *a)
{
	struct drop_row *d;

	r->drops = xrealloc(r->drops, (r->ndrops + 1) * sizeof(*r->drops));
	d = &r->drops[r->ndrops++];
	d->ts = a->ts;
	d->func = (uint32_t)a->value;
	d->rate = a->args[0] > 0 ? (uint64_t)a->args[0] : 0;
	d->calls = a->args[1] > 0 ? (uint64_t)a->args[1] : 0;
	d->pct = a->args[2] > 0 ? (uint64_t)a->args[2] : 0;
	d->distortion_pct = a->nargs > 3 && a->args[3] > 0 ? (uint64_t)a->args[3] : 0;
	/* args[4] 1: never called (the governor's GOV_WHY_COLD), args[3] its file's breakpoints' us */
	d->cold = a->nargs > 5 && a->args[4] == 1;
	if (d->cold) {
		d->install_us = d->distortion_pct;
		d->distortion_pct = 0;
		d->procs = a->args[5] > 0 ? (uint64_t)a->args[5] : 0;
	}
	/* "dropped: NAME", cut at 63 bytes: the function table has it whole */
	snprintf(d->name, sizeof(d->name), "%s",
		 strncmp(a->name, "dropped: ", 9) ? a->name : a->name + 9);
}

/* The function's whole name when the table has it (the annotation's is cut short). */
static const char *drop_name(const struct drop_row *d, const struct bp_session *s)
{
	return d->func < s->nfuncs ? session__func_name(s, d->func) : d->name;
}

static const char *drop_module(const struct drop_row *d, const struct bp_session *s)
{
	return d->func < s->nfuncs ? session__func_module(s, d->func) : "";
}

/*
 * The functions dropped as never called, a line per module: thousands of
 * them (a compiler's), every name in the JSON report.
 */
struct cold_mod {
	const char *mod;
	const struct drop_row *first;
	size_t n, k;
	const char *names[3];
};

static void cold_pretty(const struct report *r, const struct bp_session *s, FILE *f)
{
	struct cold_mod *m = NULL;
	size_t i, j, nm = 0;
	char t[32];

	for (i = 0; i < r->ndrops; i++) {
		const struct drop_row *d = &r->drops[i];
		const char *mod = drop_module(d, s);

		if (!d->cold)
			continue;
		for (j = 0; j < nm && m[j].mod != mod && strcmp(m[j].mod, mod); j++)
			;
		if (j == nm) {
			m = xrealloc(m, (nm + 1) * sizeof(*m));
			memset(&m[nm], 0, sizeof(*m));
			m[nm].mod = mod;
			m[nm++].first = d;
		}
		if (m[j].k < 3)
			m[j].names[m[j].k++] = drop_name(d, s);
		m[j].n++;
	}
	for (j = 0; j < nm; j++) {
		fprintf(f, "  %10s  %zu functions of %s never called in its first %" PRIu64
			" processes: their breakpoints cost %.1f ms per new process (",
			fmt_duration(m[j].first->ts, t, sizeof(t)), m[j].n, m[j].mod,
			m[j].first->procs, m[j].first->install_us / 1e3);
		for (i = 0; i < m[j].k; i++)
			fprintf(f, "%s%s", i ? ", " : "", m[j].names[i]);
		fprintf(f, "%s; every name in report --format json)\n", m[j].n > m[j].k ? ", ..." : "");
	}
	free(m);
}

void report_drops_pretty(const struct report *r, const struct bp_session *s, FILE *f)
{
	char t[32];
	size_t i;

	if (!r->ndrops)
		return;
	fprintf(f, "\ndropped by --max-overhead (the probes made the program slower than allowed; "
		   "calls up to the drop are counted above; 'probe/own': a call's probe cost against "
		   "its own time):\n");
	fprintf(f, "  %10s  %12s  %10s  %9s  %9s  %s\n", "at", "calls/s", "calls", "slowdown",
		"probe/own", "function");
	for (i = 0; i < r->ndrops; i++) {
		const struct drop_row *d = &r->drops[i];
		char dist[32] = "-";

		if (d->cold)
			continue;
		if (d->distortion_pct)
			snprintf(dist, sizeof(dist), "%.2g", d->distortion_pct / 100.0);
		fprintf(f, "  %10s  %12" PRIu64 "  %10" PRIu64 "  %8.*fx  %9s  %s\n",
			fmt_duration(d->ts, t, sizeof(t)), d->rate, d->calls,
			d->pct < 900 ? 1 : 0, 1 + d->pct / 100.0, dist, drop_name(d, s));
	}
	cold_pretty(r, s, f);
}

void report_drops_json(const struct report *r, const struct bp_session *s, FILE *f)
{
	size_t i;

	for (i = 0; i < r->ndrops; i++) {
		const struct drop_row *d = &r->drops[i];

		fprintf(f, "%s{\"name\":", i ? ",\n  " : "\n  ");
		json_str(f, drop_name(d, s));
		fputs(",\"module\":", f);
		json_str(f, d->func < s->nfuncs ? session__func_module(s, d->func) : "");
		fprintf(f, ",\"at_ns\":%" PRIu64 ",\"calls_per_s\":%" PRIu64 ",\"calls\":%" PRIu64
			",\"overhead_pct\":%" PRIu64 ",\"slowdown\":%.3g,\"probe_per_own_time\":%.3g",
			d->ts, d->rate, d->calls, d->pct, 1 + d->pct / 100.0, d->distortion_pct / 100.0);
		if (d->cold)
			fprintf(f, ",\"reason\":\"never called\",\"processes\":%" PRIu64
				",\"breakpoints_us_per_process\":%" PRIu64, d->procs, d->install_us);
		fputc('}', f);
	}
	if (r->ndrops)
		fputc('\n', f);
}
