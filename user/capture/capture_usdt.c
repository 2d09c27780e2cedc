// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The capture's USDT probes: the bpfprof.h probes of every traced binary
 * (no flag needed) and the -U probes; the USDT object is loaded on first need.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "capture.h"
#include "target/launch.h"
#include "probes/trace.h"
#include "probes/usdt.h"
#include "cpython/cpython.h"
#include "bpf/events.h"
#include "base/log.h"
#include "base/util.h"
#include "symbols/binfile.h"
#include "cost/overhead.h"
#include "symbols/placement.h"
#include "symbols/select.h"
#include "symbols/symbolize.h"
#include "symbols/ustrings.h"
#include "internal.h"

/*
 * The USDT object is loaded only when a probe can be met (-U, --gated, a
 * bpfprof.h probe in a traced binary, now or in one exec'd later): ~11 ms of
 * a short recording otherwise.
 */
static pid_t target_pid(const struct capture *c)
{
	return c->o.npids ? c->o.pids[0] : 0;
}

int capture_usdt_ensure(struct capture *c)
{
	struct shared_maps maps;

	if (c->usd)
		return 0;
	tracer__shared_maps(c->tr, &maps);
	return usdt__new(&c->uopts, &maps, &c->usd);
}

void capture_usdt_attach_bpfprof(struct capture *c, const char *path, pid_t pid)
{
	/* the notes are read and the probes attached through one descriptor */
	if (binfile__pin(path, pid, &path))
		return;
	if (usdt__has_bpfprof(path) && !capture_usdt_ensure(c)) {
		usdt__attach_bpfprof(c->usd, path);
		ustrings__add_file(c->strings, path);
	}
}

/*
 * The argument types after a -U probe's name, "(str,int,str)": bit i set
 * for a string argument i (bpf/events.h BP_USDT_STR_ARGS).  Cuts them off
 * `spec`.  -EINVAL (printed) for anything else.
 */
static int parse_arg_types(char *spec, const char *whole, uint64_t *mask)
{
	char *open = strchr(spec, '('), *save = NULL, *t;
	size_t len, n = 0, nstr = 0;

	*mask = 0;
	if (!open)
		return 0;
	len = strlen(open);
	if (len < 2 || open[len - 1] != ')')
		goto bad;
	*open = open[len - 1] = 0;
	for (t = strtok_r(open + 1, ",", &save); t; t = strtok_r(NULL, ",", &save), n++) {
		if (n >= 6)
			goto bad;
		if (!strcmp(t, "str")) {
			*mask |= 1ull << n;
			nstr++;
		} else if (strcmp(t, "int")) {
			goto bad;
		}
	}
	if (nstr <= BP_USDT_MAX_STR_ARGS)
		return 0;
bad:
	p_err("invalid -U '%s': argument types are (TYPE,...), TYPE str or int, at most six, "
	      "at most %d str", whole, BP_USDT_MAX_STR_ARGS);
	return -EINVAL;
}

/* The session's name of the -U probe whose cookie carries index s->nprobes. */
static void add_probe_name(struct bp_session *s, const char *provider, const char *name)
{
	s->probes = xrealloc(s->probes, (s->nprobes + 1) * sizeof(*s->probes));
	s->probes[s->nprobes] = xmalloc(strlen(provider) + strlen(name) + 2);
	sprintf(s->probes[s->nprobes++], "%s:%s", provider, name);
}

/*
 * One -U: PROVIDER:NAME in the main executable, or LIB:PROVIDER:NAME in the
 * files LIB names; "(str,int,...)" after NAME says which arguments are strings.
 */
static int attach_usdt(struct capture *c, const char *spec)
{
	char *copy = xstrdup(spec), *parts[3] = { NULL }, **paths = NULL, *p;
	const char *exe;
	size_t np = 0, npaths = 0, nok = 0, j;
	struct bp_session *s = c->s;
	uint64_t strs, cookie;
	int err = parse_arg_types(copy, spec, &strs);

	if (err)
		goto out;
	for (p = copy; np < 3 && p; np++) {
		parts[np] = p;
		p = strchr(p, ':');
		if (p)
			*p++ = 0;
	}
	if ((np != 2 && np != 3) || p || !*parts[np - 1] || !*parts[np - 2]) {
		p_err("invalid -U '%s': PROVIDER:NAME or LIB:PROVIDER:NAME", spec);
		err = -EINVAL;
		goto out;
	}
	cookie = BP_USDT_OTHER | (uint64_t)s->nprobes << 8 | strs << 32;
	if (np == 3) {
		err = select__libraries(parts[0], c->exe, target_pid(c), &paths, &npaths);
		/* a file name not loaded yet: attached when the process loads one */
		if (err == -ENOENT && !strchr(parts[0], '/') &&
		    capture_dl_defer_usdt(c, spec, parts[0], parts[1], parts[2], cookie)) {
			add_probe_name(s, parts[1], parts[2]);
			err = 0;
			goto out;
		}
		if (err) {
			p_err("no shared library matches '%s' (in -U '%s')", parts[0], spec);
			err = -ENOENT;
			goto out;
		}
	} else if (c->exe && !binfile__pin(c->exe, target_pid(c), &exe)) {
		paths = xmalloc(sizeof(*paths));
		paths[npaths++] = xstrdup(exe);
	}
	for (j = 0; j < npaths; j++) {
		if (!usdt__attach(c->usd, paths[j], parts[np - 2], parts[np - 1], cookie))
			nok++;
		free(paths[j]);
	}
	free(paths);
	if (nok) {
		add_probe_name(s, parts[np - 2], parts[np - 1]);
	} else {
		p_err("no USDT probe %s:%s in %s", parts[np - 2], parts[np - 1],
		      np == 3 ? parts[0] : (c->exe ? c->exe : "the executable"));
		err = -ESRCH;
	}
out:
	free(copy);
	return err;
}

/* The bpfprof.h probes of every traced binary (no flag needed), and the -U probes. */
int capture_attach_usdts(struct capture *c)
{
	const char *exe = NULL;
	size_t i;
	int err;

	/* pinned: the same string as the main executable's module when it has one */
	if (c->exe && !binfile__pin(c->exe, target_pid(c), &exe))
		capture_usdt_attach_bpfprof(c, exe, 0);
	for (i = 0; i < c->ps.nmods; i++)
		if (!exe || strcmp(c->ps.mods[i].path, exe))
			capture_usdt_attach_bpfprof(c, c->ps.mods[i].path, 0);
	if (c->o.nusdts) {
		err = capture_usdt_ensure(c);
		if (err)
			return err;
	}
	for (i = 0; i < c->o.nusdts; i++) {
		err = attach_usdt(c, c->o.usdts[i]);
		if (err)
			return err;
	}
	return 0;
}
