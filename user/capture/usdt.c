// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
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

/* The note type of SystemTap SDT probes in .note.stapsdt. */
#define NT_STAPSDT 3

int usdt__notes(const char *path, struct usdt_notes *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf = NULL;
	int fd, err = 0, is64;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	fd = open_binary(path, NULL);
	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	is64 = gelf_getclass(elf) == ELFCLASS64;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *d = (const char *)data->d_buf + desc_off, *end = d + nh.n_descsz;
			size_t asz = is64 ? 8 : 4;
			struct usdt_note *n;
			const char *prov, *name, *args;

			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) ||
			    nh.n_descsz < 3 * asz + 3)
				continue;
			/* pc, base, semaphore, then three NUL-terminated strings */
			prov = d + 3 * asz;
			name = memchr(prov, 0, end - prov);
			if (!name++ || name >= end)
				continue;
			args = memchr(name, 0, end - name);
			if (!args++ || args >= end || !memchr(args, 0, end - args))
				continue;
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			n = &out->v[out->n++];
			n->pc = 0;
			n->semaphore = 0;
			memcpy(&n->pc, d, asz);
			memcpy(&n->semaphore, d + 2 * asz, asz);
			n->provider = xstrdup(prov);
			n->name = xstrdup(name);
			n->args = xstrdup(args);
		}
	}
cleanup:
	elf_end(elf);
	close(fd);
	return err;
}

void usdt__notes_free(struct usdt_notes *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->n; i++) {
		free(n->v[i].provider);
		free(n->v[i].name);
		free(n->v[i].args);
	}
	free(n->v);
	memset(n, 0, sizeof(*n));
}

uint32_t usdt__bpfprof_kind(const char *name)
{
	static const struct {
		const char *name;
		uint32_t kind;
	} k[] = {
		{ "mark", BP_USDT_MARK }, { "info", BP_USDT_INFO }, { "info_str", BP_USDT_INFO_STR },
		{ "event", BP_USDT_EVENT }, { "span_begin", BP_USDT_SPAN_BEGIN },
		{ "span_end", BP_USDT_SPAN_END }, { "start", BP_USDT_START }, { "stop", BP_USDT_STOP },
	};
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (!strcmp(name, k[i].name))
			return k[i].kind;
	return 0;
}

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
