// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython binaries and the python.bpf.c loader (see python.h, bpf/python.h).
 *
 * CPython 3.11's function__entry USDT probe fires only under a Python trace
 * function (its call sits in the interpreter's tracing path), so a call
 * starts where every frame starts: the handler of the RESUME opcode.  The
 * handlers have no symbols; their addresses are in the computed-goto table
 * of _PyEval_EvalFrameDefault (`opcode_targets`, 256 code pointers into
 * that function), which this file finds by its shape in the binary's data.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include "sample.h"
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skel/python.skel.h"
#include "bpf/events.h"
#include "bpf/python.h"
#include "base/log.h"
#include "base/util.h"
#include "symbols/select.h"
#include "python.h"
#include "usdt.h"

/*
 * Struct offsets per CPython version, facts from its headers: computed with
 * offsetof() against Python.h + internal/pycore_*.h (Py_BUILD_CORE) by
 * scripts/pyoffsets.c, which prints a row for the python3.X-dev installed.
 * A version is added by running it against that version's headers (3.8-3.10
 * have PyFrameObject chains instead of _PyInterpreterFrame, 3.12+ moved
 * tstate_current to a thread-local: each needs its own reading in BPF, so
 * only versions whose layout python.bpf.c understands are listed).
 */
static const struct py_version {
	unsigned major, minor;
	struct bp_py_cfg off;
} versions[] = {
	{ 3, 11, {
		.runtime_tstate = 576, .tstate_cframe = 56, .tstate_curexc = 96,
		.cframe_frame = 8, .frame_code = 32, .frame_previous = 48,
		.frame_prev_instr = 56, .frame_owner = 69, .gen_state = 75 - 80,
		.code_filename = 112, .code_qualname = 128, .code_firstlineno = 72,
		.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
		.runtime_interp = 40, .interp_threads = 16, .tstate_next = 8,
		.tstate_native_tid = 160, .frame_is_entry = 68,
		.op_resume = 151, .op_resume_quick = 150, .owned_by_generator = 1,
		.frame_suspended = -1,
	} },
};

static const struct py_version *find_version(unsigned major, unsigned minor)
{
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].major == major && versions[i].minor == minor)
			return &versions[i];
	return NULL;
}

/* "python3.11", "libpython3.11.so.1.0", "python3.11d": the version in the file name. */
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
		return "its version cannot be told from the file name";
	if (!img->known)
		return "bpfprof has no struct offsets for this CPython version";
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
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
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
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			s = elf_strptr(f->elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*value = sym.st_value;
				*size = sym.st_size;
				return true;
			}
		}
	}
	return false;
}

/* R_X86_64_RELATIVE addends that fall in [lo, lo + len): a PIC table's entries. */
static void apply_relative(const struct elf_file *f, uint64_t lo, uint8_t *buf, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela r;

			if (!gelf_getrela(data, i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_RELATIVE ||
			    r.r_offset < lo || r.r_offset + 8 > lo + len)
				continue;
			memcpy(buf + (r.r_offset - lo), &r.r_addend, 8);
		}
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
	size_t lo = 0, hi = e->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (e->insns[mid].address < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->n && e->insns[lo].address == addr ? lo : e->n;
}

static void add_site(struct py_image *img, const struct elf_file *f, uint32_t kind, uint32_t mode,
		     uint64_t addr, uint64_t sema, bool emu)
{
	int64_t off = vaddr_to_off(f, addr), so = sema ? vaddr_to_off(f, sema) : 0;
	struct py_site *s;

	if (off < 0 || so < 0 || img->nsites >= BP_PY_MAX_SITES)
		return;
	s = &img->sites[img->nsites++];
	s->kind = kind;
	s->mode = mode;
	s->addr = addr;
	s->off = off;
	s->sema_off = so;
	s->emulated = emu;
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
	for (i = 0; i < f.nph; i++)
		if (f.ph[i].p_type == PT_LOAD && (!img->base_vaddr || f.ph[i].p_vaddr < img->base_vaddr))
			img->base_vaddr = f.ph[i].p_vaddr & ~0xfffull;
	if (version_from_name(path, &img->major, &img->minor)) {
		v = find_version(img->major, img->minor);
		img->known = v != NULL;
		if (v)
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
	Elf_Scn *scn = NULL;
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
	while ((scn = elf_nextscn(f.elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = data ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, i, &dyn))
				continue;
			s = elf_strptr(f.elf, sh.sh_link, dyn.d_un.d_val);
			if (dyn.d_tag == DT_NEEDED && s && !strncmp(s, "libpython3.", 11))
				needed = s;
			else if ((dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH) && s)
				runpath = s;
		}
	}
	/* the process is not running yet: look where its dynamic linker would */
	if (needed && runpath)
		found = search_runpath(runpath, exe, needed);
	if (needed && !found && !select__libraries(needed, 0, &paths, &npaths) && npaths)
		found = xstrdup(paths[0]);
	for (i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	elf_file_close(&f);
	return found;
}

int python__find(const char *exe, pid_t pid, struct py_image *img)
{
	char *lib;
	bool ok;

	memset(img, 0, sizeof(*img));
	if (!exe)
		return 0;
	if (inspect(exe, img))
		return 1;
	lib = find_libpython(exe, pid);
	if (!lib)
		return 0;
	ok = inspect(lib, img);
	free(lib);
	return ok ? 1 : 0;
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

struct py_tracer {
	struct python_bpf *skel;
	struct bpf_link **links;
	size_t nlinks;
	char **paths;		/* files attached, by config index */
	size_t npaths;
};

int python__new(bool trace_all, const struct shared_maps *maps, struct py_tracer **out)
{
	struct py_tracer *p = xcalloc(1, sizeof(*p));
	int err;

	p->skel = python_bpf__open();
	if (!p->skel) {
		err = -errno;
		p_err("cannot open the Python BPF object: %s", strerror(-err));
		goto cleanup;
	}
	p->skel->rodata->trace_all = trace_all;
	err = bpf_map__reuse_fd(p->skel->maps.rb, maps->rb);
	if (!err)
		err = bpf_map__reuse_fd(p->skel->maps.tgids, maps->tgids);
	if (!err)
		err = bpf_map__reuse_fd(p->skel->maps.batches, maps->batches);
	if (!err)
		err = bpf_map__reuse_fd(p->skel->maps.recording, maps->recording);
	if (err) {
		p_err("cannot share the ring buffer with the Python probes: %s", strerror(-err));
		goto cleanup;
	}
	err = python_bpf__load(p->skel);
	if (err) {
		p_err("cannot load the Python BPF program: %s", strerror(-err));
		goto cleanup;
	}
	*out = p;
	return 0;
cleanup:
	python__free(p);
	return err;
}

int python__attach(struct py_tracer *p, const struct py_image *img)
{
	unsigned long offs[BP_PY_MAX_SITES], refs[BP_PY_MAX_SITES];
	const struct py_version *v = find_version(img->major, img->minor);
	__u64 cookies[BP_PY_MAX_SITES];
	struct bp_py_cfg cfg;
	struct bpf_link *l;
	__u32 idx = p->npaths;
	size_t i;
	int err;

	for (i = 0; i < p->npaths; i++)
		if (!strcmp(p->paths[i], img->path))
			return 0;
	if (python__unsupported(img) || !v)
		return -EOPNOTSUPP;
	if (idx >= BP_PY_MAX_CFGS)
		return -E2BIG;
	cfg = v->off;
	memset(cfg.addr, 0, sizeof(cfg.addr));
	memset(cfg.mode, 0, sizeof(cfg.mode));
	cfg.runtime = img->runtime;
	for (i = 0; i < img->nsites; i++) {
		cfg.addr[i] = img->sites[i].addr;
		cfg.mode[i] = img->sites[i].mode;
		offs[i] = img->sites[i].off;
		refs[i] = img->sites[i].sema_off;
		cookies[i] = img->sites[i].kind | i << 4 | (__u64)idx << 8;
		p_dbg("%s: Python probe %zu (%s) at 0x%llx%s%s", img->path, i,
		      img->sites[i].kind == BP_PY_SITE_RESUME ? "resume" :
		      img->sites[i].kind == BP_PY_SITE_ENTRY ? "entry" : "return",
		      (unsigned long long)img->sites[i].addr,
		      img->sites[i].emulated ? "" : ", single-stepped",
		      img->sites[i].sema_off ? ", semaphore raised" : "");
	}
	err = bpf_map__update_elem(p->skel->maps.py_cfgs, &idx, sizeof(idx), &cfg, sizeof(cfg), 0);
	if (err) {
		p_err("cannot configure the Python probes: %s", strerror(-err));
		return err;
	}
	{
		LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = offs, .ref_ctr_offsets = refs,
			    .cookies = cookies, .cnt = img->nsites);

		l = bpf_program__attach_uprobe_multi(p->skel->progs.py_probe, -1, img->path, NULL, &o);
	}
	if (!l) {
		err = -errno;
		p_err("cannot attach the Python probes to %s: %s", img->path, strerror(-err));
		return err;
	}
	if (img->nslow)
		p_info("%u of the %zu Python probe sites are single-stepped by the kernel: "
		       "about 15 us per Python call", img->nslow, img->nsites);
	p->links = xrealloc(p->links, (p->nlinks + 1) * sizeof(*p->links));
	p->links[p->nlinks++] = l;
	p->paths = xrealloc(p->paths, (p->npaths + 1) * sizeof(*p->paths));
	p->paths[p->npaths++] = xstrdup(img->path);
	return 0;
}

uint64_t python__misses(struct py_tracer *p)
{
	return p ? __atomic_load_n(&p->skel->bss->py_misses, __ATOMIC_RELAXED) : 0;
}

uint64_t python__lost(struct py_tracer *p, uint64_t *per_cpu, size_t ncpu)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < BP_MAX_CPUS; i++) {
		uint64_t v = __atomic_load_n(&p->skel->bss->lost[i], __ATOMIC_RELAXED);

		if (per_cpu && i < ncpu)
			per_cpu[i] += v;
		sum += v;
	}
	return sum;
}

void python__pause(struct py_tracer *p)
{
	__atomic_store_n(&p->skel->bss->paused, 1, __ATOMIC_SEQ_CST);
}

void python__free(struct py_tracer *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nlinks; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	for (i = 0; i < p->npaths; i++)
		free(p->paths[i]);
	free(p->paths);
	python_bpf__destroy(p->skel);
	free(p);
}

struct py_capture {
	struct py_proc_entry {
		uint32_t pid;
		struct bp_py_cfg off;
	} *procs;		/* sampled CPython processes */
	size_t nprocs;
	char **inc, **exc;
	size_t ninc, nexc;
	bool trace_all;
	struct py_tracer *tr;
	struct py_image *imgs;	/* checked; attached up to nattached */
	size_t nimgs, nattached;
};

struct py_capture *pycap__new(char **inc, size_t *ninc, char **exc, size_t *nexc, bool trace_all)
{
	struct py_capture *pc = xcalloc(1, sizeof(*pc));

	python__take_patterns(inc, ninc, &pc->inc, &pc->ninc);
	python__take_patterns(exc, nexc, &pc->exc, &pc->nexc);
	pc->trace_all = trace_all;
	return pc;
}

bool pycap__patterns(const struct py_capture *pc)
{
	return pc && (pc->ninc || pc->nexc);
}

void pycap__patterns_get(const struct py_capture *pc, char ***inc, size_t *ninc, char ***exc,
			 size_t *nexc)
{
	*inc = pc->inc;
	*ninc = pc->ninc;
	*exc = pc->exc;
	*nexc = pc->nexc;
}

int pycap__check(struct py_capture *pc, const char *exe, pid_t pid, bool others)
{
	struct py_image img;
	const char *why;
	size_t i;
	int r = python__find(exe, pid, &img);

	if (r <= 0)
		return r;
	why = python__unsupported(&img);
	if (why) {
		char ver[16] = "";

		if (img.major)
			snprintf(ver, sizeof(ver), " %u.%u", img.major, img.minor);
		if (others) {
			p_warn("%s is CPython%s: its Python calls are not traced (%s); "
			       "the native functions selected and samples are", img.path, ver, why);
		} else {
			p_err("cannot trace the Python calls of %s (CPython%s): %s; "
			      "--sample profiles it, -F selects native functions", img.path, ver, why);
		}
		python__image_free(&img);
		return others ? 0 : -EOPNOTSUPP;
	}
	for (i = 0; i < pc->nimgs; i++)
		if (!strcmp(pc->imgs[i].path, img.path))
			break;
	if (i < pc->nimgs) {
		python__image_free(&img);
		return 1;
	}
	p_dbg("%s: CPython %u.%u, Python calls traced", img.path, img.major, img.minor);
	pc->imgs = xrealloc(pc->imgs, (pc->nimgs + 1) * sizeof(*pc->imgs));
	pc->imgs[pc->nimgs++] = img;
	return 1;
}

int pycap__attach(struct py_capture *pc, const struct shared_maps *maps)
{
	int err;

	if (pc->nattached == pc->nimgs)
		return 0;
	if (!pc->tr) {
		err = python__new(pc->trace_all, maps, &pc->tr);
		if (err)
			return err;
	}
	for (; pc->nattached < pc->nimgs; pc->nattached++) {
		err = python__attach(pc->tr, &pc->imgs[pc->nattached]);
		if (err)
			return err;
	}
	return 0;
}

size_t pycap__nimages(const struct py_capture *pc)
{
	return pc ? pc->nattached : 0;
}

uint64_t pycap__lost(struct py_capture *pc, uint64_t *per_cpu, size_t ncpu)
{
	return pc && pc->tr ? python__lost(pc->tr, per_cpu, ncpu) : 0;
}

uint64_t pycap__misses(struct py_capture *pc)
{
	return pc && pc->tr ? python__misses(pc->tr) : 0;
}

void pycap__pause(struct py_capture *pc)
{
	if (pc && pc->tr)
		python__pause(pc->tr);
}

void pycap__free(struct py_capture *pc)
{
	size_t i;

	if (!pc)
		return;
	python__free(pc->tr);
	for (i = 0; i < pc->nimgs; i++)
		python__image_free(&pc->imgs[i]);
	free(pc->imgs);
	free(pc->procs);
	free(pc->inc);
	free(pc->exc);
	free(pc);
}

/* Where path is mapped in pid: the start of its mapping at file offset 0, 0 if none. */
static uint64_t map_start(uint32_t pid, const char *path)
{
	char maps[64], line[4096];
	uint64_t start = 0;
	FILE *m;

	snprintf(maps, sizeof(maps), "/proc/%u/maps", pid);
	m = fopen(maps, "re");
	while (m && !start && fgets(line, sizeof(line), m)) {
		unsigned long long a, b, off;
		char *p = strchr(line, '/');

		if (!p || sscanf(line, "%llx-%llx %*s %llx", &a, &b, &off) != 3 || off)
			continue;
		p[strcspn(p, "\n")] = 0;
		if (!strcmp(p, path))
			start = a;
	}
	if (m)
		fclose(m);
	return start;
}

int pycap__sample_proc(struct py_capture *pc, struct sampler *smp, uint32_t pid, const char *path)
{
	const struct py_version *v;
	struct bp_py_proc proc;
	struct py_image img;
	char link[64], *exe;
	uint64_t start;
	int ok = 0;

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	exe = path ? xstrdup(path) : realpath(link, NULL);
	if (!exe || python__find(exe, pid, &img) <= 0) {
		free(exe);
		return 0;
	}
	v = find_version(img.major, img.minor);
	start = map_start(pid, img.path);
	if (!start && !img.pie)
		start = img.base_vaddr;	/* an executable loads where it was linked */
	if (!v) {
		p_warn("pid %u runs CPython %u.%u (%s), which bpfprof has no offsets for: its "
		       "samples show the interpreter's C frames", pid, img.major, img.minor, img.path);
	} else if (!start) {
		p_dbg("pid %u: %s is not mapped (yet)", pid, img.path);
	} else {
		memset(&proc, 0, sizeof(proc));
		proc.off = v->off;
		proc.runtime = img.runtime + (start - img.base_vaddr);
		int err = sampler__python_proc(smp, pid, &proc, sizeof(proc));

		if (err)
			p_warn("pid %u: cannot have its Python frames read: %s", pid, strerror(-err));
		if (!err) {
			pc->procs = xrealloc(pc->procs, (pc->nprocs + 1) * sizeof(*pc->procs));
			pc->procs[pc->nprocs].pid = pid;
			pc->procs[pc->nprocs++].off = v->off;
			p_dbg("pid %u: CPython %u.%u, Python frames in its samples", pid, img.major,
			      img.minor);
			ok = 1;
		}
	}
	python__image_free(&img);
	free(exe);
	return ok;
}

static int read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* A compact str object of pid as UTF-8 (Latin-1/UCS-2/UCS-4 converted). */
static int read_pystr(uint32_t pid, const struct bp_py_cfg *o, uint64_t obj, char *out, size_t cap)
{
	uint32_t state, kind, i;
	uint64_t length, data;
	uint8_t raw[512];
	size_t n, w = 0;

	if (!obj || read_mem(pid, obj + o->str_state, &state, 4) ||
	    read_mem(pid, obj + o->str_length, &length, 8))
		return -EFAULT;
	kind = (state >> 2) & 7;
	if (!(state & (1 << 5)) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	data = obj + ((state & (1 << 6)) ? o->str_ascii_data : o->str_compact_data);
	n = length * kind > sizeof(raw) ? sizeof(raw) / kind * kind : length * kind;
	if (n && read_mem(pid, data, raw, n))
		return -EFAULT;
	for (i = 0; i + kind <= n && w + 5 < cap; i += kind) {
		uint32_t c = 0;

		memcpy(&c, raw + i, kind);
		if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd;
		if (c < 0x80) {
			out[w++] = c ? c : '?';
		} else if (c < 0x800) {
			out[w++] = 0xc0 | c >> 6;
			out[w++] = 0x80 | (c & 0x3f);
		} else if (c < 0x10000) {
			out[w++] = 0xe0 | c >> 12;
			out[w++] = 0x80 | ((c >> 6) & 0x3f);
			out[w++] = 0x80 | (c & 0x3f);
		} else {
			out[w++] = 0xf0 | (c > 0x10ffff ? 0xfffd : c) >> 18;
			out[w++] = 0x80 | ((c >> 12) & 0x3f);
			out[w++] = 0x80 | ((c >> 6) & 0x3f);
			out[w++] = 0x80 | (c & 0x3f);
		}
	}
	out[w] = 0;
	return 0;
}

int pycap__name_code(struct py_capture *pc, uint32_t pid, uint64_t code, char *name,
		     size_t name_len, char *file, size_t file_len, uint32_t *line)
{
	const struct bp_py_cfg *o = NULL;
	uint64_t q = 0, f = 0;
	int32_t l = 0;
	size_t i;

	for (i = 0; i < pc->nprocs && !o; i++)
		if (pc->procs[i].pid == pid)
			o = &pc->procs[i].off;
	if (!o || read_mem(pid, code + o->code_qualname, &q, 8) ||
	    read_mem(pid, code + o->code_filename, &f, 8) ||
	    read_mem(pid, code + o->code_firstlineno, &l, 4) ||
	    read_pystr(pid, o, q, name, name_len) || read_pystr(pid, o, f, file, file_len))
		return -EFAULT;
	*line = l > 0 ? l : 0;
	return 0;
}
