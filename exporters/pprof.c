// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof: a gzip-compressed perftools.profiles.Profile protocol buffer
 * (github.com/google/pprof proto/profile.proto), for `go tool pprof`,
 * pprof's web UI, Pyroscope, Parca, speedscope...
 *
 * Each distinct path (a call path, or a sampled stack) is one pprof sample,
 * and every sample carries the same five values, zero where one does not
 * apply:
 *
 *   calls/count        calls that ended on this call path (exact: tracing)
 *   wall/nanoseconds   those calls' SELF time
 *   samples/count      on-cpu stack samples with this stack (--sample)
 *   cpu/nanoseconds    their weight, the sampling period each
 *   offcpu/nanoseconds time blocked with this stack (--offcpu)
 *
 * pprof sums a sample's values into every frame of its stack, so for wall
 * flat = self time and cum = inclusive time per function, as in a profiler;
 * `-sample_index=calls` counts calls exactly, `-sample_index=cpu` is a CPU
 * profile and `-sample_index=offcpu` shows where threads blocked.  The
 * default is cpu for a recording of samples without calls (offcpu when it
 * has only off-cpu intervals), else wall.
 *
 * One function (and one location: no addresses, no lines) per function of
 * the session, one mapping per module: traced functions, and the frames
 * met in samples, kernel functions (mapping "[kernel]") and frames with no
 * symbol ("[unknown] libc.so.6+0x2724a") alike.  Threads and processes are
 * summed, as in a CPU profile.  Paths are aggregated as events arrive and
 * the profile is encoded at end(), streamed through zlib one top-level
 * field at a time: memory is bounded by the distinct paths.  Stacks deeper
 * than PATH_MAX_STACK are cut (pathagg.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "exporter.h"
#include "base/log.h"
#include "pathagg.h"
#include "protobuf.h"

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,

	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* The sample types, in the order of every sample's values. */
static const struct {
	const char *type, *unit;
} value_types[] = {
	{ "calls", "count" },
	{ "wall", "nanoseconds" },
	{ "samples", "count" },
	{ "cpu", "nanoseconds" },
	{ "offcpu", "nanoseconds" },
};
#define NVALUES		(sizeof(value_types) / sizeof(value_types[0]))
#define V_WALL		1
#define V_CPU		3
#define V_OFFCPU	4

/*
 * Ids are any unique non-zero numbers: function and location ids are the
 * session's function id + 1, mapping ids the module id + 1, and the marker
 * frame of a cut stack gets an id no function can have.
 */
#define TRUNC_ID	((uint64_t)UINT32_MAX + 2)

struct strtab {
	const char **v;		/* strings by index; v[0] is "" */
	size_t n, cap;
	uint32_t *hash;		/* open addressing: index + 1, 0 = empty */
	size_t hcap;
};

struct pprof_priv {
	struct path_agg agg;
};

/* Everything end() needs while it encodes. */
struct enc {
	const struct bp_session *s;
	FILE *out;
	z_stream z;
	bool z_ready;
	struct pb_buf msg, sub;	/* the top-level field being built, and a nested one */
	struct pb_buf lab;	/* a sample's label */
	struct strtab st;
	uint64_t *locs;		/* PATH_MAX_STACK location ids of one sample */
	uint32_t *funcs;	/* PATH_MAX_STACK functions of one sample */
	bool *used;		/* functions on any sample */
	size_t nused;
	bool trunc_used;
	unsigned char zbuf[64 * 1024];
	char **owned;		/* strings made here for the table, freed at the end */
	size_t nowned;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Index of `s` in the string table, added if new.  `s` must outlive the encoding. */
static int64_t intern(struct strtab *t, const char *s)
{
	size_t j, i;

	s = s ? s : "";
	if ((t->n + 1) * 2 > t->hcap) {
		free(t->hash);
		t->hcap = t->hcap ? t->hcap * 2 : 256;
		t->hash = xcalloc(t->hcap, sizeof(*t->hash));
		for (i = 0; i < t->n; i++) {
			j = str_hash(t->v[i]) & (t->hcap - 1);
			while (t->hash[j])
				j = (j + 1) & (t->hcap - 1);
			t->hash[j] = i + 1;
		}
	}
	j = str_hash(s) & (t->hcap - 1);
	while (t->hash[j]) {
		if (strcmp(t->v[t->hash[j] - 1], s) == 0)
			return t->hash[j] - 1;
		j = (j + 1) & (t->hcap - 1);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	t->v[t->n] = s;
	t->hash[j] = t->n + 1;
	return t->n++;
}

/* intern() of a string made here (malloc'd): kept until the end, then freed. */
static int64_t intern_own(struct enc *x, char *str)
{
	x->owned = xrealloc(x->owned, (x->nowned + 1) * sizeof(*x->owned));
	x->owned[x->nowned++] = str;
	return intern(&x->st, str);
}

/* intern() of a copy of s[0..n): kept until the end when new, else freed at once. */
static int64_t intern_copy(struct enc *x, const char *s, size_t n)
{
	char *str = xmalloc(n + 1);
	int64_t i;

	memcpy(str, s, n);
	str[n] = 0;
	i = intern(&x->st, str);
	if (x->st.v[i] != str) {
		free(str);
		return i;
	}
	x->owned = xrealloc(x->owned, (x->nowned + 1) * sizeof(*x->owned));
	x->owned[x->nowned++] = str;
	return i;
}

/*
 * A sampled stack's asyncio task as labels: `task` (its innermost "[task
 * NAME]" marker frame) and one `awaited_by` per "[awaited by NAME]" outside
 * it, innermost first.
 */
static void task_labels(struct enc *x, size_t n)
{
	const char *name;
	bool by, in = false;
	size_t i, len;

	for (i = n; i-- > 0;) {
		len = session__task_marker(x->s, x->funcs[i], &name, &by);
		if (!len || by != in)
			continue;
		pb_reset(&x->lab);
		pb_uint(&x->lab, LABEL_KEY, intern(&x->st, by ? "awaited_by" : "task"));
		pb_uint(&x->lab, LABEL_STR, intern_copy(x, name, len));
		pb_msg(&x->sub, SAMPLE_LABEL, &x->lab);
		in = true;
	}
}

static int pprof_event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	struct pprof_priv *p = e->priv;

	path_agg__event(&p->agg, s, ev);
	return 0;
}

static int z_write(struct enc *x, const void *data, size_t len, int flush)
{
	int ret;

	x->z.next_in = (unsigned char *)data;
	x->z.avail_in = len;
	do {
		size_t have;

		x->z.next_out = x->zbuf;
		x->z.avail_out = sizeof(x->zbuf);
		ret = deflate(&x->z, flush);
		if (ret == Z_STREAM_ERROR)
			return -EINVAL;
		have = sizeof(x->zbuf) - x->z.avail_out;
		if (have && fwrite(x->zbuf, 1, have, x->out) != have)
			return errno ? -errno : -EIO;
	} while (x->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

/* Compresses the top-level field built in x->msg and empties it. */
static int emit(struct enc *x)
{
	int err = z_write(x, x->msg.data, x->msg.len, Z_NO_FLUSH);

	pb_reset(&x->msg);
	return err;
}

static int emit_value_type(struct enc *x, uint32_t field, const char *type, const char *unit)
{
	pb_reset(&x->sub);
	pb_uint(&x->sub, VALUE_TYPE_TYPE, intern(&x->st, type));
	pb_uint(&x->sub, VALUE_TYPE_UNIT, intern(&x->st, unit));
	pb_msg(&x->msg, field, &x->sub);
	return emit(x);
}

static uint64_t func_id(uint32_t func)
{
	return (uint64_t)func + 1;
}

static int emit_sample(void *ctx, const struct path_sample *ps)
{
	struct enc *x = ctx;
	uint64_t values[NVALUES] = { ps->calls, ps->self, ps->cpu_samples, ps->cpu_ns,
				     ps->offcpu_ns };
	size_t n, i, nloc = 0;

	n = session__path_funcs(x->s, ps->path, x->funcs, PATH_MAX_STACK);
	/* pprof lists a stack leaf first. */
	if (ps->truncated) {
		x->locs[nloc++] = TRUNC_ID;
		x->trunc_used = true;
	}
	for (i = n; i-- > 0;) {
		uint32_t f = x->funcs[i];

		x->locs[nloc++] = func_id(f);
		if (f >= x->nused) {
			size_t cap = x->nused ? x->nused : 64;

			while (cap <= f)
				cap *= 2;
			x->used = xrealloc(x->used, cap * sizeof(*x->used));
			memset(x->used + x->nused, 0, (cap - x->nused) * sizeof(*x->used));
			x->nused = cap;
		}
		x->used[f] = true;
	}
	pb_reset(&x->sub);
	pb_packed(&x->sub, SAMPLE_LOCATION_ID, x->locs, nloc);
	pb_packed(&x->sub, SAMPLE_VALUE, values, NVALUES);
	task_labels(x, n);
	pb_msg(&x->msg, PROFILE_SAMPLE, &x->sub);
	return emit(x);
}

static const char *module_path(const struct bp_session *s, uint32_t func)
{
	if (func < s->nfuncs && s->funcs[func].module < s->nmodules)
		return s->modules[s->funcs[func].module].path;
	return NULL;
}

/*
 * The rank of a module among the mappings: pprof takes the first mapping for
 * the main binary ("File:" in its reports), so that goes first (the module
 * of `main`, or else the first file), then the other files, then pseudo
 * modules such as "[kernel]".
 */
static int module_rank(const struct enc *x, uint32_t m, uint32_t main_mod)
{
	const char *path = x->s->modules[m].path;

	if (m == main_mod)
		return 0;
	return path && path[0] == '[' ? 2 : 1;
}

static int emit_tables(struct enc *x)
{
	const struct bp_session *s = x->s;
	bool *mod_used = xcalloc(s->nmodules + 1, sizeof(*mod_used));
	uint32_t main_mod = UINT32_MAX;
	size_t i;
	int rank, err = 0;

	for (i = 0; i < x->nused; i++) {
		if (!x->used[i] || i >= s->nfuncs || s->funcs[i].module >= s->nmodules)
			continue;
		mod_used[s->funcs[i].module] = true;
		if (main_mod == UINT32_MAX && strcmp(s->funcs[i].name, "main") == 0)
			main_mod = s->funcs[i].module;
	}
	for (i = 0; i < s->nmodules && main_mod == UINT32_MAX; i++)
		if (mod_used[i] && module_rank(x, i, main_mod) == 1)
			main_mod = i;
	for (rank = 0; rank < 3; rank++) {
		for (i = 0; i < s->nmodules && !err; i++) {
			if (!mod_used[i] || module_rank(x, i, main_mod) != rank)
				continue;
			pb_reset(&x->sub);
			pb_uint(&x->sub, MAPPING_ID, i + 1);
			pb_uint(&x->sub, MAPPING_FILENAME, intern(&x->st, s->modules[i].path));
			pb_uint(&x->sub, MAPPING_HAS_FUNCTIONS, 1);
			pb_msg(&x->msg, PROFILE_MAPPING, &x->sub);
			err = emit(x);
		}
	}
	free(mod_used);

	for (i = 0; i < x->nused + 1 && !err; i++) {
		bool trunc = i == x->nused;
		uint64_t id = trunc ? TRUNC_ID : func_id(i);
		const char *name = trunc ? PATH_TRUNCATED_NAME : session__func_name(s, i);
		const char *mod = trunc ? NULL : module_path(s, i);
		struct pb_buf line = { 0 };

		if (trunc ? !x->trunc_used : !x->used[i])
			continue;
		/* A location is the function: one line, no address (nothing to symbolize);
		 * its line is where DWARF says the function is defined */
		pb_uint(&line, LINE_FUNCTION_ID, id);
		if (!trunc && s->funcs[i].line)
			pb_uint(&line, LINE_LINE, s->funcs[i].line);
		pb_reset(&x->sub);
		pb_uint(&x->sub, LOCATION_ID, id);
		if (mod)
			pb_uint(&x->sub, LOCATION_MAPPING_ID, s->funcs[i].module + 1);
		pb_msg(&x->sub, LOCATION_LINE, &line);
		pb_free(&line);
		pb_msg(&x->msg, PROFILE_LOCATION, &x->sub);
		err = emit(x);
		if (err)
			break;

		pb_reset(&x->sub);
		pb_uint(&x->sub, FUNCTION_ID, id);
		if (!trunc && s->funcs[i].flags & BP_FUNC_DROPPED) {
			char *dn = NULL;

			/* the governor's drop, where the graph shows it: in the name */
			if (asprintf(&dn, "%s" BP_DROPPED_SUFFIX, name) < 0) {
				err = -ENOMEM;
				break;
			}
			pb_uint(&x->sub, FUNCTION_NAME, intern_own(x, dn));
		} else {
			pb_uint(&x->sub, FUNCTION_NAME, intern(&x->st, name));
		}
		/* The session keeps demangled names only: the system name is the same. */
		pb_uint(&x->sub, FUNCTION_SYSTEM_NAME, intern(&x->st, name));
		/* the source file when the binary's DWARF names it, else the binary */
		if (!trunc && s->funcs[i].file)
			pb_uint(&x->sub, FUNCTION_FILENAME, intern(&x->st, s->funcs[i].file));
		else if (mod)
			pb_uint(&x->sub, FUNCTION_FILENAME, intern(&x->st, mod));
		if (!trunc && s->funcs[i].line)
			pb_uint(&x->sub, FUNCTION_START_LINE, s->funcs[i].line);
		pb_msg(&x->msg, PROFILE_FUNCTION, &x->sub);
		err = emit(x);
	}
	return err;
}

/* A comment naming the functions the overhead governor dropped; 0: none. */
static int64_t drops_comment(struct enc *x, const struct bp_session *s)
{
	char *buf = NULL;
	size_t len = 0, i, n = 0;
	FILE *f = open_memstream(&buf, &len);
	int64_t idx = 0;

	if (!f)
		return 0;
	fputs("dropped by --max-overhead (calls counted up to the drop):", f);
	for (i = 0; i < s->nfuncs; i++)
		if (s->funcs[i].flags & BP_FUNC_DROPPED)
			fprintf(f, "%s %s", n++ ? "," : "", session__func_name(s, (uint32_t)i));
	if (!fclose(f) && n)
		return intern_own(x, buf);
	free(buf);
	return idx;
}

static int pprof_end(struct exporter *e, const struct bp_session *s)
{
	struct pprof_priv *p = e->priv;
	struct enc *x = xcalloc(1, sizeof(*x));
	char *comment = NULL;
	int64_t comment_idx = 0, dflt_idx, drops_idx;
	uint64_t duration, period = 1;
	size_t i, dflt = V_WALL;
	int err = 0;

	x->s = s;
	x->out = e->out;
	x->locs = xcalloc(PATH_MAX_STACK, sizeof(*x->locs));
	x->funcs = xcalloc(PATH_MAX_STACK, sizeof(*x->funcs));
	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&x->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		err = -ENOMEM;
		goto cleanup;
	}
	x->z_ready = true;

	/*
	 * What `go tool pprof` shows without -sample_index: what the recording
	 * is about.  Calls are exact, so a recording with calls shows wall time
	 * even when it sampled too; a sampling-only one is a CPU profile, whose
	 * period is the sampling period.
	 */
	if (!p->agg.ncalls && p->agg.nsamples) {
		dflt = V_CPU;
		period = p->agg.cpu_ns / p->agg.nsamples;
	} else if (!p->agg.ncalls && p->agg.noffcpu) {
		dflt = V_OFFCPU;
	}

	intern(&x->st, "");	/* string_table[0] must be the empty string */
	for (i = 0; i < NVALUES && !err; i++)
		err = emit_value_type(x, PROFILE_SAMPLE_TYPE, value_types[i].type,
				      value_types[i].unit);
	if (!err)
		err = path_agg__for_each(&p->agg, s, PATH_MAX_STACK, emit_sample, x);
	if (!err)
		err = emit_tables(x);
	if (err)
		goto cleanup;

	if (s->cmdline && asprintf(&comment, "bpfprof record: %s", s->cmdline) >= 0)
		comment_idx = intern(&x->st, comment);
	else
		comment = NULL;
	drops_idx = drops_comment(x, s);
	dflt_idx = intern(&x->st, value_types[dflt].type);
	/* Every string is interned by now: the table can go out. */
	for (i = 0; i < x->st.n && !err; i++) {
		pb_str(&x->msg, PROFILE_STRING_TABLE, x->st.v[i]);
		err = emit(x);
	}
	if (err)
		goto cleanup;

	/* unsigned: wraps instead of overflowing on a hostile archive's header */
	pb_uint(&x->msg, PROFILE_TIME_NANOS, s->t0 + (uint64_t)s->realtime_offset);
	duration = s->duration ? s->duration : p->agg.end;
	pb_uint(&x->msg, PROFILE_DURATION_NANOS, duration);
	err = emit(x);
	if (!err)
		err = emit_value_type(x, PROFILE_PERIOD_TYPE, value_types[dflt].type,
				      value_types[dflt].unit);
	if (err)
		goto cleanup;
	pb_uint(&x->msg, PROFILE_PERIOD, period ? period : 1);
	if (comment_idx)
		pb_uint(&x->msg, PROFILE_COMMENT, comment_idx);
	if (drops_idx)
		pb_uint(&x->msg, PROFILE_COMMENT, drops_idx);
	pb_uint(&x->msg, PROFILE_DEFAULT_SAMPLE_TYPE, dflt_idx);
	err = emit(x);
	if (!err)
		err = z_write(x, NULL, 0, Z_FINISH);

cleanup:
	if (x->z_ready)
		deflateEnd(&x->z);
	pb_free(&x->msg);
	pb_free(&x->sub);
	pb_free(&x->lab);
	free(x->st.v);
	free(x->st.hash);
	free(x->used);
	free(x->funcs);
	free(x->locs);
	while (x->nowned)
		free(x->owned[--x->nowned]);
	free(x->owned);
	free(x);
	free(comment);
	return err;
}

static void pprof_free(struct exporter *e)
{
	struct pprof_priv *p = e->priv;

	if (p)
		path_agg__free(&p->agg);
}

const struct exporter_ops pprof_exporter = {
	.name = "pprof",
	.suffix = ".pb.gz",
	.help = "pprof profile, gzipped protobuf: calls, self time, cpu and off-cpu samples per "
		"stack (go tool pprof)",
	.priv_size = sizeof(struct pprof_priv),
	.event = pprof_event,
	.end = pprof_end,
	.free = pprof_free,
};
