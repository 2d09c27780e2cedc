// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/types.h>
#include "../bpf/events.h"
#include "elfsym.h"
#include "log.h"
#include "symbolize.h"

struct mapping {
	uint64_t start, end, pgoff;
	int file;		/* index into files, -1: anonymous or special */
	char *special;		/* "[vdso]", "[heap]", ... (not a file) */
};

struct proc_maps {
	uint32_t pid;
	struct mapping *v;
	size_t n;
	int reread;		/* misses since the last read: re-read at most a few times */
};

struct symfile {
	char *path;
	dev_t dev;
	ino_t ino;
	uint32_t module;	/* session module id */
	struct elf_funcs syms;	/* sorted by addr; offsets ascending with addr */
	int err;
};

struct ksym {
	uint64_t addr;
	char *name;
};

/* (module, symbol address) -> session function id */
struct fkey {
	uint64_t key;		/* module << 48 ^ addr, 0 = empty */
	uint32_t func;
};

struct symbolizer {
	struct bp_session *s;
	struct proc_maps *procs;
	size_t nprocs;
	struct symfile *files;
	size_t nfiles;
	struct ksym *ksyms;
	size_t nksyms;
	int kloaded;
	uint32_t kmodule;
	struct fkey *ftab;
	size_t ftab_cap, ftab_used;
	uint32_t truncated_func;
	bool have_truncated;
};

static uint64_t fkey_of(uint32_t module, uint64_t addr)
{
	return ((uint64_t)module + 1) << 48 ^ addr;
}

static size_t fslot(const struct symbolizer *sy, uint64_t key)
{
	size_t i = (key * 0x9e3779b97f4a7c15ull >> 20) & (sy->ftab_cap - 1);

	while (sy->ftab[i].key && sy->ftab[i].key != key)
		i = (i + 1) & (sy->ftab_cap - 1);
	return i;
}

static void fput(struct symbolizer *sy, uint64_t key, uint32_t func)
{
	size_t i;

	if ((sy->ftab_used + 1) * 2 > sy->ftab_cap) {
		struct fkey *old = sy->ftab;
		size_t oldcap = sy->ftab_cap;

		sy->ftab_cap = oldcap ? oldcap * 2 : 1024;
		sy->ftab = xcalloc(sy->ftab_cap, sizeof(*sy->ftab));
		for (i = 0; i < oldcap; i++)
			if (old[i].key)
				sy->ftab[fslot(sy, old[i].key)] = old[i];
		free(old);
	}
	i = fslot(sy, key);
	if (!sy->ftab[i].key)
		sy->ftab_used++;
	sy->ftab[i].key = key;
	sy->ftab[i].func = func;
}

static bool fget(const struct symbolizer *sy, uint64_t key, uint32_t *func)
{
	size_t i;

	if (!sy->ftab_cap)
		return false;
	i = fslot(sy, key);
	if (!sy->ftab[i].key)
		return false;
	*func = sy->ftab[i].func;
	return true;
}

int symbolizer__new(struct bp_session *s, struct symbolizer **out)
{
	struct symbolizer *sy = xcalloc(1, sizeof(*sy));
	size_t i;

	sy->s = s;
	/* Probed functions keep their ids when they show up in stacks. */
	for (i = 0; i < s->nfuncs; i++)
		fput(sy, fkey_of(s->funcs[i].module, s->funcs[i].addr), i);
	*out = sy;
	return 0;
}

void symbolizer__free(struct symbolizer *sy)
{
	size_t i, j;

	if (!sy)
		return;
	for (i = 0; i < sy->nprocs; i++) {
		for (j = 0; j < sy->procs[i].n; j++)
			free(sy->procs[i].v[j].special);
		free(sy->procs[i].v);
	}
	for (i = 0; i < sy->nfiles; i++) {
		free(sy->files[i].path);
		elfsym__free(&sy->files[i].syms);
	}
	for (i = 0; i < sy->nksyms; i++)
		free(sy->ksyms[i].name);
	free(sy->procs);
	free(sy->files);
	free(sy->ksyms);
	free(sy->ftab);
	free(sy);
}

static void load_kallsyms(struct symbolizer *sy);

static int file_index(struct symbolizer *sy, uint32_t pid, const char *path)
{
	char full[4200];
	struct stat st;
	size_t i;

	/* Through /proc/PID/root: the process may live in another mount namespace. */
	snprintf(full, sizeof(full), "/proc/%u/root%s", pid, path);
	if (stat(full, &st) && stat(path, &st))
		return -1;
	for (i = 0; i < sy->nfiles; i++)
		if (sy->files[i].dev == st.st_dev && sy->files[i].ino == st.st_ino)
			return i;
	sy->files = xrealloc(sy->files, (sy->nfiles + 1) * sizeof(*sy->files));
	memset(&sy->files[sy->nfiles], 0, sizeof(*sy->files));
	sy->files[sy->nfiles].path = xstrdup(path);
	sy->files[sy->nfiles].dev = st.st_dev;
	sy->files[sy->nfiles].ino = st.st_ino;
	sy->files[sy->nfiles].module = session__add_module(sy->s, path);
	sy->files[sy->nfiles].err = 1;	/* symbols not read yet */
	return sy->nfiles++;
}

static struct proc_maps *proc_of(struct symbolizer *sy, uint32_t pid)
{
	size_t i;

	for (i = 0; i < sy->nprocs; i++)
		if (sy->procs[i].pid == pid)
			return &sy->procs[i];
	return NULL;
}

static void read_maps(struct symbolizer *sy, struct proc_maps *pm)
{
	char path[64], line[4400];
	FILE *f;
	size_t j;

	for (j = 0; j < pm->n; j++)
		free(pm->v[j].special);
	pm->n = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pm->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8], *name;
		int off = 0;
		struct mapping *m;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &pgoff,
			   &off) < 4 || !off || perms[2] != 'x')
			continue;	/* only executable mappings hold code */
		name = line + off;
		name[strcspn(name, "\n")] = 0;
		pm->v = xrealloc(pm->v, (pm->n + 1) * sizeof(*pm->v));
		m = &pm->v[pm->n++];
		m->start = start;
		m->end = end;
		m->pgoff = pgoff;
		m->file = -1;
		m->special = NULL;
		if (name[0] == '/')
			m->file = file_index(sy, pm->pid, name);
		if (m->file < 0)	/* anonymous, [vdso], or a file gone since */
			m->special = xstrdup(name[0] ? name : "[anon]");
	}
	fclose(f);
}

void symbolizer__preload_kernel(struct symbolizer *sy)
{
	if (!sy->kloaded)
		load_kallsyms(sy);
}

void symbolizer__preload(struct symbolizer *sy, uint32_t pid)
{
	struct proc_maps *pm = proc_of(sy, pid);

	if (!pm) {
		sy->procs = xrealloc(sy->procs, (sy->nprocs + 1) * sizeof(*sy->procs));
		pm = &sy->procs[sy->nprocs++];
		memset(pm, 0, sizeof(*pm));
		pm->pid = pid;
	}
	read_maps(sy, pm);
}

void symbolizer__forget(struct symbolizer *sy, uint32_t pid)
{
	struct proc_maps *pm = proc_of(sy, pid);

	if (pm)
		read_maps(sy, pm);	/* exec: the new image is mapped now */
}

static const struct mapping *find_map(struct symbolizer *sy, uint32_t pid, uint64_t addr)
{
	struct proc_maps *pm = proc_of(sy, pid);
	size_t i;

	if (!pm) {
		symbolizer__preload(sy, pid);
		pm = proc_of(sy, pid);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < pm->n; i++)
			if (addr >= pm->v[i].start && addr < pm->v[i].end)
				return &pm->v[i];
		/* dlopen'd since: re-read, but not forever for a wild address */
		if (pass || pm->reread > 64)
			break;
		pm->reread++;
		read_maps(sy, pm);
	}
	return NULL;
}

static uint32_t add_func(struct symbolizer *sy, const char *name, uint32_t module, uint64_t addr,
			 uint64_t size, uint32_t flags)
{
	struct bp_func f = {
		.name = (char *)name,
		.module = module,
		.flags = flags,
		.addr = addr,
		.size = size,
		.nparams = -1,
	};
	uint32_t id = session__add_func(sy->s, &f);

	fput(sy, fkey_of(module, addr), id);
	return id;
}

/* A user address -> function id. */
static uint32_t user_frame(struct symbolizer *sy, uint32_t pid, uint64_t ip)
{
	const struct mapping *m = find_map(sy, pid, ip);
	struct symfile *sf;
	uint64_t off;
	char name[512];
	uint32_t id;
	size_t lo, hi;

	if (!m || m->file < 0) {
		const char *what = m ? m->special : "[unmapped]";
		uint32_t mod = session__add_module(sy->s, what);

		/* Unknown code keeps its address: never dropped, never merged wrongly. */
		if (fget(sy, fkey_of(mod, ip), &id))
			return id;
		snprintf(name, sizeof(name), "[unknown] %s+0x%" PRIx64, what,
			 m ? ip - m->start : ip);
		return add_func(sy, name, mod, ip, 0, BP_FUNC_SAMPLED | BP_FUNC_UNKNOWN);
	}
	sf = &sy->files[m->file];
	off = ip - m->start + m->pgoff;	/* file offset of the address */
	if (sf->err == 1) {
		char full[4200];

		snprintf(full, sizeof(full), "/proc/%u/root%s", pid, sf->path);
		sf->err = elfsym__read(full, &sf->syms);
		if (sf->err)
			sf->err = elfsym__read(sf->path, &sf->syms);
	}
	if (!sf->err) {
		/* the function whose file range holds off (offsets ascend with addresses) */
		lo = 0;
		hi = sf->syms.n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (sf->syms.v[mid].offset <= off)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo) {
			const struct elf_func *ef = &sf->syms.v[lo - 1];

			if (off < ef->offset + ef->size) {
				if (fget(sy, fkey_of(sf->module, ef->addr), &id))
					return id;
				return add_func(sy, ef->name, sf->module, ef->addr, ef->size,
						BP_FUNC_SAMPLED);
			}
		}
	}
	if (fget(sy, fkey_of(sf->module, off | 1ull << 47), &id))
		return id;
	{
		const char *base = strrchr(sf->path, '/');

		snprintf(name, sizeof(name), "[unknown] %s+0x%" PRIx64, base ? base + 1 : sf->path,
			 off);
	}
	return add_func(sy, name, sf->module, off | 1ull << 47, 0,
			BP_FUNC_SAMPLED | BP_FUNC_UNKNOWN);
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_kallsyms(struct symbolizer *sy)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	size_t cap = 0;

	sy->kloaded = 1;
	sy->kmodule = session__add_module(sy->s, "[kernel]");
	if (!f)
		return;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	/* ~200k lines: parsed by hand, sscanf would take a good part of a second */
	while (fgets_unlocked(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, *p, *name;

		addr = strtoull(line, &p, 16);
		if (!addr || *p != ' ')
			continue;
		type = p[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = p + 3;
		name[strcspn(name, " \t\n")] = 0;
		if (sy->nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			sy->ksyms = xrealloc(sy->ksyms, cap * sizeof(*sy->ksyms));
		}
		sy->ksyms[sy->nksyms].addr = addr;
		sy->ksyms[sy->nksyms].name = xstrdup(name);
		sy->nksyms++;
	}
	fclose(f);
	qsort(sy->ksyms, sy->nksyms, sizeof(*sy->ksyms), ksym_cmp);
}

static uint32_t kernel_frame(struct symbolizer *sy, uint64_t ip)
{
	size_t lo = 0, hi;
	uint32_t id;
	char name[64];

	if (!sy->kloaded)
		load_kallsyms(sy);
	hi = sy->nksyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sy->ksyms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		const struct ksym *k = &sy->ksyms[lo - 1];

		if (fget(sy, fkey_of(sy->kmodule, k->addr), &id))
			return id;
		return add_func(sy, k->name, sy->kmodule, k->addr, 0,
				BP_FUNC_SAMPLED | BP_FUNC_KERNEL);
	}
	if (fget(sy, fkey_of(sy->kmodule, ip), &id))
		return id;
	snprintf(name, sizeof(name), "[unknown] [kernel]+0x%" PRIx64, ip);
	return add_func(sy, name, sy->kmodule, ip, 0,
			BP_FUNC_SAMPLED | BP_FUNC_KERNEL | BP_FUNC_UNKNOWN);
}

/* Where a complete user stack begins: the C runtime's and the thread library's roots. */
static bool is_root(const char *name)
{
	static const char *const roots[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
		"clone", "clone3", "__clone", "__clone3", "_dl_start_user", "_dl_start", NULL,
	};
	size_t i;

	for (i = 0; roots[i]; i++)
		if (!strcmp(name, roots[i]))
			return true;
	return false;
}

uint32_t symbolizer__stack(struct symbolizer *sy, uint32_t pid, const uint64_t *ips,
			   uint32_t nuser, uint32_t nkern, bool *truncated)
{
	uint32_t path = 0, i, fid;

	*truncated = false;
	if (nuser) {
		fid = user_frame(sy, pid, ips[nuser - 1]);
		/*
		 * Complete if it reaches a root, or main() right below the outermost
		 * frame (libc's __libc_start_call_main is a local symbol that a
		 * stripped libc does not name).
		 */
		if (nuser >= BP_MAX_USER_FRAMES ||
		    !(is_root(session__func_name(sy->s, fid)) ||
		      (nuser >= 2 && !strcmp(session__func_name(sy->s, user_frame(sy, pid, ips[nuser - 2])),
					     "main")))) {
			*truncated = true;
			if (!sy->have_truncated) {
				sy->truncated_func = add_func(sy, "[truncated]",
							      session__add_module(sy->s, "[none]"),
							      0, 0, BP_FUNC_MARKER);
				sy->have_truncated = true;
			}
			path = session__path(sy->s, 0, sy->truncated_func);
		}
		path = session__path(sy->s, path, fid);
		for (i = nuser - 1; i-- > 0;)
			path = session__path(sy->s, path, user_frame(sy, pid, ips[i]));
	}
	/* The innermost kernel frames of a tracepoint sample are the BPF machinery itself. */
	while (nkern) {
		const char *name = session__func_name(sy->s, kernel_frame(sy, ips[nuser]));

		if (strncmp(name, "bpf_", 4) && strncmp(name, "__bpf_", 6) &&
		    strncmp(name, "__traceiter_", 12) && strncmp(name, "perf_trace_", 11))
			break;
		ips++;
		nkern--;
	}
	for (i = nuser + nkern; i-- > nuser;)
		path = session__path(sy->s, path, kernel_frame(sy, ips[i]));
	return path;
}
