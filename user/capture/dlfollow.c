// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Files a process dlopens later, named by file name only (`-F
 * 'libplug*:work'` for a plugin loaded from a directory nobody knows in
 * advance).  A LIB: pattern is resolved at the start against the files the
 * process maps, the linker's directories and an interpreter's module
 * directories; what it does not find there cannot be probed before it is
 * mapped, and a uprobe on a file only reaches the calls made after it is in.
 *
 * So the dynamic linker's own notification point is hooked:
 * _dl_debug_state(), which ld.so calls after every change to the list of
 * loaded objects (the r_debug protocol debuggers use).  At that call a
 * dlopen'ed file is mapped and not one of its instructions has run, not
 * even its constructors.  The BPF side (dl_state in bpf/trace.bpf.c) holds
 * the process there, as at an exec; here the patterns are matched against
 * the files it now maps, the new ones are probed, and the process goes on.
 * Files probed already are remembered by inode and not looked at again.
 * The same for a -U LIB:PROVIDER:NAME whose LIB is such a name: the probe
 * is attached to each new matching file that has it; and a file probed
 * after a dlopen gets its bpfprof.h probes, as one probed at the start.
 *
 * Only when such a pattern exists and a process is named (not -a): each
 * dlopen then costs the process one stop (a read of /proc/PID/maps and the
 * symbols of the new files), of HOLD_LIMIT_MS at most (holdlimit.c).
 *
 * The sampler hooks the same function on its own (capture_dl_sample, with
 * -a too): its program (mmap_dl in bpf/sample.bpf.c) records the mappings
 * of the objects loaded, so that the stacks of a process gone before they
 * are decoded keep their libraries.  That hook holds nothing.
 */
#include <fcntl.h>
#include <gelf.h>
#include "internal.h"
#include "symbols/binfile.h"
#include "symbols/elfsym.h"
#include "symbols/libpaths.h"

/* A -U LIB:PROVIDER:NAME whose LIB matched no file at the start. */
struct dl_usdt {
	const char *spec;	/* as given (the options') */
	char *lib, *provider, *name;
	uint64_t cookie;
	struct file_ids seen;	/* files LIB matched, looked at once each */
	bool attached;		/* to one of them at least */
};

struct dlfollow {
	char **pats;		/* the -F LIB:GLOB patterns whose LIB is a file name */
	size_t npats;
	bool *found;		/* pats[i]'s LIB matched a file */
	struct file_ids seen;	/* files LIB: patterns resolved to, probed or not */
	size_t nmods, nfuncs;	/* probed after a dlopen */
	struct dl_usdt *usdts;
	size_t nusdts;
};

/* Can files loaded later be followed at all?  Not with -a, nor with no process named. */
static bool can_follow(const struct capture *c)
{
	return !c->o.all && (c->o.argv || c->o.npids);
}

static struct dlfollow *dl_get(struct capture *c)
{
	if (!c->dl) {
		c->dl = xcalloc(1, sizeof(*c->dl));
		c->sopts.seen = &c->dl->seen;
	}
	return c->dl;
}

/* The -F patterns to follow: LIB: a file-name glob (a path is resolved once, at the start). */
static size_t name_patterns(const struct capture_opts *o, char ***out)
{
	size_t i, n = 0;

	*out = NULL;
	for (i = 0; i < o->nincludes; i++) {
		const char *lib, *glob;
		char *copy = select__split(o->includes[i], &lib, &glob);

		if (lib && !strchr(lib, '/')) {
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			(*out)[n++] = o->includes[i];
		}
		free(copy);
	}
	return n;
}

void capture_dl_prepare(struct capture *c)
{
	struct dlfollow *d;
	char **pats;
	size_t n;

	if (!can_follow(c))
		return;
	n = name_patterns(&c->o, &pats);
	if (!n)
		return;
	d = dl_get(c);
	d->pats = pats;
	d->npats = n;
	d->found = xcalloc(n, sizeof(*d->found));
	c->sopts.defer_missing = true;
}

bool capture_dl_defer_usdt(struct capture *c, const char *spec, const char *lib,
			   const char *provider, const char *name, uint64_t cookie)
{
	struct dlfollow *d;
	struct dl_usdt *u;

	if (!can_follow(c))
		return false;
	d = dl_get(c);
	d->usdts = xrealloc(d->usdts, (d->nusdts + 1) * sizeof(*d->usdts));
	u = &d->usdts[d->nusdts++];
	memset(u, 0, sizeof(*u));
	u->spec = spec;
	u->lib = xstrdup(lib);
	u->provider = xstrdup(provider);
	u->name = xstrdup(name);
	u->cookie = cookie;
	return true;
}

/* Does LIB of pattern i name a file that pid maps (pid > 0) or that is found on disk? */
static bool lib_found(struct capture *c, size_t i, pid_t pid)
{
	const char *lib, *glob;
	char *copy = select__split(c->dl->pats[i], &lib, &glob);
	char **paths = NULL;
	size_t n = 0, j;

	if (pid > 0)
		libpaths__scan_maps(pid, lib, &paths, &n);
	else
		select__libraries(lib, c->exe, c->o.npids ? c->o.pids[0] : 0, &paths, &n);
	for (j = 0; j < n; j++) {
		binfile__unpin(paths[j]);
		free(paths[j]);
	}
	free(paths);
	free(copy);
	return n > 0;
}

/* The program interpreter (PT_INTERP) of the ELF file at path, into buf; 0 or -errno. */
static int read_interp(const char *path, char *buf, size_t len)
{
	int fd = open_binary(path, NULL), err = -ENOENT;
	size_t i, phnum;
	GElf_Phdr ph;
	Elf *elf;

	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	for (i = 0; elf && !elf_getphdrnum(elf, &phnum) && i < phnum; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz && ph.p_filesz < len &&
		    pread(fd, buf, ph.p_filesz, ph.p_offset) == (ssize_t)ph.p_filesz &&
		    !buf[ph.p_filesz - 1])
			err = 0;
		break;
	}
	elf_end(elf);
	close(fd);
	return err;
}

/*
 * Hooks _dl_debug_state of the dynamic linker the target uses: for the
 * tracer (dl_state, holding the process) or the sampler (mmap_dl, the
 * libraries' mappings).  0 or -errno.
 */
static int hook_loader(struct capture *c, bool sampler)
{
	pid_t pid = c->o.npids ? c->o.pids[0] : 0;
	char interp[PATH_MAX] = "/lib64/ld-linux-x86-64.so.2";
	struct elf_funcs syms = { 0 };
	char **paths = NULL;
	size_t n = 0, i;
	int err;

	if (c->exe)	/* a script or a static program: the system's linker */
		read_interp(c->exe, interp, sizeof(interp));
	err = libpaths__add(&paths, &n, interp, pid);	/* pinned, the file pid maps */
	if (err)
		return err;
	err = elfsym__read(paths[0], &syms);
	for (i = 0; !err && i < syms.n; i++)
		if (elfsym__func_matches(&syms.v[i], "_dl_debug_state"))
			break;
	if (!err && i == syms.n)
		err = -ENOENT;
	if (!err)
		err = sampler ? sampler__attach_loader(c->smp, paths[0], syms.v[i].offset) :
		      tracer__attach_loader(c->tr, paths[0], syms.v[i].offset);
	elfsym__free(&syms);
	binfile__unpin(paths[0]);
	free(paths[0]);
	free(paths);
	return err;
}

void capture_dl_sample(struct capture *c)
{
	int err;

	if (!c->smp)
		return;
	err = hook_loader(c, true);
	if (err)
		p_warn("cannot hook the dynamic linker: %s; stacks of processes gone before they are "
		       "decoded may show their libraries' frames [unmapped]", strerror(-err));
}

void capture_dl_start(struct capture *c)
{
	struct dlfollow *d = c->dl;
	size_t i;
	int err;

	if (!d)
		return;
	err = hook_loader(c, false);
	if (err) {
		p_warn("cannot hook the dynamic linker: %s; files loaded later from outside the "
		       "linker's directories are not traced (name them by path: -F 'DIR/LIB:GLOB')",
		       strerror(-err));
		return;
	}
	c->dl_hooked = true;	/* capture_on_hold() */
	for (i = 0; i < d->npats; i++) {
		d->found[i] = lib_found(c, i, 0);
		if (!d->found[i]) {
			const char *lib, *glob;
			char *copy = select__split(d->pats[i], &lib, &glob);

			p_info("no file named '%s' is loaded or in the linker's directories yet: "
			       "probed when the process loads one", lib);
			free(copy);
		}
	}
	for (i = 0; i < d->nusdts; i++)
		p_info("no file named '%s' is loaded or in the linker's directories yet: "
		       "-U '%s' is attached when the process loads one", d->usdts[i].lib,
		       d->usdts[i].spec);
}

/* Attaches u's probe to the files matching its LIB that pid maps and that are new. */
static void follow_usdt(struct capture *c, struct dl_usdt *u, uint32_t pid)
{
	char **paths = NULL;
	size_t n = 0, j;
	int err;

	libpaths__scan_maps(pid, u->lib, &paths, &n);
	for (j = 0; j < n; j++) {
		if (file_ids__add(&u->seen, paths[j]) && !capture_usdt_ensure(c)) {
			err = usdt__attach(c->usd, paths[j], u->provider, u->name, u->cookie);
			if (!err) {
				u->attached = true;
				p_info("pid %u loaded %s: USDT probe %s:%s attached", pid,
				       binfile__name(paths[j]), u->provider, u->name);
			} else if (err != -ENOENT) {
				p_warn("pid %u loaded %s: cannot attach USDT probe %s:%s: %s", pid,
				       binfile__name(paths[j]), u->provider, u->name,
				       strerror(-err));
			}
		}
		binfile__unpin(paths[j]);
		free(paths[j]);
	}
	free(paths);
}

void capture_dl_follow(void *ctx, uint32_t pid, uint32_t stopped)
{
	struct capture *c = ctx;
	struct dlfollow *d = c->dl;
	struct select_opts so = c->sopts;
	struct probe_set ps = { 0 };
	struct capture_hold hold;
	size_t i;

	capture_hold_begin(c, &hold, pid, stopped, false);
	so.includes = d->pats;
	so.nincludes = d->npats;
	so.pid = pid;
	so.no_exe = so.lenient = so.maps_only = true;
	so.main_only = false;
	so.seen = &d->seen;
	if (d->npats && !select__resolve(&so, c->s, &ps)) {
		d->nfuncs += ps.nfuncs;
		d->nmods += ps.nmods;
		capture_attach_later(c, &ps, pid, "loaded", true);
		/* their bpfprof.h probes, as for the files probed at the start */
		for (i = 0; i < ps.nmods; i++)
			capture_usdt_attach_bpfprof(c, ps.mods[i].path, pid);
	}
	probe_set__free(&ps);
	for (i = 0; i < d->npats; i++)
		if (!d->found[i])
			d->found[i] = lib_found(c, i, pid);
	for (i = 0; i < d->nusdts; i++)
		follow_usdt(c, &d->usdts[i], pid);
	capture_hold_end(&hold, "the files it loaded");
}

void capture_dl_finish(struct capture *c)
{
	struct dlfollow *d = c->dl;
	size_t i;

	for (i = 0; d && i < d->npats; i++)
		if (!d->found[i])
			p_warn("no file matching -F '%s' was loaded: nothing traced from it",
			       d->pats[i]);
	for (i = 0; d && i < d->nusdts; i++)
		if (!d->usdts[i].attached)
			p_warn("no file with the probe of -U '%s' was loaded: it never fired",
			       d->usdts[i].spec);
}

void capture_dl_free(struct capture *c)
{
	size_t i;

	if (!c->dl)
		return;
	for (i = 0; i < c->dl->nusdts; i++) {
		struct dl_usdt *u = &c->dl->usdts[i];

		free(u->lib);
		free(u->provider);
		free(u->name);
		file_ids__free(&u->seen);
	}
	free(c->dl->usdts);
	file_ids__free(&c->dl->seen);
	free(c->dl->pats);
	free(c->dl->found);
	free(c->dl);
	c->dl = NULL;
}
