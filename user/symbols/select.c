// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <gelf.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "binfile.h"
#include "debugsyms.h"
#include "dwarfinfo.h"
#include "elfsym.h"
#include "libpaths.h"
#include "placement.h"
#include "base/log.h"
#include "procmaps.h"
#include "select.h"
#include "base/util.h"


/* Where path's file is in f: f->n if not (or it cannot be stat'ed). */
static size_t file_ids__index(const struct file_ids *f, const char *path)
{
	struct stat st;
	size_t i;

	if (stat(path, &st))
		return f->n;
	for (i = 0; i < f->n; i++)
		if (f->v[i].dev == st.st_dev && f->v[i].ino == st.st_ino)
			break;
	return i;
}

bool file_ids__add(struct file_ids *f, const char *path)
{
	struct stat st;

	if (stat(path, &st) || file_ids__index(f, path) < f->n)
		return false;
	f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	f->v[f->n].dev = st.st_dev;
	f->v[f->n++].ino = st.st_ino;
	return true;
}

void file_ids__free(struct file_ids *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

char *select__split(const char *pattern, const char **lib, const char **glob)
{
	char *copy = xstrdup(pattern);
	char *p;

	*lib = NULL;
	*glob = copy;
	for (p = copy; (p = strchr(p, ':')); p++) {
		if (p[1] == ':') {	/* C++ scope: skip both */
			p++;
			continue;
		}
		*p = 0;
		*lib = copy;
		*glob = p + 1;
		break;
	}
	return copy;
}

struct mod_work {
	char *path;
	struct elf_funcs syms;
	unsigned char *chosen;
	int read_err;
	bool all;		/* default selection: everything but glue */
};

/*
 * Leaves out (and unpins) the paths whose files are among the first `old`
 * of seen (probed by an earlier select__resolve), adds the others.
 */
static void drop_seen(struct file_ids *seen, size_t old, char **paths, size_t *n)
{
	size_t i, k = 0;

	for (i = 0; i < *n; i++) {
		size_t had = seen->n;

		file_ids__add(seen, paths[i]);
		if (had == seen->n && file_ids__index(seen, paths[i]) < old) {
			binfile__unpin(paths[i]);
			free(paths[i]);
			continue;
		}
		paths[k++] = paths[i];
	}
	*n = k;
}

/* The module of file path, or NULL when nothing was selected from it yet. */
static struct mod_work *lookup_mod(struct mod_work *mods, size_t nmods, const char *path)
{
	size_t i;

	for (i = 0; i < nmods; i++)
		if (strcmp(mods[i].path, path) == 0)
			return &mods[i];
	return NULL;
}

/* The module of file path, added (not read yet) when it is new. */
static struct mod_work *find_mod(struct mod_work **mods, size_t *nmods, const char *path)
{
	struct mod_work *m = lookup_mod(*mods, *nmods, path);

	if (m)
		return m;
	*mods = xrealloc(*mods, (*nmods + 1) * sizeof(**mods));
	memset(&(*mods)[*nmods], 0, sizeof(**mods));
	(*mods)[*nmods].path = xstrdup(path);
	binfile__ref(path);	/* the module's own pin, undone at the end */
	(*mods)[*nmods].read_err = 1;	/* not read yet */
	return &(*mods)[(*nmods)++];
}

static int load_syms(struct mod_work *m)
{
	if (m->read_err == 1) {
		m->read_err = elfsym__read(m->path, &m->syms);
		if (!m->read_err)
			m->chosen = xcalloc(m->syms.n, 1);
	}
	return m->read_err;
}

static bool has_wildcard(const char *g)
{
	return strpbrk(g, "*?[") != NULL;
}

/*
 * glibc's string functions (strlen, memcpy...) are IFUNCs: the symbol is a
 * resolver that picks an implementation by CPU features when the library is
 * loaded, and a stripped library has no symbol for the implementations.  On
 * one machine the pick is the same for bpfprof and its target when both map
 * the same file, so bpfprof asks its own dynamic linker (dlsym returns the
 * implementation), for libraries it has loaded itself only (RTLD_NOLOAD: no
 * constructor of a foreign library runs here).  Returns the implementation's
 * link-time address in `path`.
 */
static int resolve_ifunc(const char *path, const char *name, uint64_t *addr)
{
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	Dl_info info;
	void *p;
	int err = -ENOENT;

	if (!h)
		return -ENOENT;
	p = dlsym(h, name);
	if (p && dladdr(p, &info) && info.dli_fbase) {
		*addr = (uintptr_t)p - (uintptr_t)info.dli_fbase;
		err = 0;
	}
	dlclose(h);
	return err;
}

/* Chooses the implementation of IFUNC `name` of m (appended to m's functions once). */
static bool choose_ifunc(struct mod_work *m, const char *name)
{
	struct elf_func f;
	uint64_t addr;
	int64_t offset;
	size_t i;

	if (resolve_ifunc(m->path, name, &addr) ||
	    (offset = elfsym__addr_to_offset(&m->syms, addr)) < 0) {
		p_warn("%s in %s is chosen at run time (an IFUNC) and bpfprof has not loaded that "
		       "library itself to ask which: not traced", name, binfile__name(m->path));
		return false;
	}
	/*
	 * One probe per address: glibc's memcpy and memmove resolve to one
	 * implementation here; the second name becomes an alias of the first.
	 */
	for (i = 0; i < m->syms.n; i++) {
		struct elf_func *g = &m->syms.v[i];

		if (g->offset != (uint64_t)offset)
			continue;
		m->chosen[i] = 1;
		if (!elfsym__func_matches(g, name)) {
			/*
			 * Named as the caller calls it (strlen, not the __strlen_evex a
			 * debug file names it); the other name stays for matching.
			 */
			g->aliases = xrealloc(g->aliases, (g->naliases + 1) * sizeof(*g->aliases));
			if (g->flags & ELFSYM_F_IFUNC) {	/* already memcpy's: memmove is an alias */
				g->aliases[g->naliases++] = xstrdup(name);
			} else {
				g->aliases[g->naliases++] = g->name;
				g->name = xstrdup(name);
			}
			g->flags |= ELFSYM_F_ALIASED | ELFSYM_F_IFUNC;
		}
		return true;
	}
	if (elfsym__func_at(m->path, name, addr, offset, &f))
		return false;
	f.source = m->syms.ifunc_source;
	m->syms.v = xrealloc(m->syms.v, (m->syms.n + 1) * sizeof(*m->syms.v));
	m->chosen = xrealloc(m->chosen, m->syms.n + 1);
	m->syms.v[m->syms.n] = f;
	m->chosen[m->syms.n++] = 1;
	p_dbg("%s in %s: an IFUNC, its implementation here is at offset %#lx", name, m->path,
	      (unsigned long)offset);
	return true;
}

/* Marks (or unmarks) matches of `glob` in m; returns how many matched. */
static size_t apply(struct mod_work *m, const char *glob, bool include)
{
	size_t i, hits = 0;

	/* IFUNCs first: a match appends to m->syms, which the loop below then sees */
	for (i = 0; include && i < m->syms.nifuncs; i++)
		if (elfsym__match(glob, m->syms.ifuncs[i]) && (!has_wildcard(glob) ||
							       m->syms.ifuncs[i][0] != '_'))
			choose_ifunc(m, m->syms.ifuncs[i]);

	for (i = 0; i < m->syms.n; i++) {
		const struct elf_func *f = &m->syms.v[i];
		bool match = elfsym__func_matches(f, glob);

		if (!match || (f->flags & ELFSYM_F_NOPROBE))	/* names samples only */
			continue;
		/* Start-up glue only when named exactly. */
		if (include && (f->flags & ELFSYM_F_STARTUP) && has_wildcard(glob))
			continue;
		m->chosen[i] = include;
		hits++;
	}
	return hits;
}

static int report_read_err(const char *path, int err)
{
	if (err == -ENODATA)
		p_err("%s has no function symbols, no debug file and no unwind information to find "
		      "functions by: trace its libraries with -F 'LIB:GLOB' or sample with --sample",
		      path);
	else if (err != -ENOEXEC)	/* ENOEXEC reasons are printed by elfsym */
		p_err("cannot read symbols of %s: %s", path, strerror(-err));
	return err;
}

/*
 * The default selection found almost nothing in the executable (a launcher
 * such as git's or python's, whose work is done in shared libraries): say
 * what is traced and how to get more, instead of recording next to nothing.
 */
#define SMALL_EXE_FUNCS 3

static void hint_small_exe(const char *exe, const struct bp_session *s, const uint64_t *ids,
			   size_t n)
{
	char names[256] = "";
	size_t i, len = 0;

	if (n > SMALL_EXE_FUNCS)
		return;
	for (i = 0; i < n && len < sizeof(names); i++)
		len += snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
				s->funcs[ids[i]].name);
	p_warn("%s has only %zu function%s to trace (%s): its work is done in shared libraries; "
	       "trace those with -F 'LIB:GLOB' (bpfprof list shows them) or sample stacks with "
	       "--sample", exe, n, n == 1 ? "" : "s", names);
}

/*
 * One -F (pass 0) or -N (pass 1) pattern over the modules it names: the
 * main executable, or the files LIB resolves to (read, then matched).
 * 0, or -errno with the reason printed.
 */
static int select_pattern(const struct select_opts *o, const char *pat, int pass,
			  struct mod_work **mods, size_t *nmods, size_t nseen, size_t *ndeferred)
{
	const char *lib, *glob;
	char *copy = select__split(pat, &lib, &glob);
	char **paths = NULL;
	size_t npaths = 0, hits = 0, j;
	int err = 0;

	if ((lib && o->main_only) || (!lib && o->no_exe)) {
		free(copy);
		return 0;
	}
	if (lib) {
		if (o->maps_only)
			err = libpaths__scan_maps(o->pid, lib, &paths, &npaths);
		else
			err = libpaths__resolve(lib, o->no_exe ? NULL : o->exe, o->pid,
						&paths, &npaths);
		if (err == -ESTALE || err == -ENOEXEC) {	/* printed */
			free(copy);
			return err;
		}
		if (pass == 0 && o->seen)	/* probed before: not again */
			drop_seen(o->seen, nseen, paths, &npaths);
		if (pass == 0 && !npaths && (o->maps_only ||
		    (o->defer_missing && !strchr(lib, '/')))) {
			free(paths);	/* for later, when a file of that name is mapped */
			free(copy);
			(*ndeferred)++;
			return 0;
		}
		if (err && pass == 0 && strchr(lib, '/')) {
			p_err("no file matches '%s' (in pattern '%s')", lib, pat);
			free(copy);
			return err;
		}
		if (err && pass == 0) {
			/* what is loaded later from elsewhere can only be named by path */
			p_err("no shared library matches '%s' (in pattern '%s'): no file of "
			      "that name is %s in the linker's or an interpreter's module "
			      "directories; a module loaded later from elsewhere is selected "
			      "by its path "
			      "('DIR/%s:%s')", lib, pat,
			      o->pid > 0 ? "mapped by the process or" : "the executable or",
			      lib, glob);
			free(copy);
			return err;
		}
		err = 0;
	} else {
		paths = xmalloc(sizeof(*paths));
		paths[npaths++] = xstrdup((*mods)[0].path);
		binfile__ref(paths[0]);	/* each entry holds a pin */
	}
	for (j = 0; j < npaths; j++) {
		struct mod_work *mm;

		/* Excludes only touch modules something was selected from. */
		if (pass == 1) {
			mm = lookup_mod(*mods, *nmods, paths[j]);
			if (!mm)
				continue;
		} else {
			mm = lib ? find_mod(mods, nmods, paths[j]) : &(*mods)[0];
		}
		err = load_syms(mm);
		if (err) {
			if (lib && npaths > 1 && (err == -ENOEXEC || err == -ENODATA)) {
				err = 0;	/* e.g. a linker script named libc.so */
				continue;
			}
			if (o->lenient) {
				err = 0;
				continue;
			}
			report_read_err(binfile__name(mm->path), err);
			goto free_pat;
		}
		hits += apply(mm, glob, pass == 0);
	}
	if (pass == 0 && !hits && !o->lenient) {
		p_err("pattern '%s' matches no function in %s", pat, lib ? lib : o->exe);
		err = -ESRCH;
	}
free_pat:
	for (j = 0; j < npaths; j++) {
		binfile__unpin(paths[j]);
		free(paths[j]);
	}
	free(paths);
	free(copy);
	return err;
}

/* Where function j of m is probed: its entry, or past a prefix the kernel would single-step. */
static void func_place(const struct select_opts *o, const struct mod_work *m, size_t j,
		       struct placement_mod *pl, struct bp_func *f)
{
	const struct elf_func *ef = &m->syms.v[j];

	/*
	 * The kernel single-steps most first instructions (mov, xor,
	 * endbr64...) and emulates push, nop and relative branches:
	 * ~3x cheaper.  placement.c moves the probe onto the first
	 * emulated instruction when the prefix before it is harmless
	 * and nothing can enter the function inside it.  Without a
	 * decoder for the file (not x86-64, unreadable): only a lone
	 * endbr64 followed by push/nop is skipped, as before.
	 */
	if (pl) {
		/* past a harmless prefix, onto an emulated instruction */
		placement__apply(pl, j, o->keep_args, f);
	} else if (ef->insn == ELFSYM_INSN_ENDBR64 && !o->no_skip_endbr &&
	    (ef->insn_next == ELFSYM_INSN_PUSH || ef->insn_next == ELFSYM_INSN_NOP ||
	     ef->insn_next == ELFSYM_INSN_NOP5) && ef->size > 4) {
		f->flags = (f->flags & ~BP_FUNC_INSN_MASK) | BP_FUNC_SKIP_ENDBR |
			   ef->insn_next;
		f->offset += 4;
	}
	/*
	 * Go: after the stack check, which morestack jumps back to
	 * the entry to run again: one probe hit per call.
	 */
	if (m->syms.go && ef->go_prologue && ef->size > ef->go_prologue) {
		f->flags = (f->flags & ~BP_FUNC_INSN_MASK) | BP_FUNC_GO_CHECKED |
			   ef->insn_next;
		f->offset += ef->go_prologue;
	}
}

/*
 * One module's probe set (its entry points, where each probe goes) and its
 * functions in the session's table; nothing when none can be probed.
 * exe: the main executable (the hint for a thin one).
 */
static void module_probes(const struct select_opts *o, struct bp_session *s, struct mod_work *m,
			  bool exe, struct probe_set *out)
{
	struct probe_module pm = { 0 };
	struct dwarf_funcs dw = { 0 };
	struct placement_mod *pl = NULL;
	size_t nrefused = 0, j;
	uint32_t mid;

	if (m->read_err)
		return;
	for (j = 0; j < m->syms.n; j++)
		pm.n += m->chosen[j] &&
			(o->list_only || m->syms.v[j].insn != ELFSYM_INSN_REFUSED);
	if (!pm.n) {
		for (j = 0; j < m->syms.n && !o->lenient; j++)
			if (m->chosen[j])
				p_warn("cannot probe %s in %s (first instruction with a lock or "
				       "segment prefix, which the kernel refuses, or AVX-encoded, "
				       "which it mis-executes); not traced",
				       m->syms.v[j].name, binfile__name(m->path));
		return;
	}
	mid = session__add_module(s, binfile__name(m->path));
	session__module_build_id(s, mid, m->syms.build_id);
	dwarfinfo__read(m->path, &dw);
	pm.path = xstrdup(m->path);
	binfile__ref(pm.path);	/* held while bpfprof runs: the probes' file */
	/*
	 * Go: the runtime copies goroutine stacks when they grow and walks
	 * them (GC, tracebacks, panics); a return address replaced by the
	 * kernel's return trampoline makes it abort ("unexpected return
	 * pc").  Entries only, each a call of no duration.
	 */
	if (m->syms.go) {
		pm.entry_only = true;
		if (!o->list_only)
			p_warn("%s is a Go program: return probes would crash it (its runtime "
			       "moves and walks goroutine stacks), so its functions are traced "
			       "at entry only: call counts, no durations",
			       binfile__name(m->path));
	}
	/* Go has its own entry rule below; --no-skip-endbr: probe every entry itself */
	if (!m->syms.go && !o->no_skip_endbr)
		placement__open(m->path, &m->syms, &pl);	/* NULL: entries stay */
	pm.offsets = xcalloc(pm.n, sizeof(*pm.offsets));
	pm.cookies = xcalloc(pm.n, sizeof(*pm.cookies));
	pm.n = 0;
	for (j = 0; j < m->syms.n; j++) {
		const struct elf_func *ef = &m->syms.v[j];
		struct bp_func f = {
			.name = ef->name,
			.module = mid,
			.flags = ef->insn | (m->syms.go ? BP_FUNC_ENTRY_ONLY : 0),
			.addr = ef->addr,
			.size = ef->size,
			.offset = ef->offset,
			.source = ef->source,
		};

		const struct dwarf_func *df;

		if (!m->chosen[j])
			continue;
		if (ef->insn == ELFSYM_INSN_REFUSED && !o->list_only) {
			/* the kernel would skip it silently once the file is mapped */
			if (!o->lenient) {
				if (!nrefused++)
					p_warn("cannot probe these functions of %s (first "
					       "instruction with a lock or segment prefix, which "
					       "the kernel refuses, or AVX-encoded, which it "
					       "mis-executes); not traced:",
					       binfile__name(m->path));
				if (nrefused <= 20)
					fprintf(stderr, "    %s\n", ef->name);
			}
			continue;
		}
		f.nparams = -1;
		df = dwarfinfo__find(&dw, ef->addr);
		if (df) {
			f.nparams = df->nparams;
			f.file = df->file;
			f.line = df->line;
			f.sig = df->sig;
		}
		func_place(o, m, j, pl, &f);
		pm.offsets[pm.n] = f.offset;
		pm.cookies[pm.n] = session__add_func(s, &f);
		pm.n++;
	}
	dwarfinfo__free(&dw);
	placement__close(pl);
	if (nrefused > 20)
		fprintf(stderr, "    ... and %zu more\n", nrefused - 20);
	if (exe && !o->nincludes && !o->lenient && !o->list_only)
		hint_small_exe(o->exe, s, pm.cookies, pm.n);
	out->mods = xrealloc(out->mods, (out->nmods + 1) * sizeof(*out->mods));
	out->mods[out->nmods++] = pm;
	out->nfuncs += pm.n;
}

int select__resolve(const struct select_opts *o, struct bp_session *s, struct probe_set *out)
{
	struct mod_work *mods = NULL, *m;
	size_t nmods = 0, i, nseen = o->seen ? o->seen->n : 0, ndeferred = 0;
	struct stat st;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (o->debug)
		debugsyms__configure(o->debug);
	/* read and probed through one descriptor, the file pid maps (binfile.h) */
	if (!o->no_exe) {
		char **exe = NULL;
		size_t nexe = 0;

		err = libpaths__add(&exe, &nexe, o->exe, o->pid);
		if (err == -ESTALE)
			return err;
		m = find_mod(&mods, &nmods, err ? o->exe : exe[0]);	/* read errors: below */
		if (exe && !stat(exe[0], &st)) {	/* the file read and probed */
			out->exe_dev = st.st_dev;
			out->exe_ino = st.st_ino;
		}
		if (exe) {
			binfile__unpin(exe[0]);	/* the module holds its own */
			free(exe[0]);
		}
		free(exe);
		err = 0;
	} else {
		m = find_mod(&mods, &nmods, o->exe);	/* main executable is module 0 */
	}

	if (o->no_exe)
		m->read_err = -ENOEXEC;	/* never read: plain patterns apply to exec'd images */
	if (!o->nincludes && !o->no_exe) {
		err = load_syms(m);
		if (err) {
			if (!o->lenient)
				report_read_err(o->exe, err);
			goto cleanup;
		}
		for (i = 0; i < m->syms.n; i++)
			m->chosen[i] = !(m->syms.v[i].flags & (ELFSYM_F_STARTUP | ELFSYM_F_NOPROBE));
	}

	/* Includes, then excludes: -N wins over -F whatever the order on the command line. */
	for (int pass = 0; pass < 2; pass++) {
		char **pats = pass ? o->excludes : o->includes;
		size_t npats = pass ? o->nexcludes : o->nincludes;

		for (i = 0; i < npats; i++) {
			err = select_pattern(o, pats[i], pass, &mods, &nmods, nseen, &ndeferred);
			if (err)
				goto cleanup;
		}
	}

	/* Build the probe set and the session's function table. */
	for (i = 0; i < nmods; i++)
		module_probes(o, s, &mods[i], i == 0, out);
	if (!out->nfuncs && !(ndeferred && !o->maps_only)) {
		if (!o->lenient)
			p_err("no function left to trace (every match was excluded by -N or "
			      "cannot be probed)");
		err = -ESRCH;
	}
cleanup:
	for (i = 0; i < nmods; i++) {
		binfile__unpin(mods[i].path);
		free(mods[i].path);
		elfsym__free(&mods[i].syms);
		free(mods[i].chosen);
	}
	free(mods);
	if (err)
		probe_set__free(out);
	return err;
}

void probe_set__free(struct probe_set *ps)
{
	size_t i;

	if (!ps)
		return;
	for (i = 0; i < ps->nmods; i++) {
		free(ps->mods[i].path);
		free(ps->mods[i].offsets);
		free(ps->mods[i].cookies);
	}
	free(ps->mods);
	memset(ps, 0, sizeof(*ps));
}

enum select_path select__probe_kind(const struct bp_func *f)
{
	switch (f->flags & BP_FUNC_INSN_MASK) {
	case ELFSYM_INSN_PUSH:
	case ELFSYM_INSN_NOP:
	case ELFSYM_INSN_JUMP:
		return SELECT_EMULATED;
	case ELFSYM_INSN_NOP5:
		return SELECT_NOP5;
	default:
		return SELECT_SINGLE_STEP;
	}
}

const char *select__probe_path(const struct bp_func *f)
{
	static const char *const names[] = {
		[SELECT_EMULATED] = "emulated", [SELECT_SINGLE_STEP] = "single-step",
		[SELECT_NOP5] = "nop5",
	};

	return names[select__probe_kind(f)];
}
