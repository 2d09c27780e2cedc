// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython images: which interpreter a binary is (version, offsets), where
 * its Python calls start and end (the RESUME handlers found through the
 * opcode table, the function__return sites), and where the probes go
 * (decoded with Capstone).  The tracer that attaches them is probes/python.c.
 */
#include <errno.h>
#include <linux/types.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include "bpf/events.h"
#include "bpf/python.h"
#include "base/log.h"
#include "base/util.h"
#include "symbols/binfile.h"
#include "symbols/elfwalk.h"
#include "symbols/select.h"
#include "cpython.h"
#include "symbols/usdt_notes.h"

/*
 * Struct offsets per CPython version, facts from its headers: computed with
 * offsetof() against Python.h + internal/pycore_*.h (Py_BUILD_CORE) by
 * scripts/pyoffsets.c, which prints a row for the python3.X-dev installed.
 * A version is added by running it against that version's headers (3.8-3.10
 * have PyFrameObject chains instead of _PyInterpreterFrame, 3.12+ moved
 * tstate_current to a thread-local: each needs its own reading in BPF, so
 * only versions whose layout python.bpf.c understands are listed).
 */
static const struct py_version versions[] = {
	{ 3, 11, {
		.runtime_tstate = 576, .tstate_cframe = 56, .tstate_curexc = 96,
		.cframe_frame = 8, .frame_code = 32, .frame_previous = 48,
		.frame_prev_instr = 56, .frame_owner = 69, .gen_state = 75 - 80,
		.code_filename = 112, .code_qualname = 128, .code_firstlineno = 72,
		.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
		.runtime_interp = 40, .interp_threads = 16, .tstate_next = 8,
		.tstate_native_tid = 160, .frame_is_entry = 68,
		.op_resume = 151, .op_resume_quick = 150, .owned_by_generator = 1,
		.frame_suspended = -1, .code_flags = 48,
		.frame_localsplus = 72, .gen_iframe = 80,
		/* asyncio's, not in the headers: checked by tests/e2e/test_async_tasks.py */
		.handle_callback = 24, .task_coro = 136, .task_name = 144,
		.fut_callback0 = 24, .task_fut_waiter = 128,
		/* trio 0.22's Task (Debian 12), checked by tests/e2e/test_trio.py */
		.trio_task_coro = 112, .trio_task_name = 128, .trio_task_nursery = 80,
		/* and its Nursery's inline values, checked by the same file */
		.obj_values = -32, .trio_nursery_parent = 0, .trio_nursery_waiting = 56,
	} },
	/*
	 * 3.12, sampled stacks only: the running thread's state is a
	 * thread-local (_Py_tss_tstate), which python.bpf.c does not read, so
	 * no exact calls; the frame chain is read as for 3.11, with the C
	 * activations' entry shims (owner FRAME_OWNED_BY_CSTACK) in place of
	 * is_entry.  From pyenv's 3.12.1 headers.
	 */
	{ 3, 12, {
		.tstate_cframe = 56, .cframe_frame = 0, .frame_code = 0, .frame_previous = 8,
		.frame_prev_instr = 56, .frame_owner = 70, .owned_by_generator = 1,
		.code_filename = 112, .code_qualname = 128, .code_firstlineno = 68,
		.code_flags = 48, .str_length = 16, .str_state = 32, .str_ascii_data = 40,
		.str_compact_data = 56, .runtime_interp = 40, .interp_threads = 72,
		.tstate_next = 8, .tstate_native_tid = 144,
		.frame_is_entry = 70, .entry_mark = 3, .entry_shim = 1,
		.frame_localsplus = 72, .gen_iframe = 72, .samples_only = 1,
	} },
};

const struct py_version *python__find_version(unsigned major, unsigned minor)
{
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].major == major && versions[i].minor == minor)
			return &versions[i];
	return NULL;
}

/* "python3.11", "libpython3.11.so.1.0", "python3.11d": the version in the file name. */
int cpython__attach(struct py_tracer *p, const struct py_image *img)
{
	const struct py_version *v = python__find_version(img->major, img->minor);

	/* (a file attached already passed these: python__attach() returns 0 for it) */
	if (python__unsupported(img) || !v)
		return -EOPNOTSUPP;
	return python__attach(p, img, &v->off);
}

static bool version_from_name(const char *path, unsigned *major, unsigned *minor)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	if (!p)
		return false;
	return sscanf(p, "python%u.%u", major, minor) == 2;
}

void python__image_free(struct py_image *img)
{
	if (!img)
		return;
	free(img->path);
	memset(img, 0, sizeof(*img));
}

const char *python__unsupported(const struct py_image *img)
{
	if (!img->major)
		return "its version cannot be told (no Py_Version, none in the file name)";
	if (!img->known)
		return "bpfprof has no struct offsets for this CPython version";
	if (img->samples_only)
		return "bpfprof reads only the sampled stacks of this CPython version (its running "
		       "thread state is a thread-local: --sample)";
	if (!img->usdt)
		return "it was built without USDT probes (configure --with-dtrace)";
	if (!img->table)
		return "its opcode handler table was not found";
	return NULL;
}

struct elf_file {
	int fd;
	Elf *elf;
	GElf_Phdr *ph;
	size_t nph;
};

static void elf_file_close(struct elf_file *f)
{
	elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->ph);
}

static int elf_file_open(const char *path, struct elf_file *f)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	elf_version(EV_CURRENT);
	f->fd = open_binary(path, NULL);
	if (f->fd < 0)
		return f->fd;
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || elf_getphdrnum(f->elf, &f->nph)) {
		elf_file_close(f);
		return -ENOEXEC;
	}
	f->ph = xcalloc(f->nph + 1, sizeof(*f->ph));
	for (i = 0; i < f->nph; i++)
		gelf_getphdr(f->elf, i, &f->ph[i]);
	return 0;
}

static int64_t vaddr_to_off(const struct elf_file *f, uint64_t va)
{
	size_t i;

	for (i = 0; i < f->nph; i++)
		if (f->ph[i].p_type == PT_LOAD && va >= f->ph[i].p_vaddr &&
		    va < f->ph[i].p_vaddr + f->ph[i].p_filesz)
			return va - f->ph[i].p_vaddr + f->ph[i].p_offset;
	return -1;
}

static bool in_exec_segment(const struct elf_file *f, uint64_t va)
{
	size_t i;

	for (i = 0; i < f->nph; i++)
		if (f->ph[i].p_type == PT_LOAD && (f->ph[i].p_flags & PF_X) &&
		    va >= f->ph[i].p_vaddr && va < f->ph[i].p_vaddr + f->ph[i].p_filesz)
			return true;
	return false;
}

/* A symbol's value and size from .symtab or .dynsym; false if absent. */
static bool find_symbol(const struct elf_file *f, const char *name, uint64_t *value, uint64_t *size)
{
	struct elfwalk w;
	GElf_Sym sym;
	const char *s;

	elfwalk__init(&w, f->elf, ELFWALK_SYMBOLS);
	while (elfwalk__next(&w)) {
		if (!gelf_getsym(w.data, w.i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		s = elfwalk__name(&w, sym.st_name);
		if (s && !strcmp(s, name)) {
			*value = sym.st_value;
			*size = sym.st_size;
			return true;
		}
	}
	return false;
}

/* R_X86_64_RELATIVE addends that fall in [lo, lo + len): a PIC table's entries. */
static void apply_relative(const struct elf_file *f, uint64_t lo, uint8_t *buf, size_t len)
{
	struct elfwalk w;
	GElf_Rela r;

	elfwalk__init(&w, f->elf, ELFWALK_TYPE(SHT_RELA));
	while (elfwalk__next(&w)) {
		if (!gelf_getrela(w.data, w.i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_RELATIVE ||
		    r.r_offset < lo || r.r_offset + 8 > lo + len)
			continue;
		memcpy(buf + (r.r_offset - lo), &r.r_addend, 8);
	}
}

/*
 * The computed-goto table: 256 pointers, every one into executable code and
 * most into _PyEval_EvalFrameDefault (unused opcodes share a handler that
 * GCC may move to the function's .cold part).  Fills the handlers of the
 * RESUME opcodes.
 */
static bool find_opcode_table(const struct elf_file *f, uint64_t eval, uint64_t eval_size,
			      const struct bp_py_cfg *off, const char *path, uint64_t resume[2],
			      uint64_t table[256])
{
	Elf_Scn *scn = NULL;
	bool found = false;

	while (!found && (scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		uint8_t *buf;
		size_t o;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_flags & SHF_EXECINSTR) || sh.sh_size < 2048)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || data->d_size != sh.sh_size)
			continue;
		buf = xmalloc(sh.sh_size);
		memcpy(buf, data->d_buf, sh.sh_size);
		if (f->elf && sh.sh_addr)
			apply_relative(f, sh.sh_addr, buf, sh.sh_size);
		for (o = (8 - sh.sh_addr % 8) % 8; o + 2048 <= sh.sh_size; o += 8) {
			uint64_t v[256];
			size_t i, inside = 0;

			memcpy(v, buf + o, sizeof(v));
			for (i = 0; i < 256; i++) {
				if (!in_exec_segment(f, v[i]))
					break;
				inside += v[i] >= eval && v[i] < eval + eval_size;
			}
			if (i < 256 || inside < 128)
				continue;
			resume[0] = v[off->op_resume];
			resume[1] = v[off->op_resume_quick];
			memcpy(table, v, sizeof(v));
			found = resume[0] >= eval && resume[0] < eval + eval_size &&
				resume[1] >= eval && resume[1] < eval + eval_size;
			p_dbg("%s: opcode table at 0x%llx: RESUME 0x%llx, RESUME_QUICK 0x%llx", path,
			      (unsigned long long)(sh.sh_addr + o), (unsigned long long)resume[0],
			      (unsigned long long)resume[1]);
			break;
		}
		free(buf);
	}
	return found;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_target(const uint64_t *t, size_t n, uint64_t addr)
{
	return bsearch(&addr, t, n, sizeof(*t), cmp_u64) != NULL;
}

/* The decoded interpreter loop: its instructions and every address a jump can land on. */
struct eval_code {
	csh cs;
	cs_insn *insns;
	size_t n;
	uint64_t *targets;	/* sorted: direct branch targets and the opcode table's entries */
	size_t ntargets;
};

static void eval_code_free(struct eval_code *e)
{
	if (e->insns)
		cs_free(e->insns, e->n);
	if (e->cs)
		cs_close(&e->cs);
	free(e->targets);
}

/* Does the kernel emulate this instruction (no single-step): push, nop, rel jmp/jcc/call? */
static bool emulated(csh cs, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (in->id == X86_INS_NOP || (in->id == X86_INS_PUSH && x->op_count == 1 &&
				      x->operands[0].type == X86_OP_REG))
		return true;
	if (cs_insn_group(cs, in, CS_GRP_JUMP) || in->id == X86_INS_CALL)
		return x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
		       in->id != X86_INS_JRCXZ && in->id != X86_INS_JECXZ &&
		       in->id != X86_INS_LOOP && in->id != X86_INS_LOOPE && in->id != X86_INS_LOOPNE;
	return false;
}

static bool decode_eval(const struct elf_file *f, uint64_t eval, uint64_t size, const uint64_t *table,
			struct eval_code *e)
{
	int64_t off = vaddr_to_off(f, eval);
	uint8_t *code = NULL;
	size_t i, cap = 512;
	bool ok = false;

	memset(e, 0, sizeof(*e));
	if (off < 0 || !size || size > (16u << 20))
		return false;
	code = xmalloc(size);
	if (pread(f->fd, code, size, off) != (ssize_t)size)
		goto out;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &e->cs) != CS_ERR_OK) {
		e->cs = 0;
		goto out;
	}
	cs_option(e->cs, CS_OPT_DETAIL, CS_OPT_ON);
	e->n = cs_disasm(e->cs, code, size, eval, 0, &e->insns);
	if (!e->n)
		goto out;
	e->targets = xmalloc(cap * sizeof(*e->targets));
	for (i = 0; i < 256; i++)
		e->targets[e->ntargets++] = table[i];
	for (i = 0; i < e->n; i++) {
		const cs_x86 *x = &e->insns[i].detail->x86;

		if (!(cs_insn_group(e->cs, &e->insns[i], CS_GRP_JUMP) ||
		      e->insns[i].id == X86_INS_CALL) ||
		    x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
			continue;
		if (e->ntargets == cap) {
			cap *= 2;
			e->targets = xrealloc(e->targets, cap * sizeof(*e->targets));
		}
		e->targets[e->ntargets++] = x->operands[0].imm;
	}
	qsort(e->targets, e->ntargets, sizeof(*e->targets), cmp_u64);
	ok = true;
out:
	free(code);
	return ok;
}

static size_t insn_at(const struct eval_code *e, uint64_t addr)
{
	size_t lo = lower_bound(e->n, e->insns[at].address < addr);

	return lo < e->n && e->insns[lo].address == addr ? lo : e->n;
}

static void add_site(struct py_image *img, const struct elf_file *f, uint32_t kind, uint32_t mode,
		     uint64_t addr, uint64_t sema, bool emu)
{
	int64_t off = vaddr_to_off(f, addr), so = sema ? vaddr_to_off(f, sema) : 0;
	if (off < 0 || so < 0 || img->nsites >= BP_PY_MAX_SITES)
		return;
	img->sites[img->nsites++] = (struct py_site){ .kind = kind, .mode = mode, .addr = addr,
						      .off = off, .sema_off = so, .emulated = emu };
	img->nslow += !emu;
}

/*
 * A RESUME handler's probe: on the first instruction the kernel emulates
 * (a handler starts with loads the kernel would single-step, ~15 us), as
 * long as the way there is straight (no branch) and nothing else jumps into
 * it; else on the label itself.  Notes whether prev_instr is stored on the
 * way (the BPF side then reads the RESUME at prev_instr, not after it).
 */
static void place_resume(struct py_image *img, const struct elf_file *f, const struct eval_code *e,
			 uint64_t label, uint32_t prev_off)
{
	size_t i = insn_at(e, label), j;
	uint32_t mode = 0;

	for (j = i; j < e->n && j < i + 12; j++) {
		const cs_insn *in = &e->insns[j];
		const cs_x86 *x = &in->detail->x86;

		if (j > i && is_target(e->targets, e->ntargets, in->address))
			break;
		if (emulated(e->cs, in)) {
			add_site(img, f, BP_PY_SITE_RESUME, mode, in->address, 0, true);
			return;
		}
		if (cs_insn_group(e->cs, in, CS_GRP_JUMP) || cs_insn_group(e->cs, in, CS_GRP_CALL) ||
		    cs_insn_group(e->cs, in, CS_GRP_RET) || cs_insn_group(e->cs, in, CS_GRP_INT))
			break;
		/* frame->prev_instr = next_instr: a store at the field's displacement */
		if (in->id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_MEM &&
		    x->operands[0].mem.disp == prev_off && x->operands[0].mem.index == X86_REG_INVALID)
			mode |= BP_PY_PREV_STORED;
	}
	add_site(img, f, BP_PY_SITE_RESUME, 0, label, 0, false);
}

/*
 * The DTRACE_FUNCTION_* sites of the loop: each tests the probe's
 * semaphore (cmpw $0, sema(%rip); jne ...) before calling the probe's
 * function.  A probe on the jump fires exactly where the USDT probe would,
 * without raising the semaphore: CPython then never runs the probe's
 * function (which converts both names to UTF-8 and computes the line
 * number: ~6 us per call here).  Returns how many were found.
 */
static size_t place_sema_sites(struct py_image *img, const struct elf_file *f,
			       const struct eval_code *e, uint32_t kind, uint64_t sema)
{
	size_t i, n = 0;

	for (i = 0; sema && i + 1 < e->n; i++) {
		const cs_x86 *x = &e->insns[i].detail->x86;
		uint8_t k;

		for (k = 0; k < x->op_count; k++) {
			const cs_x86_op *op = &x->operands[k];

			if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP &&
			    op->mem.index == X86_REG_INVALID &&
			    e->insns[i].address + e->insns[i].size + op->mem.disp == sema)
				break;
		}
		if (k == x->op_count || !emulated(e->cs, &e->insns[i + 1]) ||
		    !cs_insn_group(e->cs, &e->insns[i + 1], CS_GRP_JUMP))
			continue;
		add_site(img, f, kind, 0, e->insns[i + 1].address, 0, true);
		n++;
	}
	return n;
}

/*
 * CPython 3.11+ exports Py_Version (PY_VERSION_HEX, in read-only data): the
 * version of a binary whatever its name, e.g. a program that links the
 * interpreter in statically.  Older versions are told by the file name.
 */
static bool version_from_symbol(const struct elf_file *f, unsigned *major, unsigned *minor)
{
	uint64_t addr, size;
	uint32_t hex = 0;
	int64_t off;

	if (!find_symbol(f, "Py_Version", &addr, &size) || size < sizeof(hex))
		return false;
	off = vaddr_to_off(f, addr);
	/* little-endian: the low 32 bits of the unsigned long come first */
	if (off < 0 || pread(f->fd, &hex, sizeof(hex), off) != (ssize_t)sizeof(hex) ||
	    hex >> 24 != 3)
		return false;
	*major = hex >> 24;
	*minor = (hex >> 16) & 0xff;
	return true;
}

/* Reads what python.bpf.c needs from an interpreter file; false if it is not CPython. */
static bool inspect(const char *path, struct py_image *img)
{
	uint64_t eval = 0, eval_size = 0, size, resume[2] = { 0 }, table[256];
	uint64_t pc[BP_PY_NKINDS] = { 0 }, sema[BP_PY_NKINDS] = { 0 };
	const struct py_version *v = NULL;
	struct eval_code code = { 0 };
	struct usdt_notes notes;
	struct elf_file f;
	bool decoded = false;
	size_t i;

	memset(img, 0, sizeof(*img));
	if (elf_file_open(path, &f))
		return false;
	if (!find_symbol(&f, "_PyRuntime", &img->runtime, &size) ||
	    !find_symbol(&f, "_PyEval_EvalFrameDefault", &eval, &eval_size)) {
		elf_file_close(&f);
		return false;
	}
	img->path = xstrdup(path);
	{
		GElf_Ehdr eh;

		img->pie = gelf_getehdr(f.elf, &eh) && eh.e_type == ET_DYN;
	}
	/* the lowest PT_LOAD: 0 in a PIE or a library is an address, not "none yet" */
	img->base_vaddr = UINT64_MAX;
	for (i = 0; i < f.nph; i++)
		if (f.ph[i].p_type == PT_LOAD && f.ph[i].p_vaddr < img->base_vaddr)
			img->base_vaddr = f.ph[i].p_vaddr & ~0xfffull;
	if (img->base_vaddr == UINT64_MAX)
		img->base_vaddr = 0;
	if (version_from_symbol(&f, &img->major, &img->minor) ||
	    version_from_name(path, &img->major, &img->minor)) {
		v = python__find_version(img->major, img->minor);
		img->known = v != NULL;
		img->samples_only = v && v->off.samples_only;
		if (v && !v->off.samples_only)
			img->table = find_opcode_table(&f, eval, eval_size, &v->off, path, resume, table);
	}
	if (!usdt__notes(path, &notes)) {
		for (i = 0; i < notes.n; i++) {
			int kind = -1;

			if (strcmp(notes.v[i].provider, "python"))
				continue;
			if (!strcmp(notes.v[i].name, "function__entry"))
				kind = BP_PY_SITE_ENTRY;
			else if (!strcmp(notes.v[i].name, "function__return"))
				kind = BP_PY_SITE_RETURN;
			if (kind < 0 || pc[kind])
				continue;
			pc[kind] = notes.v[i].pc;
			sema[kind] = notes.v[i].semaphore;
		}
		usdt__notes_free(&notes);
	}
	img->usdt = pc[BP_PY_SITE_RETURN] != 0;
	if (img->table && img->usdt) {
		decoded = decode_eval(&f, eval, eval_size, table, &code);
		for (i = 0; i < 2; i++) {
			if (decoded)
				place_resume(img, &f, &code, resume[i], v->off.frame_prev_instr);
			else
				add_site(img, &f, BP_PY_SITE_RESUME, 0, resume[i], 0, false);
		}
		/* the exits, and gen.throw()'s entry, at the loop's own semaphore tests if found */
		for (i = BP_PY_SITE_ENTRY; i <= BP_PY_SITE_RETURN; i++) {
			if (!pc[i] || (decoded && sema[i] && place_sema_sites(img, &f, &code, i, sema[i])))
				continue;
			add_site(img, &f, i, 0, pc[i], sema[i], true);
		}
		eval_code_free(&code);
	}
	if (img->nsites < 3)
		img->table = false;
	elf_file_close(&f);
	return true;
}

/* dir/name for the first dir of a DT_RUNPATH/DT_RPATH list that has it ($ORIGIN: exe's dir). */
static char *search_runpath(const char *list, const char *exe, const char *name)
{
	char *copy = xstrdup(list), *dir, *save = NULL, *found = NULL, origin[4096], path[8192];
	const char *slash = strrchr(exe, '/');

	snprintf(origin, sizeof(origin), "%.*s", slash ? (int)(slash - exe) : 1, slash ? exe : ".");
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		if (!strncmp(dir, "$ORIGIN", 7))
			snprintf(path, sizeof(path), "%s%s/%s", origin, dir + 7, name);
		else
			snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (!access(path, R_OK))
			found = realpath(path, NULL);
	}
	free(copy);
	return found;
}

/* The libpython3.X a process has mapped, or the one an executable needs. */
static char *find_libpython(const char *exe, pid_t pid)
{
	char path[64], line[4096], *found = NULL, **paths = NULL;
	const char *needed = NULL, *runpath = NULL;
	size_t npaths = 0, i;
	struct elf_file f;
	struct elfwalk w;
	FILE *m;

	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		m = fopen(path, "re");
		while (m && !found && fgets(line, sizeof(line), m)) {
			char *p = strchr(line, '/');

			if (!p)
				continue;
			p[strcspn(p, "\n")] = 0;
			if (strstr(p, "/libpython3."))
				found = xstrdup(p);
		}
		if (m)
			fclose(m);
		if (found)
			return found;
	}
	if (elf_file_open(exe, &f))
		return NULL;
	elfwalk__init(&w, f.elf, ELFWALK_TYPE(SHT_DYNAMIC));
	while (elfwalk__next(&w)) {
		GElf_Dyn dyn;
		const char *s;

		if (!gelf_getdyn(w.data, w.i, &dyn))
			continue;
		s = elfwalk__name(&w, dyn.d_un.d_val);
		if (dyn.d_tag == DT_NEEDED && s && !strncmp(s, "libpython3.", 11))
			needed = s;
		else if ((dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH) && s)
			runpath = s;
	}
	/* the process is not running yet: look where its dynamic linker would */
	if (needed && runpath)
		found = search_runpath(runpath, exe, needed);
	if (needed && !found && !select__libraries(needed, NULL, 0, &paths, &npaths) && npaths)
		found = xstrdup(paths[0]);
	for (i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	elf_file_close(&f);
	return found;
}

int python__find(const char *exe, pid_t pid, struct py_image *img)
{
	const char *src;
	char *lib;
	bool ok;
	int err;

	memset(img, 0, sizeof(*img));
	if (!exe)
		return 0;
	/* read and probed through one descriptor, the file pid maps (symbols/binfile.h) */
	err = binfile__pin(exe, pid, &src);
	if (err == -ESTALE)
		return err;
	if (inspect(err ? exe : src, img))
		return 1;
	lib = find_libpython(exe, pid);	/* by its name: $ORIGIN is its directory */
	if (!lib)
		return 0;
	err = binfile__pin(lib, pid, &src);
	ok = err != -ESTALE && inspect(err ? lib : src, img);
	free(lib);
	return err == -ESTALE ? err : ok ? 1 : 0;
}

void python__take_patterns(char **pats, size_t *n, char ***py, size_t *npy)
{
	size_t i, j = 0;

	for (i = 0; i < *n; i++) {
		if (!strncmp(pats[i], "py:", 3)) {
			*py = xrealloc(*py, (*npy + 1) * sizeof(**py));
			(*py)[(*npy)++] = pats[i] + 3;
		} else {
			pats[j++] = pats[i];
		}
	}
	*n = j;
}
