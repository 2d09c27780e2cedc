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
#include "symbols/elfsym.h"
#include "capture/launch.h"
#include "base/log.h"
#include "symbols/select.h"
#include "model/session.h"
#include "capture/usdt.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: bpfprof list [options] BINARY [[LIB:]GLOB]...\n"
		   "       bpfprof list [options] --pid PID [[LIB:]GLOB]...\n\n"
		   "List the functions that 'record -F GLOB' would trace: file, address, size,\n"
		   "the first instruction (which decides the probe's cost: push/nop are\n"
		   "emulated by the kernel, others are single-stepped) and the name.\n"
		   "Without GLOB: every function of the executable.\n\n"
		   "options:\n"
		   "  -p, --pid PID   a running process (its executable and mapped libraries)\n"
		   "  -N GLOB         leave out matches of GLOB\n"
		   "  -h, --help      this help\n");
}

/* USDT probes of the executable and the listed libraries (or all a pid maps). */
static void list_usdt(const struct bp_session *s, const char *exe, pid_t pid)
{
	char **files = NULL, line[4200], path[64];
	size_t nfiles = 0, i, j, total = 0;
	FILE *f;

	files = xrealloc(files, sizeof(*files));
	files[nfiles++] = xstrdup(exe);
	for (i = 0; i < s->nmodules; i++) {
		files = xrealloc(files, (nfiles + 1) * sizeof(*files));
		files[nfiles++] = xstrdup(s->modules[i].path);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = pid ? fopen(path, "re") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		for (j = 0; j < nfiles && strcmp(files[j], p); j++)
			;
		if (j < nfiles)
			continue;
		files = xrealloc(files, (nfiles + 1) * sizeof(*files));
		files[nfiles++] = xstrdup(p);
	}
	if (f)
		fclose(f);
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

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "exclude", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL },
	};
	struct select_opts so = { 0 };
	struct probe_set ps = { 0 };
	struct bp_session s;
	char **excl = NULL, *exe = NULL;
	size_t nexcl = 0, i;
	pid_t pid = 0;
	int c, err = 0;

	session__init(&s);
	while ((c = getopt_long(argc, argv, "+p:N:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = atoi(optarg);
			if (pid <= 0) {
				p_err("invalid pid '%s'", optarg);
				err = -EINVAL;
				goto cleanup;
			}
			break;
		case 'N':
			excl = xrealloc(excl, (nexcl + 1) * sizeof(*excl));
			excl[nexcl++] = optarg;
			break;
		case 'h':
			usage(stdout);
			goto cleanup;
		default:
			fprintf(stderr, "see 'bpfprof list --help'\n");
			err = -EINVAL;
			goto cleanup;
		}
	}
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
			usage(stderr);
			err = -EINVAL;
			goto cleanup;
		}
		err = launch__resolve(argv[optind], &exe);
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
	err = select__resolve(&so, &s, &ps);
	if (err)
		goto cleanup;
	printf("%-18s %8s %-14s %-30s %s\n", "address", "size", "entry", "file", "function");
	for (i = 0; i < s.nfuncs; i++) {
		const struct bp_func *f = &s.funcs[i];
		const char *path = s.modules[f->module].path, *base = strrchr(path, '/');

		char entry[32];

		/* probed after endbr64: say which instruction the probe sits on */
		snprintf(entry, sizeof(entry), "%s%s",
			 f->flags & BP_FUNC_SKIP_ENDBR ? "endbr+" :
			 f->flags & BP_FUNC_GO_CHECKED ? "gocheck+" : "",
			 elfsym__insn_name(f->flags & BP_FUNC_INSN_MASK));
		printf("%#-18llx %8llu %-14s %-30s %s\n", (unsigned long long)f->addr,
		       (unsigned long long)f->size, entry, base ? base + 1 : path, f->name);
	}
	fprintf(stderr, "bpfprof: %zu functions in %zu file%s\n", s.nfuncs, s.nmodules,
		s.nmodules == 1 ? "" : "s");
	list_usdt(&s, exe, pid);
cleanup:
	probe_set__free(&ps);
	session__free(&s);
	free(excl);
	free(exe);
	return err ? (err == -EINVAL ? 2 : 1) : 0;
}
