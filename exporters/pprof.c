// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof: a gzip-compressed perftools.profiles.Profile protocol buffer
 * (github.com/google/pprof proto/profile.proto), for `go tool pprof`,
 * pprof's web UI, Pyroscope, Parca, speedscope...
 *
 * Tracing is not sampling, so each distinct call path is one sample with two
 * exact values: calls (how many calls ended on that path) and wall (the
 * path's SELF time in ns).  pprof sums a sample's values into every frame of
 * its stack, so flat = self time and cum = inclusive time per function, as
 * in a profiler, and `-sample_index=calls` counts calls exactly.
 *
 * One function (and one location: no addresses, no lines) per traced
 * function, one mapping per module.  Threads and processes are summed, as
 * in a CPU profile.  Paths are aggregated as calls end and the profile is
 * encoded at end(), streamed through zlib one top-level field at a time:
 * memory is bounded by the distinct call paths.  Stacks deeper than
 * PATH_MAX_STACK are cut (pathagg.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "exporter.h"
#include "log.h"
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

	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

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
	struct strtab st;
	uint64_t *locs;		/* PATH_MAX_STACK location ids of one sample */
	uint32_t *funcs;	/* PATH_MAX_STACK functions of one sample */
	bool *used;		/* functions on any sample */
	size_t nused;
	bool trunc_used;
	unsigned char zbuf[64 * 1024];
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
	uint64_t values[2] = { ps->calls, ps->self };
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
	pb_packed(&x->sub, SAMPLE_VALUE, values, 2);
	pb_msg(&x->msg, PROFILE_SAMPLE, &x->sub);
	return emit(x);
}

static const char *module_path(const struct bp_session *s, uint32_t func)
{
	if (func < s->nfuncs && s->funcs[func].module < s->nmodules)
		return s->modules[s->funcs[func].module].path;
	return NULL;
}

static int emit_tables(struct enc *x)
{
	const struct bp_session *s = x->s;
	bool *mod_used = xcalloc(s->nmodules + 1, sizeof(*mod_used));
	size_t i;
	int err = 0;

	for (i = 0; i < x->nused; i++)
		if (x->used[i] && i < s->nfuncs && s->funcs[i].module < s->nmodules)
			mod_used[s->funcs[i].module] = true;
	for (i = 0; i < s->nmodules && !err; i++) {
		if (!mod_used[i])
			continue;
		pb_reset(&x->sub);
		pb_uint(&x->sub, MAPPING_ID, i + 1);
		pb_uint(&x->sub, MAPPING_FILENAME, intern(&x->st, s->modules[i].path));
		pb_uint(&x->sub, MAPPING_HAS_FUNCTIONS, 1);
		pb_msg(&x->msg, PROFILE_MAPPING, &x->sub);
		err = emit(x);
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
		/* A location is the function: one line, no address (nothing to symbolize). */
		pb_uint(&line, LINE_FUNCTION_ID, id);
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
		pb_uint(&x->sub, FUNCTION_NAME, intern(&x->st, name));
		/* The session keeps demangled names only: the system name is the same. */
		pb_uint(&x->sub, FUNCTION_SYSTEM_NAME, intern(&x->st, name));
		if (mod)
			pb_uint(&x->sub, FUNCTION_FILENAME, intern(&x->st, mod));
		pb_msg(&x->msg, PROFILE_FUNCTION, &x->sub);
		err = emit(x);
	}
	return err;
}

static int pprof_end(struct exporter *e, const struct bp_session *s)
{
	struct pprof_priv *p = e->priv;
	struct enc *x = xcalloc(1, sizeof(*x));
	char *comment = NULL;
	int64_t comment_idx = 0, wall_idx;
	uint64_t duration;
	size_t i;
	int err;

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

	intern(&x->st, "");	/* string_table[0] must be the empty string */
	err = emit_value_type(x, PROFILE_SAMPLE_TYPE, "calls", "count");
	if (!err)
		err = emit_value_type(x, PROFILE_SAMPLE_TYPE, "wall", "nanoseconds");
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
	wall_idx = intern(&x->st, "wall");
	/* Every string is interned by now: the table can go out. */
	for (i = 0; i < x->st.n && !err; i++) {
		pb_str(&x->msg, PROFILE_STRING_TABLE, x->st.v[i]);
		err = emit(x);
	}
	if (err)
		goto cleanup;

	pb_uint(&x->msg, PROFILE_TIME_NANOS, (uint64_t)((int64_t)s->t0 + s->realtime_offset));
	duration = s->duration ? s->duration : p->agg.end;
	pb_uint(&x->msg, PROFILE_DURATION_NANOS, duration);
	err = emit(x);
	if (!err)
		err = emit_value_type(x, PROFILE_PERIOD_TYPE, "wall", "nanoseconds");
	if (err)
		goto cleanup;
	pb_uint(&x->msg, PROFILE_PERIOD, 1);
	if (comment_idx)
		pb_uint(&x->msg, PROFILE_COMMENT, comment_idx);
	/* `go tool pprof` shows wall time unless told -sample_index=calls. */
	pb_uint(&x->msg, PROFILE_DEFAULT_SAMPLE_TYPE, wall_idx);
	err = emit(x);
	if (!err)
		err = z_write(x, NULL, 0, Z_FINISH);

cleanup:
	if (x->z_ready)
		deflateEnd(&x->z);
	pb_free(&x->msg);
	pb_free(&x->sub);
	free(x->st.v);
	free(x->st.hash);
	free(x->used);
	free(x->funcs);
	free(x->locs);
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
	.help = "pprof profile, gzipped protobuf: calls and self time per call path (go tool pprof)",
	.priv_size = sizeof(struct pprof_priv),
	.event = pprof_event,
	.end = pprof_end,
	.free = pprof_free,
};
