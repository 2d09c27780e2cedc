// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Live per-(process, function) aggregates and their Prometheus exposition
 * (see metrics.h).  The format: https://prometheus.io/docs/instrumenting/exposition_formats/
 * -- one HELP and one TYPE line per family, then every sample of the family;
 * label values escape backslash, double quote and line feed; a histogram is
 * cumulative `_bucket{le=...}` samples ending with le="+Inf", then `_sum`
 * and `_count`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "metrics.h"
#include "base/utf8.h"

/* 1-2.5-5 per decade, 1 us to 10 s: the spread of function latencies. */
const uint64_t metrics_bucket_ns[METRICS_NBUCKETS] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000,
	100000000, 250000000, 500000000,
	1000000000, 2500000000, 5000000000, 10000000000,
};

/* The same bounds as Prometheus clients print them (Go's strconv 'g'). */
static const char *const bucket_le[METRICS_NBUCKETS] = {
	"1e-06", "2.5e-06", "5e-06", "1e-05", "2.5e-05", "5e-05", "0.0001", "0.00025", "0.0005",
	"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
	"0.1", "0.25", "0.5",
	"1", "2.5", "5", "10",
};

struct row {
	uint32_t pid, func;
	uint64_t calls;
	uint64_t total;		/* inclusive ns, outermost activations */
	uint64_t self;
	uint64_t sum;		/* inclusive ns of every call: the histogram's _sum */
	uint64_t buckets[METRICS_NBUCKETS + 1];	/* not cumulative; the last is +Inf */
};

struct metrics {
	struct row *rows;
	size_t nrows, cap;
	uint32_t *hash;		/* open addressing: row index + 1, 0 = empty */
	size_t hash_cap;	/* power of two, at least twice nrows */
	uint8_t *recursive;	/* per call path: 0 not known yet, 1 no, 2 yes */
	size_t nrecursive;
	uint64_t calls;
	struct metrics_drop {
		uint32_t func;
		uint64_t unix_ns;
	} *drops;		/* functions the governor dropped, in order */
	size_t ndrops;
};

int metrics__new(struct metrics **out)
{
	struct metrics *m = xcalloc(1, sizeof(*m));

	m->hash_cap = 64;
	m->hash = xcalloc(m->hash_cap, sizeof(*m->hash));
	*out = m;
	return 0;
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	free(m->rows);
	free(m->hash);
	free(m->recursive);
	free(m->drops);
	free(m);
}

void metrics__drop(struct metrics *m, uint32_t func, uint64_t unix_ns)
{
	size_t i;

	for (i = 0; i < m->ndrops; i++)
		if (m->drops[i].func == func)
			return;
	m->drops = xrealloc(m->drops, (m->ndrops + 1) * sizeof(*m->drops));
	m->drops[m->ndrops].func = func;
	m->drops[m->ndrops++].unix_ns = unix_ns;
}

static void family(FILE *f, const char *name, const char *type, const char *help);
static void metric(FILE *f, const char *name, const char *type, const char *help, uint64_t v);
static void seconds(FILE *f, uint64_t ns);

static const struct metrics_drop *dropped(const struct metrics *m, uint32_t func)
{
	size_t i;

	for (i = 0; i < m->ndrops; i++)
		if (m->drops[i].func == func)
			return &m->drops[i];
	return NULL;
}

static void func_labels(FILE *f, const struct bp_session *s, uint32_t func)
{
	fputs("{function=", f);
	metrics__label_value(f, session__func_name(s, func));
	fputs(",module=", f);
	metrics__label_value(f, session__func_module(s, func));
	fputc('}', f);
}

/*
 * Whether each function is still traced: those of the rows shown, and every
 * dropped one (with the time of the drop), so that a counter that stopped
 * because its function was dropped never reads as traffic that stopped.
 */
static void write_traced(const struct metrics *m, const struct bp_session *s,
			 const struct row *const *v, size_t n, const struct metrics_extra *x, FILE *f)
{
	uint32_t *seen = xcalloc(n + m->ndrops + 1, sizeof(*seen));
	size_t nseen = 0, i, j;

	family(f, "bpfprof_function_traced", "gauge",
	       "1: the function's calls are counted; 0: the overhead governor (--max-overhead) "
	       "dropped it, its counters stopped then (not its traffic).");
	for (i = 0; i < n + m->ndrops; i++) {
		uint32_t func = i < n ? v[i]->func : m->drops[i - n].func;

		for (j = 0; j < nseen && seen[j] != func; j++)
			;
		if (j < nseen)
			continue;
		seen[nseen++] = func;
		fputs("bpfprof_function_traced", f);
		func_labels(f, s, func);
		fprintf(f, " %d\n", dropped(m, func) ? 0 : 1);
	}
	free(seen);
	family(f, "bpfprof_function_dropped_timestamp_seconds", "gauge",
	       "When the overhead governor stopped tracing the function (Unix time).");
	for (i = 0; i < m->ndrops; i++) {
		fputs("bpfprof_function_dropped_timestamp_seconds", f);
		func_labels(f, s, m->drops[i].func);
		fputc(' ', f);
		seconds(f, m->drops[i].unix_ns);
	}
	metric(f, "bpfprof_functions_dropped", "gauge",
	       "Functions the overhead governor stopped tracing.",
	       m->ndrops);
	if (x && x->slowdown > 0) {
		family(f, "bpfprof_probe_slowdown_ratio", "gauge",
		       "Slowdown of the traced processes by the probes since the start "
		       "(1: none, 2: twice as slow): CPU time / (CPU time - probe time), the probe "
		       "time sampled in them once 100 samples are taken, estimated before.");
		fprintf(f, "bpfprof_probe_slowdown_ratio %.4g\n", x->slowdown);
	}
	if (x && x->slowdown_recent > 0) {
		family(f, "bpfprof_probe_slowdown_recent_ratio", "gauge",
		       "The same estimate over the last few seconds.");
		fprintf(f, "bpfprof_probe_slowdown_recent_ratio %.4g\n", x->slowdown_recent);
	}
	if (x && x->max_slowdown > 0) {
		family(f, "bpfprof_probe_slowdown_limit_ratio", "gauge",
		       "--max-overhead as a slowdown: the governor drops functions past it.");
		fprintf(f, "bpfprof_probe_slowdown_limit_ratio %.4g\n", x->max_slowdown);
	}
}

static size_t slot_of(uint32_t pid, uint32_t func, size_t cap)
{
	uint64_t k = ((uint64_t)pid << 32 | func) * 0x9e3779b97f4a7c15ull;

	return (k >> 32) & (cap - 1);
}

static void rehash(struct metrics *m, size_t cap)
{
	size_t i, j;

	free(m->hash);
	m->hash_cap = cap;
	m->hash = xcalloc(cap, sizeof(*m->hash));
	for (i = 0; i < m->nrows; i++) {
		for (j = slot_of(m->rows[i].pid, m->rows[i].func, cap); m->hash[j];
		     j = (j + 1) & (cap - 1))
			;
		m->hash[j] = i + 1;
	}
}

static struct row *row_of(struct metrics *m, uint32_t pid, uint32_t func)
{
	size_t j;
	struct row *r;

	for (j = slot_of(pid, func, m->hash_cap); m->hash[j]; j = (j + 1) & (m->hash_cap - 1)) {
		r = &m->rows[m->hash[j] - 1];
		if (r->pid == pid && r->func == func)
			return r;
	}
	if (m->nrows == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->rows = xrealloc(m->rows, m->cap * sizeof(*m->rows));
	}
	r = &m->rows[m->nrows++];
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->func = func;
	if (m->nrows * 2 > m->hash_cap)
		rehash(m, m->hash_cap * 2);
	else
		m->hash[j] = m->nrows;
	return r;
}

/* Is c's function already on its call path above it (a nested activation)? */
static bool nested(struct metrics *m, const struct bp_session *s, const struct bp_call *c)
{
	uint32_t p;
	size_t depth = 0;
	bool yes = false;

	if (c->path == 0 || c->path >= s->npaths)
		return false;
	if (c->path >= m->nrecursive) {
		size_t n = s->npaths > 2 * m->nrecursive ? s->npaths : 2 * m->nrecursive;

		m->recursive = xrealloc(m->recursive, n);
		memset(m->recursive + m->nrecursive, 0, n - m->nrecursive);
		m->nrecursive = n;
	}
	if (m->recursive[c->path])
		return m->recursive[c->path] == 2;
	/* Paths are interned: each is walked once, bounded by the path count. */
	for (p = s->paths[c->path].parent; p && p < s->npaths && depth < s->npaths; depth++) {
		if (s->paths[p].func == c->func) {
			yes = true;
			break;
		}
		p = s->paths[p].parent;
	}
	m->recursive[c->path] = yes ? 2 : 1;
	return yes;
}

void metrics__add_call(struct metrics *m, const struct bp_session *s, const struct bp_call *c)
{
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;
	struct row *r = row_of(m, c->pid, c->func);
	size_t b;

	r->calls++;
	r->self += c->self;
	r->sum += dur;
	if (!nested(m, s, c))
		r->total += dur;
	for (b = 0; b < METRICS_NBUCKETS && dur > metrics_bucket_ns[b]; b++)
		;
	r->buckets[b]++;
	m->calls++;
}

size_t metrics__prune(struct metrics *m, bool (*alive)(uint32_t pid, void *ctx), void *ctx)
{
	size_t i, j, gone;
	uint32_t last_pid = 0;
	bool last_alive = true;

	for (i = j = 0; i < m->nrows; i++) {
		/* rows of one process tend to sit together: ask once per run of them */
		if (i == 0 || m->rows[i].pid != last_pid) {
			last_pid = m->rows[i].pid;
			last_alive = alive(last_pid, ctx);
		}
		if (last_alive)
			m->rows[j++] = m->rows[i];
	}
	gone = m->nrows - j;
	if (gone) {
		size_t hcap = m->hash_cap;

		m->nrows = j;
		/*
		 * The tables follow the processes alive, not the most ever seen:
		 * a burst of short-lived processes (thousands between two prunes)
		 * would otherwise keep their rows' room (224 bytes each) for good.
		 */
		if (m->cap > 64 && m->nrows * 4 <= m->cap) {
			size_t cap = 64;

			while (cap < m->nrows * 2)
				cap *= 2;
			m->cap = cap;
			m->rows = xrealloc(m->rows, cap * sizeof(*m->rows));
		}
		while (hcap > 64 && m->nrows * 8 <= hcap)
			hcap /= 2;
		rehash(m, hcap);
	}
	return gone;
}

size_t metrics__rows(const struct metrics *m)
{
	return m->nrows;
}

uint64_t metrics__calls(const struct metrics *m)
{
	return m->calls;
}

void metrics__label_value(FILE *f, const char *v)
{
	const unsigned char *p = (const unsigned char *)(v ? v : "");
	int n;

	fputc('"', f);
	while (*p) {
		if (*p == '\\') {
			fputs("\\\\", f);
			p++;
		} else if (*p == '"') {
			fputs("\\\"", f);
			p++;
		} else if (*p == '\n') {
			fputs("\\n", f);
			p++;
		} else if ((n = utf8_len(p))) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fputs("\xef\xbf\xbd", f);	/* U+FFFD: Prometheus wants UTF-8 */
			p++;
		}
	}
	fputc('"', f);
}

static void labels(FILE *f, const struct bp_session *s, const struct row *r, const char *le)
{
	fputs("{function=", f);
	metrics__label_value(f, session__func_name(s, r->func));
	fputs(",module=", f);
	metrics__label_value(f, session__func_module(s, r->func));
	fprintf(f, ",pid=\"%" PRIu32 "\"", r->pid);
	if (le)
		fprintf(f, ",le=\"%s\"", le);
	fputc('}', f);
}

static void seconds(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%09" PRIu64 "\n", ns / 1000000000, ns % 1000000000);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A family of one unlabelled sample. */
static void metric(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	family(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static int by_total(const void *a, const void *b)
{
	const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

int metrics__write(struct metrics *m, const struct bp_session *s, size_t top,
		   const struct metrics_extra *x, FILE *f)
{
	static const struct {
		const char *name, *help;
		size_t off;	/* of the uint64_t in struct row */
		bool ns;	/* shown as seconds */
	} counters[] = {
		{ "bpfprof_function_calls_total",
		  "Calls of a traced function that ended, per process.",
		  offsetof(struct row, calls), false },
		{ "bpfprof_function_seconds_total",
		  "Time inside a traced function, its callees included (recursion counted once).",
		  offsetof(struct row, total), true },
		{ "bpfprof_function_self_seconds_total",
		  "Time inside a traced function less the time in its traced callees.",
		  offsetof(struct row, self), true },
	};
	const struct row **v = xmalloc((m->nrows ? m->nrows : 1) * sizeof(*v));
	size_t n = m->nrows, i, b, c;

	for (i = 0; i < n; i++)
		v[i] = &m->rows[i];
	qsort(v, n, sizeof(*v), by_total);
	if (top && n > top)
		n = top;

	for (c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		family(f, counters[c].name, "counter", counters[c].help);
		for (i = 0; i < n; i++) {
			const uint64_t *val = (const uint64_t *)((const char *)v[i] + counters[c].off);

			fputs(counters[c].name, f);
			labels(f, s, v[i], NULL);
			if (counters[c].ns) {
				fputc(' ', f);
				seconds(f, *val);
			} else {
				fprintf(f, " %" PRIu64 "\n", *val);
			}
		}
	}
	family(f, "bpfprof_function_duration_seconds", "histogram",
	       "Duration of single calls of a traced function.");
	for (i = 0; i < n; i++) {
		uint64_t cum = 0;

		for (b = 0; b <= METRICS_NBUCKETS; b++) {
			cum += v[i]->buckets[b];
			fputs("bpfprof_function_duration_seconds_bucket", f);
			labels(f, s, v[i], b < METRICS_NBUCKETS ? bucket_le[b] : "+Inf");
			fprintf(f, " %" PRIu64 "\n", cum);
		}
		fputs("bpfprof_function_duration_seconds_sum", f);
		labels(f, s, v[i], NULL);
		fputc(' ', f);
		seconds(f, v[i]->sum);
		fputs("bpfprof_function_duration_seconds_count", f);
		labels(f, s, v[i], NULL);
		fprintf(f, " %" PRIu64 "\n", v[i]->calls);
	}
	write_traced(m, s, v, n, x, f);
	free(v);

	{
		/* what a long serve keeps (processes to paths) must follow what is alive */
		const struct {
			const char *name, *type, *help;
			uint64_t v;
		} own[] = {
			{ "bpfprof_calls_total", "counter",
			  "Calls of every traced function, all processes.", m->calls },
			{ "bpfprof_aggregated_functions", "gauge",
			  "Process and function pairs aggregated "
			  "(the top ones by time are exported).",
			  m->nrows },
			{ "bpfprof_known_processes", "gauge",
			  "Processes bpfprof keeps a name for "
			  "(alive, or named by a recent capture).",
			  s->nprocs },
			{ "bpfprof_known_threads", "gauge",
			  "Threads bpfprof keeps (alive, or exited less than 5 s ago).",
			  s->nthreads },
			{ "bpfprof_decoder_threads", "gauge",
			  "Threads whose call stacks bpfprof holds "
			  "(alive, or gone but not yet seen to be).",
			  x ? x->decoder_threads : 0 },
			{ "bpfprof_call_paths", "gauge",
			  "Distinct call paths interned "
			  "(they grow with the code that runs, not with time).",
			  s->npaths },
			{ "bpfprof_lost_records_total", "counter",
			  "Trace records lost because the ring buffer was full.", x ? x->lost : 0 },
		};

		for (i = 0; i < sizeof(own) / sizeof(*own); i++)
			metric(f, own[i].name, own[i].type, own[i].help, own[i].v);
	}
	family(f, "bpfprof_cpu_seconds_total", "counter",
	       "CPU time bpfprof itself used, user and system.");
	fputs("bpfprof_cpu_seconds_total ", f);
	seconds(f, x ? x->cpu_ns : 0);
	metric(f, "bpfprof_traced_processes", "gauge", "Traced processes still alive.",
	       x ? x->traced_processes : 0);
	if (x && x->rss_bytes) {
		metric(f, "bpfprof_resident_memory_bytes", "gauge",
		       "Resident memory of bpfprof itself.",
		       x->rss_bytes);
	}
	metric(f, "bpfprof_captures_total", "counter", "Traces returned by /capture.",
	       x ? x->captures : 0);
	metric(f, "bpfprof_captures_running", "gauge",
	       "Captures waiting for the end of their window.",
	       x ? x->captures_running : 0);
	return ferror(f) ? -EIO : 0;
}
