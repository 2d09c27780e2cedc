// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bpfprof: eBPF function tracer and profiler.  The command table lives here
 * and nowhere else; each command is in user/cmd/<name>.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include "cmds.h"
#include "base/log.h"

#define BPFPROF_VERSION "0.1.0"

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool needs_bpf;		/* needs root or CAP_BPF + CAP_PERFMON */
	const char *help;
} cmds[] = {
	{ "record", cmd_record, true, "run a command and trace its function calls" },
	{ "attach", cmd_attach, true, "trace running processes" },
	{ "list", cmd_list, false, "list the functions that can be traced in a binary or process" },
	{ "report", cmd_report, false, "print per-function times and the call tree of a recording" },
	{ "convert", cmd_convert, false, "write a recording (.bpfprof archive) in another format" },
	{ "diff", cmd_diff, false, "compare two recordings: what got slower, per function, and how sure" },
	{ "merge", cmd_merge, false, "merge recordings of several runs or hosts on one time axis" },
	{ "view", cmd_view, false, "show a recording in the browser: functions, timeline, graph" },
	{ "serve", cmd_serve, true, "trace running processes; Prometheus metrics and captures over HTTP" },
	{ NULL },
};

static void usage(FILE *f)
{
	const struct cmd *c;

	fprintf(f, "usage: bpfprof [-v] [-q] COMMAND [ARGS...]\n\n"
		   "eBPF function tracer and profiler.\n\ncommands:\n");
	for (c = cmds; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->help);
	fprintf(f, "\n'bpfprof COMMAND --help' for a command's options.\n"
		   "global options: -v verbose (libbpf messages), -q quiet, --version\n");
}

static bool wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	return false;
}

/* Root, or CAP_BPF and CAP_PERFMON in the effective set (bpftool's check, by capget). */
static bool have_bpf_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	const int caps[] = { 38 /* CAP_PERFMON */, 39 /* CAP_BPF */ };
	size_t i;

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	for (i = 0; i < 2; i++)
		if (!(data[caps[i] / 32].effective & (1u << (caps[i] % 32))))
			return false;
	return true;
}

/* After a command: a full disk or closed pipe on stdout is an error, not silence. */
static int check_stdout(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			p_err("cannot write standard output: %s", strerror(errno));
		return status ? status : 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v")) {
			verbose++;
		} else if (!strcmp(argv[i], "-q")) {
			quiet = true;
		} else if (!strcmp(argv[i], "--version")) {
			printf("bpfprof " BPFPROF_VERSION "\n");
			return check_stdout(0);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return check_stdout(0);
		} else {
			p_err("unknown option '%s' (see 'bpfprof --help')", argv[i]);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "help")) {
		usage(stdout);
		return check_stdout(0);
	}
	for (c = cmds; c->name; c++) {
		if (strcmp(c->name, argv[i]))
			continue;
		if (c->needs_bpf && !wants_help(argc - i, argv + i) && !have_bpf_privileges()) {
			p_err("'%s' needs root (or CAP_BPF and CAP_PERFMON): try 'sudo bpfprof %s ...'",
			      c->name, c->name);
			return 1;
		}
		optind = 0;	/* each command parses its own argv with getopt */
		return check_stdout(c->fn(argc - i, argv + i));
	}
	p_err("unknown command '%s' (see 'bpfprof --help')", argv[i]);
	return 2;
}
