/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The subcommands: each takes its own argv (argv[0] is the command name) and
 * returns an exit status; its options and help are its struct cmd_def (options.h).
 */
#ifndef BPFPROF_CMDS_H
#define BPFPROF_CMDS_H

struct cmd_def;

int cmd_record(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);

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

extern const struct cmd_def record_def, attach_def, list_def, report_def, convert_def, diff_def,
	merge_def, view_def, serve_def, symbolize_def;

#endif
