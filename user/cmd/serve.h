/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* serve's options (serve_opts.c), read by the server (serve.c). */
#ifndef BPFPROF_CMD_SERVE_H
#define BPFPROF_CMD_SERVE_H

#include "options.h"
#include "cost/governor.h"
#include "web/httpd.h"

#define DEFAULT_LISTEN		"127.0.0.1:9464"
#define DEFAULT_TOP		50
/* A service in production: a tenth more time at most, by default (README: the governor). */
#define DEFAULT_MAX_OVERHEAD	SERVE_MAX_OVERHEAD
/*
 * Bytes all captures may hold at once (their files in /tmp, often memory),
 * while they record and until they are sent: --capture-limit.  A capture
 * that would pass it keeps no more calls, as at CAPTURE_MAX_CALLS.
 */
#define DEFAULT_CAPTURE_LIMIT	(512ull << 20)

struct serve_opts {
	struct cmd_opts cmd;	/* -q, -v, -h */
	struct capture_opts co;	/* -p, -F, -N, --buffer-size, ... */
	struct httpd_addr listen;
	char *token;		/* --token-file's token, or NULL */
	size_t top;
	uint64_t capture_limit;
};

/* 0, 1 for --help, or -EINVAL (printed). */
int serve__parse_args(int argc, char **argv, struct serve_opts *o);

#endif
