// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The probes a binary declares in .note.stapsdt: read from any file the
 * traced processes map (so from their owners), with libelf alone -- no BPF,
 * so the fuzz target (tests/fuzz/fuzz_usdt.c) links it as it is.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "base/log.h"
#include "base/util.h"
#include "usdt_notes.h"

/* The note type of SystemTap SDT probes in .note.stapsdt. */
#define NT_STAPSDT 3

int usdt__notes_elf(Elf *elf, struct usdt_notes *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int is64;

	memset(out, 0, sizeof(*out));
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
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
			/* (a string's end is tested before stepping past it: NULL + 1 is UB) */
			name = memchr(prov, 0, end - prov);
			if (!name || ++name >= end)
				continue;
			args = memchr(name, 0, end - name);
			if (!args || ++args >= end || !memchr(args, 0, end - args))
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
	return 0;
}

int usdt__notes(const char *path, struct usdt_notes *out)
{
	Elf *elf;
	int fd, err;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	fd = open_binary(path, NULL);
	if (fd < 0)
		return fd;
	/* read, not mapped: a file its owner truncates meanwhile must not be a SIGBUS */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = usdt__notes_elf(elf, out);
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
