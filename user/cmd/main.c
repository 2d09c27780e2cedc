// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bpfprof: eBPF function tracer and profiler.  The command table lives here
 * and nowhere else; each command is in user/cmd/<name>.c, its options and
 * help in its struct cmd_def (options.h).  A new command: its file, its
 * COMMAND() line and its row below.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "cmds.h"
#include "options.h"
#include "base/fdshare.h"
#include "base/log.h"

#define BPFPROF_VERSION "0.1.0"

/*
 * Each command: the struct cmd_def NAME_def and the entry cmd_NAME (its own
 * argv, argv[0] the command's name; returns the exit status) of
 * user/cmd/NAME.c.
 */
#define COMMAND(name)	extern const struct cmd_def name##_def; \
			int cmd_##name(int argc, char **argv)
COMMAND(record);
COMMAND(attach);	/* (in record.c) */
COMMAND(list);
COMMAND(report);
COMMAND(convert);
COMMAND(diff);
COMMAND(merge);
COMMAND(symbolize);
COMMAND(view);
COMMAND(serve);

static const struct cmd {
	const struct cmd_def *def;
	int (*fn)(int argc, char **argv);
	bool needs_bpf;		/* needs root or CAP_BPF + CAP_PERFMON */
} cmds[] = {
	{ &record_def, cmd_record, true },
	{ &attach_def, cmd_attach, true },
	{ &list_def, cmd_list, false },
	{ &report_def, cmd_report, false },
	{ &convert_def, cmd_convert, false },
	{ &diff_def, cmd_diff, false },
	{ &merge_def, cmd_merge, false },
	{ &symbolize_def, cmd_symbolize, false },
	{ &view_def, cmd_view, false },
	{ &serve_def, cmd_serve, true },
	{ NULL },
};

enum { G_VERSION = OPT_OWN, G_MAN, G_LIST_OPTIONS };
static const struct opt_def opts_global[] = {
	OPT_FLAG("verbose", 'v', "more messages (twice: libbpf debug)"),
	OPT_FLAG("quiet", 'q', "no summary, status line or progress"),
	OPT_FLAG("version", G_VERSION, "print the version"),
	OPT_FLAG("help", 'h', "the commands"),
	OPT_ARG("man", G_MAN, "DIR", "write the man pages, bpfprof.1 and bpfprof-COMMAND.1,\n"
		"into DIR (the build does, for make install)"),
	{ "list-options", optional_argument, G_LIST_OPTIONS, "COMMAND",
	  "the commands, or COMMAND's options, one a line (for\nshell completion)" },
	OPT_END
};

static void usage(FILE *f)
{
	const struct cmd *c;
	const struct opt_def *r;

	fprintf(f, "usage: bpfprof [-v] [-q] COMMAND [ARGS...]\n\n"
		   "eBPF function tracer and profiler.\n\ncommands:\n");
	for (c = cmds; c->def; c++)
		fprintf(f, "  %-10s %s\n", c->def->name, c->def->summary);
	fprintf(f, "\n'bpfprof COMMAND --help' for a command's options ('man bpfprof-COMMAND').\n"
		   "global options:\n");
	for (r = opts_global; r->name; r++)
		opts__help_row(f, r, r->help);
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

static const struct cmd_def *find_def(const char *name)
{
	const struct cmd *c;

	for (c = cmds; c->def; c++)
		if (!strcmp(c->def->name, name))
			return c->def;
	return NULL;
}

/* One man page: a command's (d), or bpfprof(1) (d NULL). */
static int write_page(const char *dir, const struct cmd_def *d)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bpfprof%s%s.1", dir, d ? "-" : "", d ? d->name : "");
	f = fopen(path, "w");
	if (!f) {
		p_err("cannot write %s: %s", path, strerror(errno));
		return 1;
	}
	if (d) {
		opts__man(d, BPFPROF_VERSION, f);
	} else {
		const struct cmd_def *defs[sizeof(cmds) / sizeof(cmds[0])];
		size_t i;

		for (i = 0; cmds[i].def; i++)
			defs[i] = cmds[i].def;
		defs[i] = NULL;
		opts__man_overview(BPFPROF_VERSION, defs, opts_global, f);
	}
	if (fclose(f)) {
		p_err("cannot write %s: %s", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* --man DIR: bpfprof.1 and one page a command. */
static int write_man(const char *dir)
{
	const struct cmd *c;

	for (c = cmds; c->def; c++)
		if (write_page(dir, c->def))
			return 1;
	return write_page(dir, NULL);
}

/* --list-options[=COMMAND] */
static int list_options(const char *name)
{
	const struct cmd_def *d;
	const struct cmd *c;

	if (!name) {
		for (c = cmds; c->def; c++)
			printf("%s\n", c->def->name);
		return check_stdout(0);
	}
	d = find_def(name);
	if (!d) {
		p_err("unknown command '%s' (see 'bpfprof --help')", name);
		return 2;
	}
	opts__list(d, stdout);
	return check_stdout(0);
}

/* bpfprof's own options, before the command (opts_global). */
static const struct cmd_def global_def = {
	.name = "",
	.tables = (const struct opt_def *const[]){ opts_global, NULL },
};

int main(int argc, char **argv)
{
	const struct cmd *c;
	struct opts_getopt g;
	int i, opt;

	opts__getopt(&global_def, "+", &g);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			verbose++;
			break;
		case 'q':
			quiet = true;
			break;
		case G_VERSION:
			printf("bpfprof " BPFPROF_VERSION "\n");
			return check_stdout(0);
		case 'h':
			usage(stdout);
			return check_stdout(0);
		case G_MAN:
			return write_man(optarg);
		case G_LIST_OPTIONS:
			return list_options(optarg);
		case ':':
			p_err("option '%s' needs a value (see 'bpfprof --help')", argv[optind - 1]);
			return 2;
		default:
			if (optopt && optopt < 256)
				p_err("unknown option '-%c' (see 'bpfprof --help')", optopt);
			else
				p_err("unknown option '%s' (see 'bpfprof --help')", argv[optind - 1]);
			return 2;
		}
	}
	i = optind;
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "help")) {
		const struct cmd_def *d = i + 1 < argc ? find_def(argv[i + 1]) : NULL;

		if (i + 1 < argc && !d) {
			p_err("unknown command '%s' (see 'bpfprof --help')", argv[i + 1]);
			return 2;
		}
		if (d)
			opts__usage(d, stdout);
		else
			usage(stdout);
		return check_stdout(0);
	}
	for (c = cmds; c->def; c++) {
		if (strcmp(c->def->name, argv[i]))
			continue;
		if (c->needs_bpf && !wants_help(argc - i, argv + i) && !have_bpf_privileges()) {
			p_err("'%s' needs root (or CAP_BPF and CAP_PERFMON): try 'sudo bpfprof %s ...'",
			      c->def->name, c->def->name);
			return 1;
		}
		/* a SIGKILL must not leave bpfprof's end to its links' last close */
		if (c->needs_bpf && !wants_help(argc - i, argv + i) && fdshare__start())
			p_dbg("no bpfprof-fds: a SIGKILL leaves the links' removal to bpfprof's exit");
		optind = 0;	/* each command parses its own argv with getopt */
		return check_stdout(c->fn(argc - i, argv + i));
	}
	p_err("unknown command '%s' (see 'bpfprof --help')", argv[i]);
	return 2;
}
