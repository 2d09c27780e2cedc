/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the commands (user/cmd/<name>.c) share with each other.  Each
 * command's entry and struct cmd_def are declared where its one user is,
 * beside the command table (main.c).
 */
#ifndef BPFPROF_CMDS_H
#define BPFPROF_CMDS_H

/* The merge command itself (tests/unit/test_archive.c runs it). */
int cmd_merge(int argc, char **argv);

/*
 * The recording `in` named by symbolize (symbols/resymbolize.h) from the
 * debug files where debug says (NULL: where the capture looked), written by
 * exporter ops to out (may be in: replaced when complete).  0 or -errno.
 */
struct debug_conf;
struct exporter_ops;
struct resymbolize_stats;
int symbolize__run(const char *in, const char *out, const struct exporter_ops *ops,
		   const struct debug_conf *debug, struct resymbolize_stats *st);

#endif
