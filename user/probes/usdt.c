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
#include "losses.h"
#include "usdt.h"

struct usdt_tracer {
	struct usdt_bpf *skel;
	struct bpf_link **links;
	size_t nlinks;
};

int usdt__new(const struct usdt_opts *o, const struct shared_maps *maps, struct usdt_tracer **out)
{
	struct usdt_tracer *u = xcalloc(1, sizeof(*u));
	int err;

	u->skel = usdt_bpf__open();
	if (!u->skel) {
		err = -errno;
		p_err("cannot open the USDT BPF object: %s", strerror(-err));
		goto cleanup;
	}
	u->skel->rodata->trace_all = o->trace_all;
	u->skel->rodata->gated = o->gated;
	err = bpf_map__reuse_fd(u->skel->maps.rb, maps->rb);
	if (!err)
		err = bpf_map__reuse_fd(u->skel->maps.tgids, maps->tgids);
	if (!err)
		err = bpf_map__reuse_fd(u->skel->maps.batches, maps->batches);
	if (!err)
		err = bpf_map__reuse_fd(u->skel->maps.recording, maps->recording);
	if (err) {
		p_err("cannot share the ring buffer with the USDT probes: %s", strerror(-err));
		goto cleanup;
	}
	err = usdt_bpf__load(u->skel);
	if (err) {
		p_err("cannot load the USDT BPF program: %s", strerror(-err));
		goto cleanup;
	}
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
	struct bpf_link *l;

	l = bpf_program__attach_usdt(u->skel->progs.usdt_probe, -1, path, provider, name, &o);
	if (!l)
		return -errno;
	u->links = xrealloc(u->links, (u->nlinks + 1) * sizeof(*u->links));
	u->links[u->nlinks++] = l;
	return 0;
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
	return losses__add((const uint64_t *)u->skel->bss->lost, per_cpu, ncpu);
}

void usdt__pause(struct usdt_tracer *u)
{
	__atomic_store_n(&u->skel->bss->paused, 1, __ATOMIC_SEQ_CST);
}

void usdt__free(struct usdt_tracer *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nlinks; i++)
		bpf_link__destroy(u->links[i]);
	free(u->links);
	usdt_bpf__destroy(u->skel);
	free(u);
}
