// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The archive's tables (layout: writer.c): modules, functions, call paths,
 * threads, processes, losses and counters, read row by row with the
 * checks of reader.c's primitives (internal.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "archive.h"
#include "format.h"
#include "internal.h"
#include "base/log.h"
#include "base/util.h"

/*
 * The five tables share one row loop (rd_rows): a row is a fixed part, read
 * into a zeroed buffer (a shorter row of an older writer leaves the newer
 * fields zero), then its strings; the table's row function checks and keeps
 * it, and owns the strings from then on, also when it refuses the row.
 */
#define ROW_MAX_FIXED	64
#define ROW_MAX_STRS	2

struct table_spec {
	size_t max;		/* entries in all */
	uint32_t old_fixed;	/* the oldest writer's fixed part */
	uint32_t fixed;		/* this reader's */
	unsigned nstr_old, nstr;	/* strings after each */
	int (*row)(struct archive_reader *r, const unsigned char *b, uint32_t known, char **str);
};

static int rd_rows(struct archive_reader *r, size_t have, const struct table_spec *ts)
{
	unsigned char b[ROW_MAX_FIXED];
	char *str[ROW_MAX_STRS];
	struct table_hdr t;
	uint32_t i, known;
	unsigned k, nstr;
	int err;

	_Static_assert(ARCHIVE_FUNC_FIXED <= ROW_MAX_FIXED && ARCHIVE_THREAD_FIXED <= ROW_MAX_FIXED,
		       "a table row's fixed part fits the row buffer");
	err = archive_rd_table(r, have, ts->max, ts->old_fixed, &t);
	known = t.fixed < ts->fixed ? ts->old_fixed : ts->fixed;
	nstr = t.fixed < ts->fixed ? ts->nstr_old : ts->nstr;
	for (i = 0; !err && i < t.count; i++) {
		memset(b, 0, sizeof(b));
		memset(str, 0, sizeof(str));
		err = archive_rd_fixed(r, &t, b, known);
		for (k = 0; !err && k < nstr; k++)
			err = archive_rd_str(r, &str[k]);
		if (!err) {
			err = ts->row(r, b, known, str);
			continue;
		}
		for (k = 0; k < ROW_MAX_STRS; k++)
			free(str[k]);
	}
	return err;
}

static int module_row(struct archive_reader *r, const unsigned char *b, uint32_t known,
		      char **str)
{
	struct bp_session *s = r->s;

	(void)b;
	(void)known;
	if (!str[0])
		return corrupt(r, "module %zu has no path", s->nmodules);
	s->modules = archive_grow(s->modules, s->nmodules, sizeof(*s->modules));
	s->modules[s->nmodules].build_id = NULL;
	s->modules[s->nmodules++].path = str[0];
	return 0;
}

static int func_row(struct archive_reader *r, const unsigned char *b, uint32_t known, char **str)
{
	struct bp_session *s = r->s;
	struct bp_func f = { .name = str[0], .file = str[1] };

	f.module = le32(b);
	f.flags = le32(b + 4);
	f.addr = le64(b + 8);
	f.size = le64(b + 16);
	f.offset = le64(b + 24);
	/* 1.0 rows have no nparams (unknown: -1) and no line */
	f.nparams = known >= ARCHIVE_FUNC_FIXED ? (int32_t)le32(b + 32) : -1;
	f.line = le32(b + 36);
	if (!f.name || f.module >= s->nmodules) {
		free(f.name);
		free(f.file);
		return corrupt(r, "function %zu names module %" PRIu32 " of %zu", s->nfuncs,
			       f.module, s->nmodules);
	}
	s->funcs = archive_grow(s->funcs, s->nfuncs, sizeof(*s->funcs));
	s->funcs[s->nfuncs++] = f;	/* the name is owned by the table now */
	return 0;
}

static int path_row(struct archive_reader *r, const unsigned char *b, uint32_t known, char **str)
{
	struct bp_session *s = r->s;
	uint32_t parent = le32(b), func = le32(b + 4);
	size_t want = s->npaths ? s->npaths : 1;

	(void)known;
	(void)str;
	/* parent < own index: no cycles, so walking a path always ends. */
	if (parent >= want || func >= s->nfuncs)
		return corrupt(r, "call path %zu is (parent %" PRIu32 ", function %" PRIu32
			       ") with %zu functions", want, parent, func, s->nfuncs);
	/* Interning returns an older node for a duplicate: the indexes would shift. */
	if (session__path(s, parent, func) != want)
		return corrupt(r, "call path %zu repeats an earlier one", want);
	return 0;
}

static int thread_row(struct archive_reader *r, const unsigned char *b, uint32_t known,
		      char **str)
{
	struct bp_session *s = r->s;
	uint32_t tid = le32(b);
	struct bp_thread *th;

	(void)known;
	(void)str;
	/* Sorted, so each insert is an append, never a quadratic memmove. */
	if (s->nthreads && tid <= s->threads[s->nthreads - 1].tid)
		return corrupt(r, "thread %" PRIu32 " out of order", tid);
	th = session__thread(s, tid, 0);
	th->pid = le32(b + 4);
	th->first_ts = le64(b + 8);
	th->last_ts = le64(b + 16);
	th->exited = le32(b + 24) != 0;
	memcpy(th->name, b + 32, sizeof(th->name));
	return 0;
}

static int proc_row(struct archive_reader *r, const unsigned char *b, uint32_t known, char **str)
{
	struct bp_session *s = r->s;
	struct bp_process *p;

	(void)known;
	/* Appended, not looked up: session__process() is linear. */
	s->procs = archive_grow(s->procs, s->nprocs, sizeof(*s->procs));
	p = &s->procs[s->nprocs++];
	p->pid = le32(b);
	p->ppid = le32(b + 4);
	p->name = str[0];
	return 0;
}

static const struct table_spec modules_spec = {
	ARCHIVE_MAX_MODULES, ARCHIVE_MODULE_FIXED, ARCHIVE_MODULE_FIXED, 1, 1, module_row,
};
/* 1.0 rows are shorter and have only the name: known from the fixed size. */
static const struct table_spec funcs_spec = {
	ARCHIVE_MAX_FUNCS, ARCHIVE_FUNC_FIXED_1_0, ARCHIVE_FUNC_FIXED, 1, 2, func_row,
};
static const struct table_spec paths_spec = {
	ARCHIVE_MAX_PATHS, ARCHIVE_PATH_FIXED, ARCHIVE_PATH_FIXED, 0, 0, path_row,
};
static const struct table_spec threads_spec = {
	ARCHIVE_MAX_THREADS, ARCHIVE_THREAD_FIXED, ARCHIVE_THREAD_FIXED, 0, 0, thread_row,
};
static const struct table_spec procs_spec = {
	ARCHIVE_MAX_PROCS, ARCHIVE_PROC_FIXED, ARCHIVE_PROC_FIXED, 1, 1, proc_row,
};

static int read_losses(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	uint32_t ncpus, reserved, i;
	uint64_t total;
	int err;

	err = archive_rd_u64(r, &total);
	if (!err)
		err = archive_rd_u32(r, &ncpus);
	if (!err)
		err = archive_rd_u32(r, &reserved);
	if (err)
		return err;
	if (ncpus > ARCHIVE_MAX_CPUS || (uint64_t)ncpus * 8 > r->left)
		return corrupt(r, "losses for %" PRIu32 " CPUs", ncpus);
	free(s->lost_per_cpu);
	s->lost_per_cpu = ncpus ? xcalloc(ncpus, sizeof(*s->lost_per_cpu)) : NULL;
	s->ncpus = ncpus;
	s->lost_total = total;
	for (i = 0; !err && i < ncpus; i++)
		err = archive_rd_u64(r, &s->lost_per_cpu[i]);
	return err;
}

static int read_counters(struct archive_reader *r)
{
	struct bp_session *s = r->s;
	uint64_t *dst[ARCHIVE_NCOUNTERS] = ARCHIVE_COUNTERS(s);
	uint32_t n, reserved, i;
	int err;

	err = archive_rd_u32(r, &n);
	if (!err)
		err = archive_rd_u32(r, &reserved);
	if (err)
		return err;
	if ((uint64_t)n * 8 > r->left)
		return corrupt(r, "%" PRIu32 " counters do not fit their section", n);
	/* Counters a newer writer added are skipped with the rest of the section. */
	for (i = 0; !err && i < n && i < ARCHIVE_NCOUNTERS; i++)
		err = archive_rd_u64(r, dst[i]);
	if (!err && n > ARCHIVE_NCOUNTERS)
		err = archive_sec_skip(r, (uint64_t)(n - ARCHIVE_NCOUNTERS) * 8);
	/* 1.2: the timing note (absent before: the raw clock) */
	if (!err && r->left >= 4) {
		free(s->timing);
		s->timing = NULL;
		err = archive_rd_str(r, &s->timing);
	}
	return err;
}

int archive_read_table(struct archive_reader *r)
{
	switch (r->type) {
	case ARCHIVE_SEC_MODULES:
		return rd_rows(r, r->s->nmodules, &modules_spec);
	case ARCHIVE_SEC_FUNCS:
		return rd_rows(r, r->s->nfuncs, &funcs_spec);
	case ARCHIVE_SEC_PATHS:
		/* The root is implicit: entry 1 is the first a file holds. */
		return rd_rows(r, r->s->npaths ? r->s->npaths : 1, &paths_spec);
	case ARCHIVE_SEC_THREADS:
		return rd_rows(r, r->s->nthreads, &threads_spec);
	case ARCHIVE_SEC_PROCS:
		return rd_rows(r, r->s->nprocs, &procs_spec);
	case ARCHIVE_SEC_LOSSES:
		return read_losses(r);
	case ARCHIVE_SEC_COUNTERS:
		return read_counters(r);
	}
	return 0;
}
