// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "dwarfinfo.h"
#include "elfsym.h"
#include "kallsyms.h"
#include "base/log.h"
#include "internal.h"
#include "procmaps.h"
#include "symbolize.h"
#include "unwind.h"
#include "base/hashtab.h"
#include "base/util.h"


static uint64_t fkey_of(uint32_t module, uint64_t addr)
{
	return ((uint64_t)module + 1) << 48 ^ addr;
}

static uint64_t fhash(uint64_t key)
{
	return key * 0x9e3779b97f4a7c15ull >> 20;
}

static size_t fslot(const struct symbolizer *sy, uint64_t key)
{
	size_t i = hashtab__first(fhash(key), sy->ftab_cap);

	while (sy->ftab[i].key && sy->ftab[i].key != key)
		i = hashtab__next(i, sy->ftab_cap);
	return i;
}

static bool fkey_empty(const void *slot)
{
	return !((const struct fkey *)slot)->key;
}

static uint64_t fkey_hash(const void *slot)
{
	return fhash(((const struct fkey *)slot)->key);
}

static const struct hashtab_ops ftab_ops = { sizeof(struct fkey), 1024, fkey_empty, fkey_hash };

static void fput(struct symbolizer *sy, uint64_t key, uint32_t func)
{
	size_t i;

	hashtab__reserve((void **)&sy->ftab, &sy->ftab_cap, sy->ftab_used, &ftab_ops);
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

/*
 * At the end: why DWARF unwinds fell short (with -v), and a hint when the
 * stack copy was too small for a noticeable share.
 */
static void report_unwinds(struct symbolizer *sy)
{
	uint64_t cut;
	int e;

	if (!sy->uw || !sy->nustack)
		return;
	cut = unwinder__count(sy->uw, UNWIND_STACK_CUT);
	p_dbg("user stack copies unwound: %" PRIu64 ", the largest %u bytes", sy->nustack,
	      sy->max_copy);
	for (e = 0; e < UNWIND_NEND && verbose; e++)
		if (unwinder__count(sy->uw, e))
			p_dbg("DWARF unwinds %s: %" PRIu64, unwind_end_str(e),
			      unwinder__count(sy->uw, e));
	if (sy->nfallback)
		p_dbg("frame-pointer stacks used where DWARF fell short: %" PRIu64, sy->nfallback);
	if (cut * 100 > sy->nustack)
		p_warn("%" PRIu64 " of %" PRIu64 " user stacks were deeper than the %u-byte stack "
		       "copy (truncated): try a larger --stack-size", cut, sy->nustack, sy->max_copy);
}

void symbolizer__free(struct symbolizer *sy)
{
	size_t i, j;

	if (!sy)
		return;
	report_unwinds(sy);
	unwinder__free(sy->uw);
	for (i = 0; i < sy->nprocs; i++) {
		for (j = 0; j < sy->procs[i].n; j++)
			free(sy->procs[i].v[j].special);
		free(sy->procs[i].v);
		free(sy->procs[i].text);
	}
	for (i = 0; i < sy->nfiles; i++) {
		free(sy->files[i].path);
		elfsym__free(&sy->files[i].syms);
		dwarfinfo__free(&sy->files[i].dw);
	}
	free(sy->procs);
	free(sy->files);
	kallsyms__free(&sy->ksyms);
	free(sy->ftab);
	free(sy);
}

static void load_kallsyms(struct symbolizer *sy);

void symbolizer__preload_kernel(struct symbolizer *sy)
{
	if (!sy->kloaded)
		load_kallsyms(sy);
}


/*
 * A function met in a stack, and where it is defined when the file's DWARF
 * says (df, NULL if not).
 */
static uint32_t add_func(struct symbolizer *sy, const char *name, uint32_t module, uint64_t addr,
			 uint64_t size, uint32_t flags, const struct dwarf_func *df)
{
	struct bp_func f = {
		.name = (char *)name,
		.module = module,
		.flags = flags,
		.addr = addr,
		.size = size,
		.nparams = df ? df->nparams : -1,
		.file = df ? df->file : NULL,
		.line = df ? df->line : 0,
		.sig = df ? df->sig : NULL,
	};
	uint32_t id = session__add_func(sy->s, &f);

	fput(sy, fkey_of(module, addr), id);
	return id;
}

/*
 * A PLT stub (a call into another library, resolved lazily or by IFUNC):
 * named "FILE@plt", one per PLT section, so it groups instead of
 * scattering over [unknown] addresses.  UINT32_MAX: off is in no PLT.
 */
static uint32_t plt_frame(struct symbolizer *sy, const struct symfile *sf, uint64_t off)
{
	const char *base = strrchr(sf->path, '/');
	char name[300];
	uint32_t id;
	size_t i;

	for (i = 0; i < sf->syms.nplts; i++) {
		const struct elf_seg *p = &sf->syms.plts[i];

		if (off < p->offset || off - p->offset >= p->filesz)
			continue;
		if (fget(sy, fkey_of(sf->module, p->vaddr), &id))
			return id;
		snprintf(name, sizeof(name), "%s@plt", base ? base + 1 : sf->path);
		return add_func(sy, name, sf->module, p->vaddr, p->filesz, BP_FUNC_SAMPLED, NULL);
	}
	return UINT32_MAX;
}

/* A user address -> function id. */
static uint32_t user_frame(struct symbolizer *sy, uint32_t pid, uint64_t ip)
{
	const struct mapping *m = symbolizer_find_map(sy, pid, ip);
	struct symfile *sf;
	uint64_t off;
	char name[512];
	uint32_t id;
	size_t lo;

	if (!m || m->file < 0) {
		const char *what = m ? m->special : "[unmapped]";
		uint32_t mod = session__add_module(sy->s, what);

		/* Unknown code keeps its address: never dropped, never merged wrongly. */
		if (fget(sy, fkey_of(mod, ip), &id))
			return id;
		snprintf(name, sizeof(name), "[unknown] %s+0x%" PRIx64, what,
			 m ? ip - m->start : ip);
		return add_func(sy, name, mod, ip, 0, BP_FUNC_SAMPLED | BP_FUNC_UNKNOWN, NULL);
	}
	sf = &sy->files[m->file];
	off = ip - m->start + m->pgoff;	/* file offset of the address */
	if (sf->err == 1) {
		char full[4200];

		snprintf(full, sizeof(full), "/proc/%u/root%s", pid, sf->path);
		sf->err = elfsym__read(full, &sf->syms);
		if (sf->err)
			sf->err = elfsym__read(sf->path, &sf->syms);
		if (!sf->err) {	/* source file:line, where the file has debug information */
			dwarfinfo__read(sf->err ? sf->path : full, &sf->dw);
			session__module_build_id(sy->s, sf->module, sf->syms.build_id);
		}
	}
	if (!sf->err) {
		/* the function whose file range holds off (offsets ascend with addresses) */
		lo = lower_bound(sf->syms.n, sf->syms.v[at].offset <= off);
		if (lo) {
			const struct elf_func *ef = &sf->syms.v[lo - 1];

			if (off < ef->offset + ef->size) {
				if (fget(sy, fkey_of(sf->module, ef->addr), &id))
					return id;
				return add_func(sy, ef->name, sf->module, ef->addr, ef->size, BP_FUNC_SAMPLED,
						    dwarfinfo__find(&sf->dw, ef->addr));
			}
		}
	}
	if (!sf->err && (id = plt_frame(sy, sf, off)) != UINT32_MAX)
		return id;
	if (fget(sy, fkey_of(sf->module, off | 1ull << 47), &id))
		return id;
	{
		const char *base = strrchr(sf->path, '/');

		snprintf(name, sizeof(name), "[unknown] %s+0x%" PRIx64, base ? base + 1 : sf->path,
			 off);
	}
	return add_func(sy, name, sf->module, off | 1ull << 47, 0,
			BP_FUNC_SAMPLED | BP_FUNC_UNKNOWN, NULL);
}

static void load_kallsyms(struct symbolizer *sy)
{
	sy->kloaded = 1;
	sy->kmodule = session__add_module(sy->s, "[kernel]");
	kallsyms__load(&sy->ksyms);
}

static uint32_t kernel_frame(struct symbolizer *sy, uint64_t ip)
{
	const struct ksym *k;
	uint32_t id;
	char name[64];

	if (!sy->kloaded)
		load_kallsyms(sy);
	k = kallsyms__find(&sy->ksyms, ip);
	if (k) {
		if (fget(sy, fkey_of(sy->kmodule, k->addr), &id))
			return id;
		return add_func(sy, k->name, sy->kmodule, k->addr, 0,
				BP_FUNC_SAMPLED | BP_FUNC_KERNEL, NULL);
	}
	if (fget(sy, fkey_of(sy->kmodule, ip), &id))
		return id;
	snprintf(name, sizeof(name), "[unknown] [kernel]+0x%" PRIx64, ip);
	return add_func(sy, name, sy->kmodule, ip, 0,
			BP_FUNC_SAMPLED | BP_FUNC_KERNEL | BP_FUNC_UNKNOWN, NULL);
}

/* Where a complete user stack begins: the C runtime's and the thread library's roots. */
static bool is_root(const char *name)
{
	static const char *const roots[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
		"clone", "clone3", "__clone", "__clone3", "_dl_start_user", "_dl_start",
		/* Go: a goroutine's and a thread's outermost frames */
		"runtime.goexit", "runtime.mstart", "runtime.rt0_go", NULL,
	};
	size_t i;

	for (i = 0; roots[i]; i++)
		if (!strcmp(name, roots[i]))
			return true;
	return false;
}

/*
 * Does a user stack (adjusted addresses, innermost first) reach a root?  Its
 * outermost frame is one, or main() is right below the outermost frame
 * (libc's __libc_start_call_main is a local symbol that a stripped libc does
 * not name).
 */
static bool rooted(struct symbolizer *sy, uint32_t pid, const uint64_t *ips, uint32_t n)
{
	if (!n || n >= BP_MAX_USER_FRAMES)
		return false;
	return is_root(session__func_name(sy->s, user_frame(sy, pid, ips[n - 1]))) ||
	       (n >= 2 && !strcmp(session__func_name(sy->s, user_frame(sy, pid, ips[n - 2])), "main"));
}

/* The call path of a stack: user frames (adjusted), then kernel frames, innermost first. */
static uint32_t make_path(struct symbolizer *sy, uint32_t pid, const uint64_t *uips, uint32_t nuser,
			  const uint64_t *kips, uint32_t nkern, bool truncated)
{
	uint32_t path = 0, i;

	if (nuser && truncated) {
		if (!sy->have_truncated) {
			sy->truncated_func = add_func(sy, "[truncated]",
						      session__add_module(sy->s, "[none]"), 0, 0,
						      BP_FUNC_MARKER, NULL);
			sy->have_truncated = true;
		}
		path = session__path(sy->s, 0, sy->truncated_func);
	}
	for (i = nuser; i-- > 0;)
		path = session__path(sy->s, path, user_frame(sy, pid, uips[i]));
	/* The innermost kernel frames of a tracepoint sample are the BPF machinery itself. */
	while (nkern) {
		const char *name = session__func_name(sy->s, kernel_frame(sy, kips[0]));

		if (strncmp(name, "bpf_", 4) && strncmp(name, "__bpf_", 6) &&
		    strncmp(name, "__traceiter_", 12) && strncmp(name, "perf_trace_", 11))
			break;
		kips++;
		nkern--;
	}
	for (i = nkern; i-- > 0;)
		path = session__path(sy->s, path, kernel_frame(sy, kips[i]));
	/* a thread past exit_mm() (no user stack) sampled without kernel stacks */
	if (!path) {
		if (!sy->have_nostack) {
			sy->nostack_func = add_func(sy, "[no stack]", session__add_module(sy->s, "[none]"),
						    1, 0, BP_FUNC_MARKER, NULL);
			sy->have_nostack = true;
		}
		path = session__path(sy->s, 0, sy->nostack_func);
	}
	return path;
}

uint32_t symbolizer__stack(struct symbolizer *sy, uint32_t pid, const uint64_t *ips,
			   uint32_t nuser, uint32_t nkern, bool *truncated)
{
	uint64_t uips[BP_MAX_USER_FRAMES];
	uint32_t i;

	if (nuser > BP_MAX_USER_FRAMES)
		nuser = BP_MAX_USER_FRAMES;
	/* return addresses: symbolize the call instruction before each */
	for (i = 0; i < nuser; i++)
		uips[i] = i ? ips[i] - 1 : ips[i];
	*truncated = nuser && !rooted(sy, pid, uips, nuser);
	return make_path(sy, pid, uips, nuser, ips + nuser, nkern, *truncated);
}

uint32_t symbolizer__sample(struct symbolizer *sy, uint32_t pid, uint32_t tid, const uint64_t *ips,
			    uint32_t nuser, uint32_t nkern, const struct bp_ustack *us, bool *truncated)
{
	uint64_t dips[BP_MAX_USER_FRAMES], fips[BP_MAX_USER_FRAMES];
	struct proc_maps *pm;
	enum unwind_end end;
	bool fp_truncated;
	uint32_t n, i;

	if (!us || sy->uw_failed)
		return symbolizer__stack(sy, pid, ips, nuser, nkern, truncated);
	if (!sy->uw && unwinder__new(&sy->uw)) {
		p_warn("cannot set up DWARF unwinding: stacks use frame pointers only");
		sy->uw_failed = true;
		return symbolizer__stack(sy, pid, ips, nuser, nkern, truncated);
	}
	pm = symbolizer_proc(sy, pid);
	sy->nustack++;
	if (us->len > sy->max_copy)
		sy->max_copy = us->len;
	/* a pc outside the known mappings: the process exec'd or mapped code since */
	symbolizer_find_map(sy, pid, us->regs[BP_UREG_IP]);
	for (i = 0; i < 2; i++) {
		uint64_t gen = pm->gen;

		n = unwinder__unwind(sy->uw, pid, tid, pm->text, pm->gen, us, dips,
				     BP_MAX_USER_FRAMES, &end);
		/* stopped in code mapped since the maps were read (dlopen): once more */
		if (end == UNWIND_COMPLETE || !n || i)
			break;
		symbolizer_find_map(sy, pid, dips[n - 1]);
		if (pm->gen == gen)
			break;
	}
	if (!n) {	/* not even the first frame: keep the pc */
		dips[0] = us->regs[BP_UREG_IP];
		n = 1;
	}
	/*
	 * The CFI itself said where the stack ends (an undefined return
	 * address: _start, clone3), or it ended at the dynamic loader's entry
	 * point: complete, whatever the outermost function's name.
	 */
	*truncated = end != UNWIND_COMPLETE || n >= BP_MAX_USER_FRAMES;
	/*
	 * A walk libdw ended "normally" short of any root is a stack missing
	 * its callers, not a complete one: seen about once in 10,000 samples
	 * of tests/progs/cpusplit on a loaded machine ([spin_units, light] and
	 * nothing above, before this check too).  It is flagged truncated,
	 * never shown as whole; the frame pointers are no help there (a sample
	 * at a function's first instruction skips its caller).
	 */
	if (!*truncated && !rooted(sy, pid, dips, n))
		return make_path(sy, pid, dips, n, ips + nuser, nkern, (*truncated = true));
	/*
	 * --stack=auto: where the CFI fell short (code without it, a JIT's)
	 * the frame-pointer walk may still reach a root; a walk that does not
	 * is no better than the partial DWARF stack.
	 */
	if (*truncated && nuser) {
		uint32_t nu = nuser < BP_MAX_USER_FRAMES ? nuser : BP_MAX_USER_FRAMES;

		for (i = 0; i < nu; i++)
			fips[i] = i ? ips[i] - 1 : ips[i];
		fp_truncated = !rooted(sy, pid, fips, nu);
		if (!fp_truncated) {
			sy->nfallback++;
			*truncated = false;
			return make_path(sy, pid, fips, nu, ips + nuser, nkern, false);
		}
	}
	return make_path(sy, pid, dips, n, ips + nuser, nkern, *truncated);
}
