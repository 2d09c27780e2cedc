/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * view's server state and the pieces the command wires together (view.c).
 */
#ifndef BPFPROF_WEB_VIEW_H
#define BPFPROF_WEB_VIEW_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "httpd.h"

enum input_kind { IN_ARCHIVE, IN_CHROME, IN_SPEEDSCOPE };

struct view_ctx {
	const char *file;
	const char *name;	/* its base name, for the page */
	enum input_kind kind;
	char *speedscope;	/* speedscope's dist/release directory, NULL: not found */
	char *dot;		/* Graphviz dot, NULL: not found */
	struct httpd_addr addr;
	char token[HTTPD_TOKEN_LEN + 1];	/* every URL starts with /TOKEN/ */
	char tmpdir[64];
	pthread_mutex_t lock;	/* the conversions below, made once */
	char *report;		/* archive: the report JSON */
	size_t report_len;
	uint64_t ncalls;	/* archive: calls recorded */
	uint64_t duration;	/* archive: ns */
	/*
	 * An archive's whole-recording timeline, made at start in a thread of
	 * its own while the report is read (two replays on two CPUs): the
	 * first timeline a page asks for is then ready when the table is.
	 */
	pthread_t overview_thread;
	bool overview_started, overview_joined;
	char *overview;
	size_t overview_len;
	int overview_err;
	bool big;		/* archive of more than BIG_CALLS calls */
	char *profile;		/* the file speedscope loads (archive: made on the first request) */
	char *svg;		/* archive: the call graph (made on the first request) */
	char *graph_err;	/* why there is no graph */
	unsigned long seq;
	const char *file2;	/* view BASE NEW: the new recording (file is the base) */
	char *diff;		/* ... and their diff's JSON (user/report/diff.c) */
	size_t diff_len;
};

int view_make_diff(struct view_ctx *v);
int view_detect_kind(const char *path, enum input_kind *kind);
void *view_make_overview(void *arg);
int view_make_report(struct view_ctx *v);
char *view_find_speedscope(const char *opt);
char *view_find_in_path(const char *name);
enum MHD_Result view_handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls);
void view_request_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why);

#endif
