// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skel/usdt.skel.h"
#include "bpf/events.h"
#include "base/log.h"
#include "base/util.h"
#include "object.h"
#include "usdt.h"

struct usdt_tracer {
	struct usdt_bpf *skel;
	struct probe_obj po;
};

int usdt__new(const struct usdt_opts *o, const struct shared_maps *maps, struct usdt_tracer **out)
{
	struct usdt_tracer *u = xcalloc(1, sizeof(*u));
	int err;

	u->skel = usdt_bpf__open();
	err = probe_obj__opened(&u->po, "USDT", false, u->skel);
	if (err)
		goto cleanup;
	u->skel->rodata->trace_all = o->trace_all;
	u->skel->rodata->gated = o->gated;
	err = probe_obj__load_skel(&u->po, u->skel, maps);
	if (err)
		goto cleanup;
	*out = u;
	return 0;
cleanup:
	usdt__free(u);
	return err;
}

int usdt__attach(struct usdt_tracer *u, const char *path, const char *provider, const char *name,
		 uint64_t cookie)
{
	LIBBPF_OPTS(bpf_usdt_opts, o, .usdt_cookie = cookie);

	return probe_obj__add_link(&u->po, bpf_program__attach_usdt(u->skel->progs.usdt_probe, -1,
								    path, provider, name, &o));
}

bool usdt__has_bpfprof(const char *path)
{
	struct usdt_notes notes;
	bool found = false;
	size_t i;

	if (usdt__notes(path, &notes))
		return false;
	for (i = 0; i < notes.n && !found; i++)
		found = !strcmp(notes.v[i].provider, "bpfprof") &&
			usdt__bpfprof_kind(notes.v[i].name);
	usdt__notes_free(&notes);
	return found;
}

int usdt__attach_bpfprof(struct usdt_tracer *u, const char *path)
{
	struct usdt_notes notes;
	size_t i, j;
	int n = 0;

	if (usdt__notes(path, &notes))
		return 0;
	for (i = 0; i < notes.n; i++) {
		uint32_t kind = usdt__bpfprof_kind(notes.v[i].name);

		if (strcmp(notes.v[i].provider, "bpfprof") || !kind)
			continue;
		/* libbpf attaches every site of provider:name at once */
		for (j = 0; j < i; j++)
			if (!strcmp(notes.v[j].provider, "bpfprof") &&
			    !strcmp(notes.v[j].name, notes.v[i].name))
				break;
		if (j < i)
			continue;
		if (usdt__attach(u, path, "bpfprof", notes.v[i].name, kind))
			p_warn("cannot attach the bpfprof:%s probes of %s: %s", notes.v[i].name, path,
			       strerror(errno));
		else
			n++;
	}
	usdt__notes_free(&notes);
	return n;
}

uint64_t usdt__lost(struct usdt_tracer *u, uint64_t *per_cpu, size_t ncpu)
{
	return probe_obj__lost(&u->po, per_cpu, ncpu);
}

void usdt__pause(struct usdt_tracer *u)
{
	probe_obj__pause(&u->po);
}

/*
 * libbpf keeps a USDT attachment's uprobe links inside its own link (whose
 * descriptor is -1): they are found by their program, each opened anew.
 */
size_t usdt__link_fds(const struct usdt_tracer *u, int **fds, size_t n)
{
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi), id = 0;

	memset(&pi, 0, sizeof(pi));
	if (!u || bpf_prog_get_info_by_fd(bpf_program__fd(u->skel->progs.usdt_probe), &pi, &len))
		return n;
	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info li;
		__u32 ll = sizeof(li);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;	/* gone meanwhile */
		memset(&li, 0, sizeof(li));
		if (bpf_link_get_info_by_fd(fd, &li, &ll) || li.prog_id != pi.id) {
			close(fd);
			continue;
		}
		*fds = xrealloc(*fds, (n + 1) * sizeof(**fds));
		(*fds)[n++] = fd;
	}
	return n;
}

void usdt__free(struct usdt_tracer *u)
{
	if (!u)
		return;
	probe_obj__free(&u->po);
	usdt_bpf__destroy(u->skel);
	free(u);
}
