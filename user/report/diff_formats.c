// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff: the comparison as data (diff_print.c prints the pretty tables):
 * JSON, CSV and differential folded stacks.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/escape.h"
#include "base/json.h"
#include "base/log.h"
#include "base/util.h"
#include "diff.h"
#include "stats.h"
#include "internal.h"

static void json_num(FILE *f, double v)
{
	if (isnan(v))
		fputs("null", f);
	else if (isinf(v))
		fputs(v > 0 ? "1e308" : "-1e308", f);
	else
		fprintf(f, "%.6g", v);
}

static void json_side_hdr(const struct diff *d, FILE *f, int i)
{
	const struct side *sd = &d->side[i];

	fprintf(f, "{\"file\":");
	json_str(f, sd->label);
	fprintf(f, ",\"command\":");
	json_str(f, sd->cmdline);
	fprintf(f, ",\"duration_ns\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"samples\":%" PRIu64
		",\"lost\":%" PRIu64 "}", sd->duration, sd->ncalls, sd->nsamples, sd->lost);
}

/*
 * A side's percentile, "%s"-ready: none (JSON null, CSV empty, pretty "-")
 * without a timed call (the function absent on that side, or its calls
 * unfinished), not 0 ns.
 */
static const char *quantile(const struct side_func *x, uint64_t q, const char *none,
			    char *buf, size_t len)
{
	if (!x->res.n)
		return none;
	snprintf(buf, len, "%" PRIu64, q);
	return buf;
}

static void json_fside(FILE *f, const struct side_func *x)
{
	char b[3][24];

	fprintf(f, "{\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
		",\"p50_ns\":%s,\"p90_ns\":%s,\"p99_ns\":%s,\"timed_calls\":%" PRIu64 "}",
		x->calls, x->total, x->self, quantile(x, x->p50, "null", b[0], sizeof(b[0])),
		quantile(x, x->p90, "null", b[1], sizeof(b[1])),
		quantile(x, x->p99, "null", b[2], sizeof(b[2])), x->res.seen);
}

static void json_pathnames(const struct diff *d, FILE *f, uint32_t p)
{
	uint32_t frames[512];
	size_t n = 0;

	for (; p && n < 512; p = d->dp[p].parent)
		frames[n++] = p;
	fputc('[', f);
	while (n--) {
		json_str(f, d->gf[d->dp[frames[n]].func].name);
		if (n)
			fputc(',', f);
	}
	fputc(']', f);
}

static void visit_json(struct diff *d, FILE *f, uint32_t p, size_t depth, bool first)
{
	const struct side_path *x = &d->side[0].paths[p], *y = &d->side[1].paths[p];

	fprintf(f, "%s{\"path\":", first ? "" : ",");
	json_pathnames(d, f, p);
	fprintf(f, ",\"base\":{\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
		"},\"new\":{\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
		"},\"delta_total_ns\":%" PRId64 ",\"delta_self_ns\":%" PRId64 "}\n", x->calls,
		x->total, x->self, y->calls, y->total, y->self, (int64_t)(y->total - x->total),
		(int64_t)(y->self - x->self));
}

void diff_print_json(struct diff *d, FILE *f)
{
	size_t i;

	fprintf(f, "{\"mode\":\"%s\",\"base\":", d->mode == DIFF_CALLS ? "calls" : "samples");
	json_side_hdr(d, f, 0);
	fprintf(f, ",\"new\":");
	json_side_hdr(d, f, 1);
	fprintf(f, ",\"alpha\":");
	json_num(f, d->o.alpha);
	fprintf(f, ",\"min_change\":");
	json_num(f, d->o.min_change);
	fprintf(f, ",\"test\":\"%s\",\"correction\":\"holm\",\"runs\":{\"base\":%u,\"new\":%u}",
		d->mode != DIFF_CALLS ? "two-proportion" : d->by_runs ? "welch-t-across-runs" :
		"mann-whitney", d->side[0].nruns, d->side[1].nruns);
	if (d->mode == DIFF_CALLS) {
		fprintf(f, ",\"calls_tested\":\"%s\",\"run_shift\":",
			d->o.all_calls ? "all" : "faster-half");
		json_num(f, d->g_known ? exp(d->g) : NAN);
		fprintf(f, ",\"run_shift_ci_low\":");
		json_num(f, d->g_known ? exp(d->g_lo) : NAN);
		fprintf(f, ",\"run_shift_ci_high\":");
		json_num(f, d->g_known ? exp(d->g_hi) : NAN);
		fprintf(f, ",\"run_shift_p\":");
		json_num(f, d->g_known ? d->g_p : NAN);
		fprintf(f, ",\"run_shift_functions\":%zu", d->g_known ? d->g_n : 0);
	}
	fprintf(f, ",\n\"functions\":[\n");
	for (i = 0; i < d->nrows; i++) {
		const struct frow *r = &d->rows[i];
		const struct gfunc *g = &d->gf[r->func];

		fprintf(f, "%s{\"function\":", i ? "," : "");
		json_str(f, g->name);
		fprintf(f, ",\"module\":");
		json_str(f, g->module);
		fprintf(f, ",\"status\":\"%s\",\"base\":",
			(d->mode == DIFF_CALLS ? verdict_name : verdict_name_samples)[r->v]);
		if (d->mode == DIFF_CALLS) {
			json_fside(f, &d->side[0].funcs[r->func]);
			fprintf(f, ",\"new\":");
			json_fside(f, &d->side[1].funcs[r->func]);
			fprintf(f, ",\"p50_ratio\":");
			json_num(f, r->ratio);
			fprintf(f, ",\"shift_ratio\":");
			json_num(f, r->shift);
			fprintf(f, ",\"raw_shift_ratio\":");
			json_num(f, r->raw_shift);
			fprintf(f, ",\"ci_low\":");
			json_num(f, r->ci_lo);
			fprintf(f, ",\"ci_high\":");
			json_num(f, r->ci_hi);
		} else {
			const struct side_func *x = &d->side[0].funcs[r->func];
			const struct side_func *y = &d->side[1].funcs[r->func];

			fprintf(f, "{\"self_samples\":%" PRIu64 ",\"total_samples\":%" PRIu64
				",\"self_share\":", x->samp_self, x->samp_total);
			json_num(f, r->sshare[0]);
			fprintf(f, ",\"total_share\":");
			json_num(f, r->share[0]);
			fprintf(f, "},\"new\":{\"self_samples\":%" PRIu64 ",\"total_samples\":%" PRIu64
				",\"self_share\":", y->samp_self, y->samp_total);
			json_num(f, r->sshare[1]);
			fprintf(f, ",\"total_share\":");
			json_num(f, r->share[1]);
			fputc('}', f);
		}
		fprintf(f, ",\"significant\":%s,\"p_value\":",
			r->v == V_SLOWER || r->v == V_FASTER ? "true" : "false");
		json_num(f, r->p_adj);
		fprintf(f, ",\"p_raw\":");
		json_num(f, r->p_raw);
		fprintf(f, "}\n");
	}
	fprintf(f, "]");
	if (d->mode == DIFF_CALLS)
		diff_coro_json(d, f);
	if (d->mode == DIFF_CALLS && !d->o.no_paths) {
		fprintf(f, ",\n\"paths\":[\n");
		diff_walk_paths(d, f, visit_json);
		fprintf(f, "]");
	}
	if (d->mode == DIFF_SAMPLES) {
		fprintf(f, ",\n\"stacks\":[\n");
		for (i = 0; i < d->nsrows; i++) {
			const struct frow *r = &d->srows[i];

			fprintf(f, "%s{\"stack\":", i ? "," : "");
			json_pathnames(d, f, r->func);
			fprintf(f, ",\"base\":{\"samples\":%" PRIu64 ",\"share\":",
				d->side[0].paths[r->func].samples);
			json_num(f, r->share[0]);
			fprintf(f, "},\"new\":{\"samples\":%" PRIu64 ",\"share\":",
				d->side[1].paths[r->func].samples);
			json_num(f, r->share[1]);
			fprintf(f, "},\"status\":\"%s\",\"significant\":%s,\"p_value\":",
				verdict_name_samples[r->v],
				r->v == V_SLOWER || r->v == V_FASTER ? "true" : "false");
			json_num(f, r->p_adj);
			fprintf(f, "}\n");
		}
		fprintf(f, "]");
	}
	fprintf(f, "}\n");
}

static void csv_num(FILE *f, double v)
{
	if (!isnan(v))
		fprintf(f, "%.6g", v);
}

void diff_print_csv(struct diff *d, FILE *f)
{
	size_t i;

	if (d->mode == DIFF_CALLS)
		fputs("function,module,status,base_calls,new_calls,base_total_ns,new_total_ns,"
		      "base_self_ns,new_self_ns,base_p50_ns,new_p50_ns,base_p90_ns,new_p90_ns,"
		      "base_p99_ns,new_p99_ns,p50_ratio,shift_ratio,ci_low,ci_high,p_value,significant\n",
		      f);
	else
		fputs("function,module,status,base_self_samples,new_self_samples,base_total_samples,"
		      "new_total_samples,base_self_share,new_self_share,base_total_share,"
		      "new_total_share,p_value,significant\n", f);
	for (i = 0; i < d->nrows; i++) {
		const struct frow *r = &d->rows[i];
		const struct side_func *x = &d->side[0].funcs[r->func], *y = &d->side[1].funcs[r->func];

		csv_str(f, d->gf[r->func].name);
		fputc(',', f);
		csv_str(f, d->gf[r->func].module);
		fprintf(f, ",%s,", (d->mode == DIFF_CALLS ? verdict_name : verdict_name_samples)[r->v]);
		if (d->mode == DIFF_CALLS) {
			char b[6][24];

			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%s,%s,%s,%s,%s,%s,", x->calls, y->calls, x->total, y->total, x->self,
				y->self, quantile(x, x->p50, "", b[0], 24), quantile(y, y->p50, "", b[1], 24),
				quantile(x, x->p90, "", b[2], 24), quantile(y, y->p90, "", b[3], 24),
				quantile(x, x->p99, "", b[4], 24), quantile(y, y->p99, "", b[5], 24));
			const double nums[] = { r->ratio, r->shift, r->ci_lo, r->ci_hi };

			for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
				csv_num(f, nums[k]);
				fputc(',', f);
			}
		} else {
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6g,%.6g,%.6g,%.6g,",
				x->samp_self, y->samp_self, x->samp_total, y->samp_total, r->sshare[0],
				r->sshare[1], r->share[0], r->share[1]);
		}
		csv_num(f, r->p_adj);
		fprintf(f, ",%s\n", r->v == V_SLOWER || r->v == V_FASTER ? "true" : "false");
	}
}

/*
 * FlameGraph's differential input (difffolded.pl's output, flamegraph.pl's
 * input): "stack BASE NEW" per stack.  Samples: sample counts per whole
 * stack; calls: self ns per call path.
 */
void diff_print_folded(struct diff *d, FILE *f)
{
	size_t p;

	for (p = 1; p < d->ndp; p++) {
		const struct side_path *x = &d->side[0].paths[p], *y = &d->side[1].paths[p];
		uint64_t a = d->mode == DIFF_CALLS ? x->self : x->samples;
		uint64_t b = d->mode == DIFF_CALLS ? y->self : y->samples;

		if (!a && !b)
			continue;
		diff_put_path(d, f, p, true);
		fprintf(f, " %" PRIu64 " %" PRIu64 "\n", a, b);
	}
}
