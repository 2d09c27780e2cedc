// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DWARF unwinding of copied user stacks with libdw's Dwfl: a custom
 * Dwfl_Thread_Callbacks whose registers and memory are the sample's copy
 * (as perf's util/unwind-libdw.c does), and modules reported from the
 * /proc/PID/maps text, one Dwfl per process (the few most recently used).
 *
 * libdw ends an unwind "normally" both when the CFI says the return address
 * is undefined (the outermost frame: _start, clone3) and when it could not
 * read the saved return address.  The second must not pass for a complete
 * stack, so the memory callback notes every read outside the copy, and a
 * read outside it during the last step makes the stack truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "base/log.h"
#include "debugsyms.h"
#include "base/util.h"
#include "unwind.h"

/* libdwfl's debuginfo_path: the debug dirs (debugsyms__search_path), set by the first unwinder */
static char *debug_path;

#define MAX_PROCS	32	/* Dwfl kept: each holds its modules' files open */

struct uproc {
	uint32_t pid;		/* 0: empty slot */
	Dwfl *dwfl;
	uint64_t maps_gen;
	uint64_t last_use;
	bool attached;
	struct unwinder *u;
	char *vdso;		/* this Dwfl's copy of the vDSO image (libelf reads it in place) */
	/* the sample being unwound */
	uint32_t tid;
	const struct bp_ustack *us;
	bool oob;		/* a read outside the copy since the last frame */
	uint64_t oob_addr;
};

struct unwinder {
	struct uproc procs[MAX_PROCS];
	uint64_t tick;
	Elf *arch_elf;		/* our own executable: tells libdw the architecture */
	int arch_fd;
	const char *vdso;	/* our vDSO: the same image as every 64-bit process's */
	size_t vdso_len;
	char *img_name;		/* unwinder__set_image(): a file given as an image in memory */
	const void *img;
	size_t img_len;
	uint64_t counts[UNWIND_NEND];
};

static const char *const end_str[UNWIND_NEND] = {
	[UNWIND_COMPLETE] = "complete",
	[UNWIND_STACK_CUT] = "stack copy too small (--stack-size)",
	[UNWIND_NO_STACK] = "memory outside the stack copy",
	[UNWIND_NO_CFI] = "no unwind information",
	[UNWIND_TOO_DEEP] = "too deep",
	[UNWIND_NO_MAPS] = "mappings unknown",
};

const char *unwind_end_str(enum unwind_end end)
{
	return end < UNWIND_NEND ? end_str[end] : "?";
}

uint64_t unwinder__count(const struct unwinder *u, enum unwind_end end)
{
	return u && end < UNWIND_NEND ? u->counts[end] : 0;
}

/* The [vdso] mapping of this process: its range in /proc/self/maps. */
static void find_own_vdso(struct unwinder *u)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512];
	FILE *f;

	if (!base)
		return;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;

		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && start == base &&
		    strstr(line, "[vdso]")) {
			u->vdso = (const char *)base;
			u->vdso_len = end - start;
			break;
		}
	}
	fclose(f);
}

int unwinder__new(struct unwinder **out)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));
	int err;

	elf_version(EV_CURRENT);
	if (!debug_path)
		debug_path = debugsyms__search_path();
	u->arch_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (u->arch_fd < 0) {
		err = -errno;
		goto cleanup;
	}
	u->arch_elf = elf_begin(u->arch_fd, ELF_C_READ_MMAP, NULL);
	if (!u->arch_elf) {
		err = -EINVAL;
		goto cleanup;
	}
	find_own_vdso(u);
	*out = u;
	return 0;
cleanup:
	unwinder__free(u);
	return err;
}

static void proc_clear(struct uproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	free(p->vdso);
	memset(p, 0, sizeof(*p));
}

void unwinder__free(struct unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < MAX_PROCS; i++)
		proc_clear(&u->procs[i]);
	if (u->arch_elf)
		elf_end(u->arch_elf);
	if (u->arch_fd >= 0)
		close(u->arch_fd);
	free(u->img_name);
	free(u);
}

void unwinder__forget(struct unwinder *u, uint32_t pid)
{
	size_t i;

	for (i = 0; u && i < MAX_PROCS; i++)
		if (u->procs[i].pid == pid)
			proc_clear(&u->procs[i]);
}

/*
 * Dwfl_Callbacks.find_elf: the file as the process sees it (through
 * /proc/PID/root: another mount namespace), else by its path here; the vDSO
 * from our own copy.  The module's userdata is its struct uproc.
 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct uproc *p = *userdata;
	char path[4200];
	int fd;

	*file_name = NULL;
	*elfp = NULL;
	if (!strcmp(name, "[vdso]")) {
		if (!p->u->vdso)
			return -1;
		if (!p->vdso) {
			p->vdso = xmalloc(p->u->vdso_len);
			memcpy(p->vdso, p->u->vdso, p->u->vdso_len);
		}
		*elfp = elf_memory(p->vdso, p->u->vdso_len);
		return -1;
	}
	if (p->u->img_name && !strcmp(name, p->u->img_name)) {
		*elfp = elf_memory((char *)p->u->img, p->u->img_len);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%u/root%s", p->pid, name);
	fd = open_binary(path, NULL);
	if (fd < 0) {
		snprintf(path, sizeof(path), "%s", name);
		fd = open_binary(path, NULL);
	}
	if (fd < 0)
		return fd;
	*file_name = xstrdup(path);
	/*
	 * Our Elf, read with pread (libdwfl's own would map the file): the
	 * file's owner truncating it meanwhile must not be a SIGBUS.  libdwfl
	 * keeps fd open with it and closes both.
	 */
	*elfp = elf_begin(fd, ELF_C_READ, NULL);
	return fd;
}

void unwinder__set_image(struct unwinder *u, const char *name, const void *img, size_t len)
{
	free(u->img_name);
	u->img_name = name ? xstrdup(name) : NULL;
	u->img = img;
	u->img_len = len;
}

/*
 * .debug_frame from DIR/.build-id/xx/yyyy.debug of each --debug-dir and
 * /usr/lib/debug only (debug_path): never a network lookup (debuginfod).
 * Opened by us, not by libdwfl, so that a link planted in a debug dir to a
 * device is refused before it is opened (base/safeopen.h, issue 27).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	char hex[2 * 64 + 1], *dirs, *dir, *save = NULL, *path = NULL;
	int len, i, fd = -1;

	(void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc;
	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len < 2 || len > 64)
		return -1;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	dirs = xstrdup(debug_path ? debug_path : "");
	for (dir = strtok_r(dirs, ":", &save); dir && fd < 0; dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/')
			continue;
		free(path);
		path = xasprintf("%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
		fd = open_binary(path, NULL);
	}
	free(dirs);
	if (fd >= 0)
		*debuginfo_file_name = path;
	else
		free(path);
	return fd;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debug_path,
};

static void report(struct uproc *p, const char *name, uint64_t low, uint64_t high)
{
	Dwfl_Module *mod = dwfl_report_module(p->dwfl, name, low, high);
	void **userdata;

	if (!mod)
		return;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = p;
}

/*
 * The modules: each file's consecutive mappings make one, from the mapping
 * of its ELF header (offset 0) to its last; the vDSO one more.  Files
 * deleted since they were mapped are left out: another file may have their
 * name now, and wrong CFI is worse than none.
 */
static void report_maps(struct uproc *p, const char *maps)
{
	char last[4096] = "";
	uint64_t low = 0, high = 0, last_ino = 0;
	const char *line, *nl;

	dwfl_report_begin(p->dwfl);
	for (line = maps; line && *line; line = nl ? nl + 1 : NULL) {
		unsigned long long start, end, pgoff, ino;
		int off = 0;
		char name[4096];
		size_t len;

		nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
		if (sscanf(line, "%llx-%llx %*s %llx %*s %llu %n", &start, &end, &pgoff, &ino,
			   &off) < 4 || !off || (size_t)off > len)
			continue;
		len -= off;
		if (len >= sizeof(name))
			continue;
		memcpy(name, line + off, len);
		name[len] = 0;
		if (!strcmp(name, "[vdso]")) {
			report(p, name, start, end);
			continue;
		}
		if (name[0] != '/' || !ino || strstr(name, " (deleted)"))
			continue;
		if (last[0] && ino == last_ino && !strcmp(name, last) && start >= high) {
			high = end;	/* another segment of the same file */
			continue;
		}
		if (last[0])
			report(p, last, low, high);
		last[0] = 0;
		if (pgoff)
			continue;	/* no ELF header mapped before it: cannot place the file */
		memcpy(last, name, len + 1);
		last_ino = ino;
		low = start;
		high = end;
	}
	if (last[0])
		report(p, last, low, high);
	dwfl_report_end(p->dwfl, NULL, NULL);
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uproc *p = arg;
	uint64_t sp = p->us->regs[BP_UREG_SP];

	if (addr >= sp && addr - sp <= p->us->len && p->us->len - (addr - sp) >= 8) {
		memcpy(result, (const char *)(p->us + 1) + (addr - sp), 8);
		return true;
	}
	p->oob = true;
	p->oob_addr = addr;
	return false;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	return 0;	/* only get_thread is used: the sampled thread */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct uproc *p = arg;

	*thread_argp = p;
	return (uint32_t)tid == p->tid;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct uproc *p = arg;

	return dwfl_thread_state_registers(thread, 0, BP_UREGS, (const Dwarf_Word *)p->us->regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct walk {
	struct uproc *p;
	uint64_t *ips;
	uint32_t n, max;
	bool too_deep;
	Dwarf_Addr last_pc;
};

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	/* reads from here on belong to the unwinding of this frame */
	w->p->oob = false;
	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (w->n == w->max) {
		w->too_deep = true;
		return DWARF_CB_ABORT;
	}
	/* a return address: the call is the instruction before it */
	w->ips[w->n++] = activation ? pc : pc - 1;
	w->last_pc = w->ips[w->n - 1];
	return DWARF_CB_OK;
}

/*
 * Is pc in the first instructions of its module's entry point?  The dynamic
 * loader's _start (RTLD_START) has no CFI; a stack that ends there ends at
 * its real root.
 */
static bool at_entry(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	GElf_Ehdr ehdr;
	Dwarf_Addr bias;
	Elf *elf;

	if (!mod)
		return false;
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf || !gelf_getehdr(elf, &ehdr) || !ehdr.e_entry)
		return false;
	return pc >= ehdr.e_entry + bias && pc < ehdr.e_entry + bias + 16;
}

static struct uproc *proc_get(struct unwinder *u, uint32_t pid, const char *maps, uint64_t gen)
{
	struct uproc *p = NULL, *lru = &u->procs[0];
	size_t i;

	for (i = 0; i < MAX_PROCS && !p; i++) {
		if (u->procs[i].pid == pid)
			p = &u->procs[i];
		else if (u->procs[i].last_use < lru->last_use)
			lru = &u->procs[i];
	}
	if (!p) {
		p = lru;
		proc_clear(p);
		p->pid = pid;
		p->u = u;
		p->dwfl = dwfl_begin(&dwfl_callbacks);
		if (!p->dwfl) {
			p->pid = 0;
			return NULL;
		}
		p->maps_gen = gen + 1;	/* not reported yet */
	}
	p->last_use = ++u->tick;
	if (p->maps_gen != gen) {
		/* first use, or the process mapped something since: modules kept unchanged keep their CFI */
		report_maps(p, maps);
		p->maps_gen = gen;
		if (!p->attached)
			p->attached = dwfl_attach_state(p->dwfl, u->arch_elf, pid, &thread_callbacks, p);
	}
	return p->attached ? p : NULL;
}

uint32_t unwinder__unwind(struct unwinder *u, uint32_t pid, uint32_t tid, const char *maps,
			  uint64_t maps_gen, const struct bp_ustack *us, uint64_t *ips, uint32_t max,
			  enum unwind_end *end)
{
	struct walk w = { .ips = ips, .max = max };
	struct uproc *p;
	int rc;

	*end = UNWIND_NO_MAPS;
	p = maps ? proc_get(u, pid, maps, maps_gen) : NULL;
	if (!p) {
		u->counts[*end]++;
		return 0;
	}
	w.p = p;
	p->tid = tid;
	p->us = us;
	p->oob = false;
	rc = dwfl_getthread_frames(p->dwfl, tid, frame_cb, &w);
	if (w.too_deep) {
		*end = UNWIND_TOO_DEEP;
	} else if (p->oob) {
		uint64_t top = us->regs[BP_UREG_SP] + us->len;

		*end = (us->flags & BP_USTACK_CUT) && p->oob_addr >= top &&
		       p->oob_addr < top + BP_MAX_USTACK ? UNWIND_STACK_CUT : UNWIND_NO_STACK;
	} else if (rc == 0 || (w.n && at_entry(p->dwfl, w.last_pc))) {
		*end = UNWIND_COMPLETE;
	} else {
		*end = UNWIND_NO_CFI;
		if (verbose > 1)
			p_dbg("unwind of %u ended after %u frames: %s", tid, w.n, dwfl_errmsg(-1));
	}
	p->us = NULL;
	u->counts[*end]++;
	return w.n;
}
