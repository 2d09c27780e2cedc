// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pprof exporter on known events (tests/unit/formats_fixture.h): a
 * hand-written protobuf decoder (the varint and length-delimited wire format
 * read back field by field, independently of the encoder), calls, stack
 * samples, the default sample type and deep stacks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "exporters/exporter.h"
#include "base/escape.h"
#include "exporters/pathagg.h"
#include "exporters/protobuf.h"
#include "model/session.h"
#include "helpers.h"
#include "formats_fixture.h"

/* ------------------------------------------------------------ protobuf */

static void check_varint(uint64_t v, const uint8_t *want, size_t n)
{
	struct pb_buf b = { 0 };

	pb_varint(&b, v);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.data, want, n);
	assert_int_equal(pb_varint_len(v), n);
	pb_free(&b);
}

static void test_varint(void **state)
{
	struct pb_buf b = { 0 };
	uint64_t vals[3] = { 3, 270, 86942 };

	(void)state;
	check_varint(0, (const uint8_t *)"\x00", 1);
	check_varint(1, (const uint8_t *)"\x01", 1);
	check_varint(127, (const uint8_t *)"\x7f", 1);
	check_varint(128, (const uint8_t *)"\x80\x01", 2);
	check_varint(150, (const uint8_t *)"\x96\x01", 2);
	check_varint(300, (const uint8_t *)"\xac\x02", 2);
	check_varint(UINT64_MAX, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
	/* int64 -1 is its two's complement: ten bytes */
	check_varint((uint64_t)-1ll, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
		     10);

	/* the examples of the protobuf encoding guide */
	pb_uint(&b, 1, 150);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "\x08\x96\x01", 3);
	pb_reset(&b);
	pb_str(&b, 2, "testing");
	assert_int_equal(b.len, 9);
	assert_memory_equal(b.data, "\x12\x07testing", 9);
	pb_reset(&b);
	pb_packed(&b, 4, vals, 3);
	assert_int_equal(b.len, 8);
	assert_memory_equal(b.data, "\x22\x06\x03\x8e\x02\x9e\xa7\x05", 8);
	pb_reset(&b);
	pb_uint(&b, 1, 0);	/* proto3: a zero scalar is not written */
	pb_packed(&b, 2, vals, 0);
	assert_int_equal(b.len, 0);
	pb_str(&b, 6, "");	/* a string table entry is, even empty */
	assert_int_equal(b.len, 2);
	assert_memory_equal(b.data, "\x32\x00", 2);
	pb_free(&b);
}

/* A reader for the wire format, written from the encoding spec, not from protobuf.c. */
struct rd {
	const uint8_t *p, *end;
};

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;
	int shift = 0;

	for (;;) {
		uint8_t byte;

		assert_true(r->p < r->end);
		assert_true(shift < 64);
		byte = *r->p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
		shift += 7;
	}
}

/* Next field: its number, and either its varint value or its bytes in *sub. */
static bool rd_field(struct rd *r, uint32_t *field, uint64_t *v, struct rd *sub)
{
	uint64_t key, len;

	if (r->p == r->end)
		return false;
	key = rd_varint(r);
	*field = key >> 3;
	switch (key & 7) {
	case 0:
		*v = rd_varint(r);
		sub->p = sub->end = NULL;
		break;
	case 2:
		len = rd_varint(r);
		assert_true(len <= (uint64_t)(r->end - r->p));
		sub->p = r->p;
		sub->end = r->p + len;
		r->p += len;
		break;
	default:
		fail_msg("unexpected wire type %u", (unsigned)(key & 7));
	}
	return true;
}

/* A repeated integer field: packed (one length-delimited run) or one varint. */
static size_t rd_ints(const struct rd *sub, uint64_t v, uint64_t *out, size_t max)
{
	struct rd r = *sub;
	size_t n = 0;

	if (!sub->p) {
		out[0] = v;
		return 1;
	}
	while (r.p < r.end) {
		assert_true(n < max);
		out[n++] = rd_varint(&r);
	}
	return n;
}

#define MAXN 16

struct dsample {
	uint64_t locs[PATH_MAX_STACK + 1];
	size_t nlocs;
	uint64_t vals[8];
	size_t nvals;
};

struct dprof {
	char *str[64];
	size_t nstr;
	uint64_t st_type[8], st_unit[8];
	size_t nst;
	struct dsample *samples;
	size_t nsamples;
	uint64_t fn_id[MAXN], fn_name[MAXN], fn_sys[MAXN], fn_file[MAXN];
	size_t nfn;
	uint64_t loc_id[MAXN], loc_map[MAXN], loc_fn[MAXN], loc_nlines[MAXN];
	size_t nloc;
	uint64_t map_id[MAXN], map_file[MAXN], map_hasfn[MAXN];
	size_t nmap;
	uint64_t time_nanos, duration, period, pt_type, pt_unit, comment, dflt;
};

/* A column of a decoded message table: varint field `field` of row i goes to v[i]. */
struct dcol {
	uint32_t field;
	uint64_t *v;
};

/* Field f, value v into row i of the column for f; false when no column is f's. */
static bool rd_set(const struct dcol *cols, size_t ncols, uint32_t f, uint64_t v, size_t i)
{
	size_t k;

	for (k = 0; k < ncols; k++) {
		if (cols[k].field == f) {
			cols[k].v[i] = v;
			return true;
		}
	}
	return false;
}

/* Reads the fields of one message into row i of its table's columns; others are skipped. */
static void rd_row(struct rd *msg, const struct dcol *cols, size_t ncols, size_t i)
{
	struct rd sub;
	uint32_t f;
	uint64_t v;

	while (rd_field(msg, &f, &v, &sub))
		rd_set(cols, ncols, f, v, i);
}

static void decode_value_type(struct rd *r, uint64_t *type, uint64_t *unit)
{
	const struct dcol cols[] = { { 1, type }, { 2, unit } };

	*type = *unit = 0;
	rd_row(r, cols, 2, 0);
}

static void decode(const uint8_t *buf, size_t len, struct dprof *d)
{
	/* time_nanos, duration_nanos, period, comment, default_sample_type */
	const struct dcol scalars[] = {
		{ 9, &d->time_nanos }, { 10, &d->duration }, { 12, &d->period },
		{ 13, &d->comment }, { 14, &d->dflt },
	};
	struct rd r = { buf, buf + len }, sub, sub2, sub3;
	uint32_t f, f2, f3;
	uint64_t v, v2, v3;

	memset(d, 0, sizeof(*d));
	d->samples = calloc(64, sizeof(*d->samples));
	assert_non_null(d->samples);
	while (rd_field(&r, &f, &v, &sub)) {
		switch (f) {
		case 1:
			assert_true(d->nst < 8);
			decode_value_type(&sub, &d->st_type[d->nst], &d->st_unit[d->nst]);
			d->nst++;
			break;
		case 2: {
			struct dsample *s = &d->samples[d->nsamples++];

			assert_true(d->nsamples <= 64);
			while (rd_field(&sub, &f2, &v2, &sub2)) {
				if (f2 == 1)
					s->nlocs += rd_ints(&sub2, v2, s->locs + s->nlocs,
							    PATH_MAX_STACK + 1 - s->nlocs);
				else if (f2 == 2)
					s->nvals += rd_ints(&sub2, v2, s->vals + s->nvals,
							    8 - s->nvals);
			}
			break;
		}
		case 3: {	/* Mapping: id, filename, has_functions */
			const struct dcol cols[] = {
				{ 1, d->map_id }, { 5, d->map_file }, { 7, d->map_hasfn },
			};

			assert_true(d->nmap < MAXN);
			rd_row(&sub, cols, 3, d->nmap++);
			break;
		}
		case 4:
			assert_true(d->nloc < MAXN);
			while (rd_field(&sub, &f2, &v2, &sub2)) {
				if (f2 == 1) {
					d->loc_id[d->nloc] = v2;
				} else if (f2 == 2) {
					d->loc_map[d->nloc] = v2;
				} else if (f2 == 4) {
					d->loc_nlines[d->nloc]++;
					while (rd_field(&sub2, &f3, &v3, &sub3))
						if (f3 == 1)
							d->loc_fn[d->nloc] = v3;
				}
			}
			d->nloc++;
			break;
		case 5: {	/* Function: id, name, system_name, filename */
			const struct dcol cols[] = {
				{ 1, d->fn_id }, { 2, d->fn_name }, { 3, d->fn_sys }, { 4, d->fn_file },
			};

			assert_true(d->nfn < MAXN);
			rd_row(&sub, cols, 4, d->nfn++);
			break;
		}
		case 6:
			assert_true(d->nstr < 64);
			d->str[d->nstr] = strndup((const char *)sub.p, sub.end - sub.p);
			d->nstr++;
			break;
		case 11:
			decode_value_type(&sub, &d->pt_type, &d->pt_unit);
			break;
		default:
			if (!rd_set(scalars, sizeof(scalars) / sizeof(scalars[0]), f, v, 0))
				fail_msg("unexpected Profile field %u", f);
		}
	}
}

static void dprof_free(struct dprof *d)
{
	size_t i;

	for (i = 0; i < d->nstr; i++)
		free(d->str[i]);
	free(d->samples);
}

static const char *S(const struct dprof *d, uint64_t i)
{
	assert_true(i < d->nstr);
	return d->str[i];
}

/* gunzip with zlib's own gz reader: the file must be a gzip stream. */
static uint8_t *gunzip(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	int r;

	assert_non_null(gz);
	assert_non_null(buf);
	assert_int_equal(gzdirect(gz), 0);	/* compressed, not plain */
	for (;;) {
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		r = gzread(gz, buf + n, cap - n);
		assert_true(r >= 0);
		if (r == 0)
			break;
		n += r;
	}
	assert_int_equal(gzclose(gz), Z_OK);
	*len = n;
	return buf;
}

/* The pprof file at path, gunzipped and decoded into d (dprof_free it). */
static void read_pprof(const char *path, struct dprof *d)
{
	size_t len;
	uint8_t *raw = gunzip(path, &len);

	decode(raw, len, d);
	free(raw);
}

/* The function name of location id `loc`, through location -> function -> string. */
static const char *loc_name(const struct dprof *d, uint64_t loc)
{
	size_t i, j;

	for (i = 0; i < d->nloc; i++) {
		if (d->loc_id[i] != loc)
			continue;
		for (j = 0; j < d->nfn; j++)
			if (d->fn_id[j] == d->loc_fn[i])
				return S(d, d->fn_name[j]);
	}
	fail_msg("no location %llu", (unsigned long long)loc);
	return NULL;
}

/* The sample whose stack (leaf first) reads `names`, comma-separated. */
static const struct dsample *find_sample(const struct dprof *d, const char *names)
{
	char buf[256];
	size_t i, j;

	for (i = 0; i < d->nsamples; i++) {
		buf[0] = '\0';
		for (j = 0; j < d->samples[i].nlocs; j++) {
			if (j)
				strcat(buf, ",");
			strcat(buf, loc_name(d, d->samples[i].locs[j]));
		}
		if (strcmp(buf, names) == 0)
			return &d->samples[i];
	}
	fail_msg("no sample %s", names);
	return NULL;
}

/* The five sample types, in the order of every sample's values. */
static void check_sample_types(const struct dprof *d)
{
	static const char *const want[][2] = {
		{ "calls", "count" }, { "wall", "nanoseconds" }, { "samples", "count" },
		{ "cpu", "nanoseconds" }, { "offcpu", "nanoseconds" },
	};
	size_t i;

	assert_int_equal(d->nst, 5);
	for (i = 0; i < 5; i++) {
		assert_string_equal(S(d, d->st_type[i]), want[i][0]);
		assert_string_equal(S(d, d->st_unit[i]), want[i][1]);
	}
}

/* n events written as a pprof file `name` in fx->dir, read back into d (dprof_free it). */
static void pprof_of(struct fixture *fx, const char *name, const struct bp_event *ev, int n,
		     struct dprof *d)
{
	write_out(fx, &pprof_exporter, name, ev, n);
	read_pprof(fx->path, d);
}

/*
 * The profile `name` of sample_events (after standard_events with calls),
 * read back into d; st: the stacks they use, NULL: not wanted.
 */
static void sampled_pprof(struct fixture *fx, const char *name, bool calls, struct stacks *st,
			  struct dprof *d)
{
	struct bp_event ev[32];
	struct stacks own;
	int n;

	if (!st)
		st = &own;
	make_stacks(fx, st);
	n = calls ? standard_events(fx, ev) : 0;
	n += sample_events(fx, st, ev + n);
	pprof_of(fx, name, ev, n, d);
}

/* The profile's default sample type and its period type are both `type`. */
static void assert_type(const struct dprof *d, const char *type)
{
	assert_string_equal(S(d, d->dflt), type);
	assert_string_equal(S(d, d->pt_type), type);
}

static void test_pprof(void **state)
{
	struct fixture *fx = *state;
	const struct dsample *sm;
	struct dprof d;
	size_t i, j;

	write_standard(fx, &pprof_exporter, "t.pb.gz");
	read_pprof(fx->path, &d);

	assert_true(d.nstr > 0);
	assert_string_equal(d.str[0], "");
	for (i = 0; i < d.nstr; i++)		/* interned: no string twice */
		for (j = i + 1; j < d.nstr; j++)
			assert_string_not_equal(d.str[i], d.str[j]);
	check_sample_types(&d);
	assert_type(&d, "wall");
	assert_string_equal(S(&d, d.pt_unit), "nanoseconds");
	assert_int_equal(d.period, 1);
	assert_string_equal(S(&d, d.comment), "bpfprof record: ./demo \"x\"");
	assert_int_equal(d.time_nanos, 1700000001000000000ull);
	assert_int_equal(d.duration, 5000);

	/* five distinct paths; both threads' main in one sample */
	assert_int_equal(d.nsamples, 6);
	for (i = 0; i < d.nsamples; i++) {
		/* every sample has all five values; no samples were recorded */
		assert_int_equal(d.samples[i].nvals, 5);
		assert_int_equal(d.samples[i].vals[2], 0);
		assert_int_equal(d.samples[i].vals[3], 0);
		assert_int_equal(d.samples[i].vals[4], 0);
	}
	sm = find_sample(&d, "main");
	assert_int_equal(sm->vals[0], 2);
	assert_int_equal(sm->vals[1], 1002);
	sm = find_sample(&d, "malloc,run,main");	/* leaf first */
	assert_int_equal(sm->vals[0], 2);
	assert_int_equal(sm->vals[1], 300);
	sm = find_sample(&d, "malloc,main");
	assert_int_equal(sm->vals[0], 1);
	assert_int_equal(sm->vals[1], 7);
	sm = find_sample(&d, "run,main");
	assert_int_equal(sm->vals[1], 695);
	sm = find_sample(&d, ODD_NAME ",run,main");
	assert_int_equal(sm->vals[1], 5);
	sm = find_sample(&d, BAD_NAME ",main");
	assert_int_equal(sm->vals[1], 1);

	/* one function and one location per function, one mapping per module */
	assert_int_equal(d.nfn, 5);
	assert_int_equal(d.nloc, 5);
	assert_int_equal(d.nmap, 2);
	for (i = 0; i < d.nfn; i++) {
		assert_true(d.fn_id[i] != 0);
		assert_string_equal(S(&d, d.fn_name[i]), S(&d, d.fn_sys[i]));
		if (strcmp(S(&d, d.fn_name[i]), "malloc") == 0)
			assert_string_equal(S(&d, d.fn_file[i]), "/lib/x86_64-linux-gnu/libc.so.6");
		else
			assert_string_equal(S(&d, d.fn_file[i]), "/usr/bin/demo");
	}
	for (i = 0; i < d.nloc; i++) {
		assert_int_equal(d.loc_nlines[i], 1);
		assert_true(d.loc_map[i] == d.map_id[0] || d.loc_map[i] == d.map_id[1]);
	}
	for (i = 0; i < d.nmap; i++) {
		assert_true(d.map_id[i] != 0);
		assert_int_equal(d.map_hasfn[i], 1);
	}
	assert_string_equal(S(&d, d.map_file[0]), "/usr/bin/demo");
	assert_string_equal(S(&d, d.map_file[1]), "/lib/x86_64-linux-gnu/libc.so.6");
	dprof_free(&d);
}

static void test_pprof_empty(void **state)
{
	struct fixture *fx = *state;
	struct dprof d;

	pprof_of(fx, "e.pb.gz", NULL, 0, &d);
	assert_int_equal(d.nsamples, 0);
	check_sample_types(&d);
	assert_string_equal(S(&d, d.dflt), "wall");
	assert_string_equal(d.str[0], "");
	dprof_free(&d);
}

/* The profile's mapping file names, in order. */
static const char *map_file(const struct dprof *d, size_t i)
{
	assert_true(i < d->nmap);
	return S(d, d->map_file[i]);
}

/* A sampling-only recording is a CPU profile: five values, cpu by default. */
static void test_pprof_samples(void **state)
{
	struct fixture *fx = *state;
	const struct dsample *sm;
	struct dprof d;
	size_t i;

	sampled_pprof(fx, "s.pb.gz", false, NULL, &d);
	check_sample_types(&d);
	assert_type(&d, "cpu");
	assert_string_equal(S(&d, d.pt_unit), "nanoseconds");
	assert_int_equal(d.period, 1000);

	assert_int_equal(d.nsamples, 3);
	sm = find_sample(&d, "malloc,run,main,[unknown] libc.so.6+0x2724a");
	assert_int_equal(sm->nvals, 5);
	assert_int_equal(sm->vals[0], 0);
	assert_int_equal(sm->vals[1], 0);
	assert_int_equal(sm->vals[2], 4);
	assert_int_equal(sm->vals[3], 4000);
	assert_int_equal(sm->vals[4], 700);
	sm = find_sample(&d, "main,[unknown] libc.so.6+0x2724a");
	assert_int_equal(sm->vals[2], 1);
	assert_int_equal(sm->vals[3], 1000);
	assert_int_equal(sm->vals[4], 0);
	sm = find_sample(&d, "do_nanosleep,main,[unknown] libc.so.6+0x2724a");
	assert_int_equal(sm->vals[2], 0);
	assert_int_equal(sm->vals[3], 0);
	assert_int_equal(sm->vals[4], 5000);

	/* kernel and unknown frames are functions of their own mappings; main's binary first */
	assert_int_equal(d.nmap, 3);
	assert_string_equal(map_file(&d, 0), "/usr/bin/demo");
	assert_string_equal(map_file(&d, 1), "/lib/x86_64-linux-gnu/libc.so.6");
	assert_string_equal(map_file(&d, 2), "[kernel]");
	for (i = 0; i < d.nfn; i++) {
		if (strcmp(S(&d, d.fn_name[i]), "do_nanosleep") == 0)
			assert_string_equal(S(&d, d.fn_file[i]), "[kernel]");
		if (strcmp(S(&d, d.fn_name[i]), "[unknown] libc.so.6+0x2724a") == 0)
			assert_string_equal(S(&d, d.fn_file[i]), "/lib/x86_64-linux-gnu/libc.so.6");
	}
	dprof_free(&d);
}

/* Off-cpu only: offcpu by default; calls and samples together: wall, both kinds of stack. */
static void test_pprof_default_type(void **state)
{
	struct fixture *fx = *state;
	const struct dsample *sm;
	struct bp_event off;
	struct stacks st;
	struct dprof d;

	sampled_pprof(fx, "m.pb.gz", true, &st, &d);
	assert_type(&d, "wall");
	assert_int_equal(d.period, 1);
	assert_int_equal(d.nsamples, 6 + 3);
	sm = find_sample(&d, "malloc,run,main");	/* a call path */
	assert_int_equal(sm->vals[0], 2);
	assert_int_equal(sm->vals[1], 300);
	assert_int_equal(sm->vals[3], 0);
	sm = find_sample(&d, "malloc,run,main,[unknown] libc.so.6+0x2724a");	/* a stack */
	assert_int_equal(sm->vals[0], 0);
	assert_int_equal(sm->vals[3], 4000);
	dprof_free(&d);

	off = sample(500, 5000, 100, st.s_sleep, BP_SAMPLE_F_OFFCPU);
	pprof_of(fx, "o.pb.gz", &off, 1, &d);
	assert_type(&d, "offcpu");
	dprof_free(&d);
}

static void test_pprof_deep(void **state)
{
	struct fixture *fx = *state;
	size_t depth = PATH_MAX_STACK + 3, ntrunc = 0;
	struct bp_event *ev = deep_calls(fx, depth);
	uint8_t *raw;
	size_t len;

	write_out(fx, &pprof_exporter, "d.pb.gz", ev, depth);
	raw = gunzip(fx->path, &len);
	{
		/* more samples than decode() makes room for: count them with a bare reader */
		struct rd r = { raw, raw + len }, sub;
		uint32_t f;
		uint64_t v;
		size_t ns = 0;

		while (rd_field(&r, &f, &v, &sub))
			ns += f == 2;
		assert_int_equal(ns, PATH_MAX_STACK + 1);
	}
	/* the deepest kept stack: the marker leaf, then PATH_MAX_STACK - 1 frames of run */
	{
		struct rd r = { raw, raw + len }, sub, sub2;
		uint32_t f, f2;
		uint64_t v, v2, locs[PATH_MAX_STACK + 1];
		size_t nl, maxl = 0;

		while (rd_field(&r, &f, &v, &sub)) {
			if (f != 2)
				continue;
			while (rd_field(&sub, &f2, &v2, &sub2)) {
				if (f2 != 1)
					continue;
				nl = rd_ints(&sub2, v2, locs, PATH_MAX_STACK + 1);
				if (nl > maxl)
					maxl = nl;
				if (locs[0] != fx->f_run + 1) {
					ntrunc++;
					assert_int_equal(nl, PATH_MAX_STACK);
				}
			}
		}
		assert_int_equal(maxl, PATH_MAX_STACK);
		assert_int_equal(ntrunc, 1);
	}
	free(raw);
	free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint),
		cmocka_unit_test_setup_teardown(test_pprof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_default_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_deep, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
