// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* list: the functions a pattern selects, so a user can build -F/-N patterns. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmds.h"
#include "options.h"
#include "base/util.h"
#include "symbols/debugsyms.h"
#include "symbols/elfsym.h"
#include "target/launch.h"
#include "base/log.h"
#include "symbols/procmaps.h"
#include "symbols/select.h"
#include "symbols/placement.h"
#include "model/session.h"
#include "symbols/usdt_notes.h"

static const struct opt_def list_rows[] = {
	{ "pid", required_argument, 'p', "PID",
	  "a running process (its executable and mapped libraries)", "@pids" },
	OPT_ARG("exclude", 'N', "GLOB", "leave out matches of GLOB"),
	OPT_FLAG("args", 'A', "place probes as 'record --args' does (argument\n"
		 "registers kept)"),
	OPT_END
};

const struct cmd_def list_def = {
	.name = "list",
	.summary = "list the functions that can be traced in a binary or process",
	.synopsis = "[options] BINARY [[LIB:]GLOB]...\n"
		    "[options] --pid PID [[LIB:]GLOB]...",
	.about = "List the functions that 'record -F GLOB' would trace: address, size, where\n"
		 "the entry probe goes and the instruction there (\"+3:push\": 3 bytes in, past\n"
		 "a harmless prefix), the probe's path (emulated by the kernel, nop5, or\n"
		 "single-step: about 3x dearer), why the probe could not move further\n"
		 "(docs/probe-cost.md), the file and the name.  Without GLOB: every\n"
		 "function of the executable.  A summary of the paths goes to stderr.\n"
		 "'source' says where the name comes from: symtab, dynsym, build-id or\n"
		 "debuglink (a separate debug file), minidebuginfo (.gnu_debugdata), gopclntab\n"
		 "(Go), or eh_frame (found by its unwind information only, named FILE+0xADDR).",
	.tables = (const struct opt_def *const[]){ list_rows, opts_debug, opts_help, NULL },
};

struct file_list {
	char ***files;
	size_t *n;
};

/* A mapped file not in the list yet joins it. */
static int add_mapped_file(void *ctx, const struct procmap *m)
{
	struct file_list *l = ctx;
	size_t j;

	if (m->path[0] != '/')
		return 0;
	for (j = 0; j < *l->n && strcmp((*l->files)[j], m->path); j++)
		;
	if (j == *l->n) {
		*l->files = xrealloc(*l->files, (*l->n + 1) * sizeof(**l->files));
		(*l->files)[(*l->n)++] = xstrdup(m->path);
	}
	return 0;
}

/* USDT probes of the executable and the listed libraries (or all a pid maps). */
static void list_usdt(const struct bp_session *s, const char *exe, pid_t pid)
{
	char **files = NULL;
	size_t nfiles = 0, i, j, total = 0;

	files = xrealloc(files, sizeof(*files));
	files[nfiles++] = xstrdup(exe);
	for (i = 0; i < s->nmodules; i++) {
		files = xrealloc(files, (nfiles + 1) * sizeof(*files));
		files[nfiles++] = xstrdup(s->modules[i].path);
	}
	if (pid)
		procmaps__each(pid, add_mapped_file, &(struct file_list){ &files, &nfiles });
	for (i = 0; i < nfiles; i++) {
		struct usdt_notes notes;
		const char *base = strrchr(files[i], '/');
		bool dup = false;

		for (j = 0; j < i; j++)
			dup |= !strcmp(files[j], files[i]);
		if (dup || usdt__notes(files[i], &notes) || !notes.n)
			continue;
		if (!total)
			printf("\n%-18s %-30s %-30s %s\n", "usdt address", "file", "probe", "arguments");
		for (j = 0; j < notes.n; j++) {
			char probe[256];

			snprintf(probe, sizeof(probe), "%s:%s", notes.v[j].provider, notes.v[j].name);
			printf("%#-18llx %-30s %-30s %s\n", (unsigned long long)notes.v[j].pc,
			       base ? base + 1 : files[i], probe, notes.v[j].args);
		}
		total += notes.n;
		usdt__notes_free(&notes);
	}
	if (total)
		fprintf(stderr, "bpfprof: %zu USDT probe sites (trace with -U [LIB:]PROVIDER:NAME)\n",
			total);
	for (i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
}

/* The selected functions, a row each, and their probe paths' summary on stderr. */
static void list_funcs(const struct bp_session *s)
{
	char line[256];
	size_t i;

	printf("%-18s %8s %-14s %-11s %-13s %-13s %-30s %s\n", "address", "size", "probe", "path",
	       "why", "source", "file", "function");
	for (i = 0; i < s->nfuncs; i++) {
		const struct bp_func *f = &s->funcs[i];
		const char *path = s->modules[f->module].path, *base = strrchr(path, '/');
		const char *how = select__probe_path(f);
		char probe[32];

		/* moved past a prefix: how far, and the instruction the probe sits on */
		if (f->flags & BP_FUNC_GO_CHECKED)
			snprintf(probe, sizeof(probe), "gocheck+%s",
				 elfsym__insn_name(f->flags & BP_FUNC_INSN_MASK));
		else if (f->probe_skip)
			snprintf(probe, sizeof(probe), "+%u:%s", f->probe_skip,
				 elfsym__insn_name(f->flags & BP_FUNC_INSN_MASK));
		else
			snprintf(probe, sizeof(probe), "%s",
				 elfsym__insn_name(f->flags & BP_FUNC_INSN_MASK));
		if ((f->flags & BP_FUNC_INSN_MASK) == ELFSYM_INSN_REFUSED)
			how = "refused";
		printf("%#-18llx %8llu %-14s %-11s %-13s %-13s %-30s %s\n",
		       (unsigned long long)f->addr, (unsigned long long)f->size, probe, how,
		       f->probe_why && strcmp(how, "emulated") ? f->probe_why : "-",
		       debugsyms__source_name(f->source),
		       base ? base + 1 : path, f->name);
	}
	fprintf(stderr, "bpfprof: %zu functions in %zu file%s\n", s->nfuncs, s->nmodules,
		s->nmodules == 1 ? "" : "s");
	if (placement__paths(s, line, sizeof(line)))
		fprintf(stderr, "bpfprof: %s\n", line);
}

int cmd_list(int argc, char **argv)
{
	struct select_opts so = { 0 };
	struct probe_set ps = { 0 };
	struct bp_session s;
	char **excl = NULL, *exe = NULL;
	size_t nexcl = 0;
	struct cmd_opts co = { .def = &list_def };
	struct opts_getopt g;
	unsigned long v;
	pid_t pid = 0;
	int c, err = 0;

	session__init(&s);
	opts__getopt(&list_def, "+", &g);
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			err = parse_count("--pid", optarg, 1, INT_MAX, &v);
			if (err)
				goto cleanup;
			pid = v;
			break;
		case 'A':
			so.keep_args = true;
			break;
		case 'N':
			excl = xrealloc(excl, (nexcl + 1) * sizeof(*excl));
			excl[nexcl++] = optarg;
			break;
		default:	/* --debug-dir, -h, getopt's errors */
			err = opts__take(&co, c, argv);
			if (!err)
				break;
			if (err > 0)
				err = 0;
			goto cleanup;
		}
	}
	opts__apply(&co);
	if (pid) {
		char link[64], buf[PATH_MAX];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", pid);
		n = readlink(link, buf, sizeof(buf) - 1);
		if (n < 0) {
			p_err("cannot read pid %d: %s", pid,
			      errno == ENOENT ? "no such process" : strerror(errno));
			err = -ESRCH;
			goto cleanup;
		}
		exe = xstrdup(link);
	} else {
		if (optind >= argc) {
			opts__usage(&list_def, stderr);
			err = -EINVAL;
			goto cleanup;
		}
		err = launch__resolve_file(argv[optind], &exe);
		if (err) {
			p_err("cannot read '%s': %s", argv[optind],
			      err == -ENOENT ? "no such file or command" : strerror(-err));
			goto cleanup;
		}
		optind++;
	}
	so.exe = exe;
	so.pid = pid;
	so.list_only = true;
	so.includes = argv + optind;
	so.nincludes = argc - optind;
	so.excludes = excl;
	so.nexcludes = nexcl;
	so.debug = &co.debug;
	err = select__resolve(&so, &s, &ps);
	if (err)
		goto cleanup;
	list_funcs(&s);
	list_usdt(&s, exe, pid);
cleanup:
	probe_set__free(&ps);
	session__free(&s);
	free(excl);
	free(exe);
	opts__free(&co);
	return err ? (err == -EINVAL ? 2 : 1) : 0;
}
