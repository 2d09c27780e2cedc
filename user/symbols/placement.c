// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Entry probe placement (see placement.h for the rules and why).
 *
 * Decoding is Capstone's (Debian libcapstone-dev): its x86 tables cover every
 * instruction a compiler emits, and it gives what the rules need per
 * instruction (the registers it writes, explicit and implicit; its operands
 * with their access; its groups: jump, call, ret, int, privileged), where
 * libopcodes only prints text.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <capstone/capstone.h>
#include <elfutils/libdw.h>
#include "elfwalk.h"
#include "placement.h"
#include "select.h"
#include "base/log.h"
#include "base/util.h"

/* A prefix longer than this is not worth following (and not what compilers emit). */
#define MAX_PREFIX_INSNS	12
/* Functions larger than this are not decoded: their probe stays at the entry. */
#define MAX_FUNC_BYTES		(4u << 20)
/* Jump table entries read per table at most. */
#define MAX_TABLE_ENTRIES	4096

struct placement_mod {
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi;		/* .eh_frame (or .debug_frame); NULL: none */
	csh cs;
	cs_insn *insn;
	const struct elf_funcs *syms;
	uint64_t *cold_targets;	/* sorted branch targets of the .cold fragments */
	size_t ncold;
	uint8_t *buf;		/* the function being decided */
	size_t cap;
};

bool placement__emulated(uint32_t insn)
{
	return insn == ELFSYM_INSN_PUSH || insn == ELFSYM_INSN_NOP || insn == ELFSYM_INSN_NOP5 ||
	       insn == ELFSYM_INSN_JUMP;
}

/*
 * The kernel's uprobe code emulates the relative jmp (eb, e9), call (e8) and
 * conditional jumps (70-7f, 0f 80-8f), without prefixes (branch_setup_xol_ops
 * in arch/x86/kernel/uprobes.c); everything else goes through elfsym's
 * classification, which the rest of bpfprof already uses.
 */
static uint32_t classify(const uint8_t *code, size_t len)
{
	if (len >= 2 && (code[0] == 0xeb || (code[0] >= 0x70 && code[0] <= 0x7f)))
		return ELFSYM_INSN_JUMP;
	if (len >= 5 && (code[0] == 0xe9 || code[0] == 0xe8))
		return ELFSYM_INSN_JUMP;
	if (len >= 6 && code[0] == 0x0f && code[1] >= 0x80 && code[1] <= 0x8f)
		return ELFSYM_INSN_JUMP;
	return elfsym__classify_insn(code, len);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The target of a direct (relative) branch, or false for any other instruction. */
static bool direct_target(csh cs, const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;

	if (!cs_insn_group(cs, in, X86_GRP_JUMP) && !cs_insn_group(cs, in, X86_GRP_CALL) &&
	    !cs_insn_group(cs, in, X86_GRP_BRANCH_RELATIVE))
		return false;
	if (x->op_count < 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

static bool read_at(const struct placement_mod *pm, uint64_t addr, void *dst, size_t len)
{
	int64_t off = elfsym__addr_to_offset(pm->syms, addr);

	if (off < 0 || elfsym__addr_to_offset(pm->syms, addr + len - 1) != off + (int64_t)len - 1)
		return false;
	return pread(pm->fd, dst, len, (off_t)off) == (ssize_t)len;
}

/* Collects the branch targets of every "NAME.cold[.N]" fragment of the file. */
static void read_cold_targets(struct placement_mod *pm)
{
	size_t cap = 0;
	struct elfwalk w;

	elfwalk__init(&w, pm->elf, ELFWALK_TYPE(SHT_SYMTAB));
	while (elfwalk__next(&w)) {
		GElf_Sym sym;
		const char *name;
		uint8_t *code;
		const uint8_t *p;
		size_t left;
		uint64_t addr;

		if (!gelf_getsym(w.data, w.i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !sym.st_size || sym.st_size > MAX_FUNC_BYTES)
			continue;
		name = elfwalk__name(&w, sym.st_name);
		if (!name || !strstr(name, ".cold"))
			continue;
		code = xmalloc(sym.st_size);
		if (!read_at(pm, sym.st_value, code, sym.st_size)) {
			free(code);
			continue;
		}
		p = code;
		left = sym.st_size;
		addr = sym.st_value;
		while (left && cs_disasm_iter(pm->cs, &p, &left, &addr, pm->insn)) {
			uint64_t t;

			if (!direct_target(pm->cs, pm->insn, &t))
				continue;
			if (pm->ncold == cap) {
				cap = cap ? cap * 2 : 64;
				pm->cold_targets = xrealloc(pm->cold_targets,
							    cap * sizeof(*pm->cold_targets));
			}
			pm->cold_targets[pm->ncold++] = t;
		}
		free(code);
	}
	if (pm->ncold)
		qsort(pm->cold_targets, pm->ncold, sizeof(*pm->cold_targets), cmp_u64);
}

int placement__open(const char *path, const struct elf_funcs *syms, struct placement_mod **out)
{
	struct placement_mod *pm = xcalloc(1, sizeof(*pm));
	int err;

	*out = NULL;
	pm->fd = -1;
	pm->cs = 0;
	pm->syms = syms;
	pm->fd = open_binary(path, NULL);
	if (pm->fd < 0) {
		err = pm->fd;
		goto fail;
	}
	elf_version(EV_CURRENT);
	pm->elf = elf_begin(pm->fd, ELF_C_READ, NULL);
	if (!pm->elf) {
		err = -ENOEXEC;
		goto fail;
	}
	{
		GElf_Ehdr eh;

		if (!gelf_getehdr(pm->elf, &eh) || eh.e_machine != EM_X86_64) {
			err = -ENOTSUP;	/* only x86-64 code is classified */
			goto fail;
		}
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &pm->cs) != CS_ERR_OK) {
		pm->cs = 0;
		err = -ENOMEM;
		goto fail;
	}
	cs_option(pm->cs, CS_OPT_DETAIL, CS_OPT_ON);
	pm->insn = cs_malloc(pm->cs);
	if (!pm->insn) {
		err = -ENOMEM;
		goto fail;
	}
	pm->cfi = dwarf_getcfi_elf(pm->elf);	/* NULL: no unwind tables, nothing to compare */
	read_cold_targets(pm);
	*out = pm;
	return 0;
fail:
	placement__close(pm);
	return err;
}

void placement__close(struct placement_mod *pm)
{
	if (!pm)
		return;
	if (pm->cfi)
		dwarf_cfi_end(pm->cfi);
	if (pm->insn)
		cs_free(pm->insn, 1);
	if (pm->cs)
		cs_close(&pm->cs);
	if (pm->elf)
		elf_end(pm->elf);
	if (pm->fd >= 0)
		close(pm->fd);
	free(pm->cold_targets);
	free(pm->buf);
	free(pm);
}

/* The 64-bit register a (sub-)register belongs to, for the argument registers only. */
static bool is_arg_reg(unsigned r)
{
	switch (r) {
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL:
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL:
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH:
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH:
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B:
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B:
		return true;
	}
	return false;
}

static bool is_sp(unsigned r)
{
	return r == X86_REG_RSP || r == X86_REG_ESP || r == X86_REG_SP || r == X86_REG_SPL;
}

/* Instructions that only read their first operand (Intel order: operand 0 is the destination). */
static bool reads_first_operand_only(unsigned id)
{
	switch (id) {
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_BT: case X86_INS_NOP:
	case X86_INS_PREFETCH: case X86_INS_PREFETCHNTA: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2: case X86_INS_PREFETCHW:
	case X86_INS_UCOMISD: case X86_INS_UCOMISS: case X86_INS_COMISD: case X86_INS_COMISS:
	case X86_INS_PTEST:
		return true;
	}
	return false;
}

/*
 * Can `in` run before the probe?  Returns NULL when it is harmless, else a
 * static reason.  Conservative: a memory operand in the destination position
 * counts as a write even where Capstone's access flags say otherwise.
 */
static const char *harmful(const struct placement_mod *pm, const cs_insn *in, bool keep_args)
{
	const cs_x86 *x = &in->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0, i;

	if (cs_insn_group(pm->cs, in, X86_GRP_JUMP) || cs_insn_group(pm->cs, in, X86_GRP_CALL) ||
	    cs_insn_group(pm->cs, in, X86_GRP_RET) || cs_insn_group(pm->cs, in, X86_GRP_BRANCH_RELATIVE))
		return "branch";
	if (cs_insn_group(pm->cs, in, X86_GRP_INT) || cs_insn_group(pm->cs, in, X86_GRP_IRET) ||
	    cs_insn_group(pm->cs, in, X86_GRP_PRIVILEGE) || cs_insn_group(pm->cs, in, X86_GRP_VM))
		return "trap";
	switch (in->id) {
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_UD2: case X86_INS_UD0:
	case X86_INS_INT3: case X86_INS_INT: case X86_INS_INTO: case X86_INS_HLT:
	case X86_INS_XBEGIN: case X86_INS_XEND: case X86_INS_XABORT:
		return "trap";
	case X86_INS_PUSH: case X86_INS_POP: case X86_INS_PUSHF: case X86_INS_POPF:
	case X86_INS_PUSHFQ: case X86_INS_POPFQ: case X86_INS_ENTER: case X86_INS_LEAVE:
		return "rsp";
	}
	if (cs_regs_access(pm->cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return "undecodable";
	for (i = 0; i < nwr; i++) {
		if (is_sp(wr[i]))
			return "rsp";
		if (keep_args && is_arg_reg(wr[i]))
			return "arg-write";
	}
	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM &&
		    ((op->access & CS_AC_WRITE) || (i == 0 && !reads_first_operand_only(in->id))) &&
		    in->id != X86_INS_LEA)
			return "mem-write";
		if (op->type == X86_OP_REG && (op->access & CS_AC_WRITE)) {
			if (is_sp(op->reg))
				return "rsp";
			if (keep_args && is_arg_reg(op->reg))
				return "arg-write";
		}
	}
	return NULL;
}

/* Are the CFA rules at a and b the same? No unwind information: nothing says otherwise. */
static bool same_cfa(const struct placement_mod *pm, uint64_t a, uint64_t b)
{
	Dwarf_Frame *fa = NULL, *fb = NULL;
	Dwarf_Op *oa, *ob;
	size_t na, nb, i;
	bool same = false;

	if (!pm->cfi)
		return true;
	if (dwarf_cfi_addrframe(pm->cfi, a, &fa)) {
		fa = NULL;
		/* no FDE at the entry: then none anywhere in the function, by construction */
		same = dwarf_cfi_addrframe(pm->cfi, b, &fb) != 0;
		if (same)
			fb = NULL;
		goto out;
	}
	if (dwarf_cfi_addrframe(pm->cfi, b, &fb)) {
		fb = NULL;
		goto out;
	}
	if (dwarf_frame_cfa(fa, &oa, &na) || dwarf_frame_cfa(fb, &ob, &nb) || na != nb)
		goto out;
	for (i = 0; i < na; i++)
		if (oa[i].atom != ob[i].atom || oa[i].number != ob[i].number ||
		    oa[i].number2 != ob[i].number2)
			goto out;
	same = true;
out:
	free(fa);
	free(fb);
	return same;
}

/* Does a table of int32 offsets (PIC) or of 8-byte addresses at `tab` point into (lo, hi]? */
static bool table_points_into(const struct placement_mod *pm, uint64_t tab, uint64_t fstart,
			      uint64_t fend, uint64_t lo, uint64_t hi, bool absolute)
{
	size_t k;

	for (k = 0; k < MAX_TABLE_ENTRIES; k++) {
		uint64_t t;

		if (absolute) {
			uint64_t v;

			if (!read_at(pm, tab + 8 * k, &v, 8))
				return false;
			t = v;
		} else {
			int32_t v;

			if (!read_at(pm, tab + 4 * k, &v, 4))
				return false;
			t = tab + (int64_t)v;
		}
		if (t < fstart || t >= fend)
			return false;	/* the table ends where entries leave the function */
		if (t > lo && t <= hi)
			return true;
	}
	return false;
}

/*
 * Decodes the whole function and says why something may enter it in
 * (entry, entry + skip], or NULL.
 */
static const char *entered_inside(struct placement_mod *pm, const struct elf_func *f,
				  const uint8_t *code, uint64_t skip)
{
	uint64_t lo = f->addr, hi = f->addr + skip, addr = f->addr, t;
	const uint8_t *p = code;
	size_t left = f->size, k;

	while (left) {
		const cs_x86 *x;
		uint8_t i;

		if (!cs_disasm_iter(pm->cs, &p, &left, &addr, pm->insn))
			return "undecodable";
		x = &pm->insn->detail->x86;
		if (direct_target(pm->cs, pm->insn, &t) && t > lo && t <= hi)
			return "branch-target";
		/*
		 * Jump tables: GCC and Clang load a table's address rip-relative
		 * (PIC: int32 offsets from the table) or index it absolutely
		 * (jmp *table(,%reg,8)).  Every rip-relative address of the
		 * function is read as a table; a random hit only refuses.
		 */
		for (i = 0; i < x->op_count; i++) {
			const cs_x86_op *op = &x->operands[i];
			uint64_t tab;

			if (op->type != X86_OP_MEM)
				continue;
			if (op->mem.base == X86_REG_RIP) {
				tab = addr + (uint64_t)op->mem.disp;	/* addr: the next instruction */
				if (table_points_into(pm, tab, f->addr, f->addr + f->size, lo, hi,
						      false) ||
				    table_points_into(pm, tab, f->addr, f->addr + f->size, lo, hi, true))
					return "jump-table";
			} else if (op->mem.base == X86_REG_INVALID && op->mem.index != X86_REG_INVALID &&
				   op->mem.scale == 8 && op->mem.disp > 0) {
				tab = (uint64_t)op->mem.disp;
				if (table_points_into(pm, tab, f->addr, f->addr + f->size, lo, hi, true))
					return "jump-table";
			}
		}
	}
	/* the .cold fragments jump back into their function */
	for (k = 0; k < pm->ncold; k++)
		if (pm->cold_targets[k] > lo && pm->cold_targets[k] <= hi)
			return "cold-jump";
	return NULL;
}

void placement__decide(struct placement_mod *pm, size_t idx, bool keep_args,
		       struct placement *out)
{
	const struct elf_func *f = &pm->syms->v[idx];
	const uint8_t *p;
	size_t left, n, size = f->size;
	uint64_t addr = f->addr, skip = 0;
	const char *why;
	uint32_t cls;

	out->skip = 0;
	out->insn = f->insn;
	out->why = NULL;
	if (!size || size > MAX_FUNC_BYTES) {
		out->why = size ? "too-large" : "no-size";
		return;
	}
	if (size > pm->cap) {
		pm->buf = xrealloc(pm->buf, size);
		pm->cap = size;
	}
	if (pread(pm->fd, pm->buf, size, (off_t)f->offset) != (ssize_t)size) {
		out->why = "unreadable";
		return;
	}
	cls = classify(pm->buf, size);
	out->insn = cls;
	if (cls == ELFSYM_INSN_REFUSED || placement__emulated(cls))
		return;
	/* walk the prefix up to the first instruction the kernel emulates */
	p = pm->buf;
	left = size;
	for (n = 0;; n++) {
		if (n == MAX_PREFIX_INSNS) {
			out->why = "too-long";
			return;
		}
		if (!cs_disasm_iter(pm->cs, &p, &left, &addr, pm->insn)) {
			out->why = left ? "undecodable" :
					  "end";
			return;
		}
		why = harmful(pm, pm->insn, keep_args);
		if (why) {
			out->why = why;
			return;
		}
		skip = addr - f->addr;
		if (!left) {
			out->why = "end";
			return;
		}
		/* a refused class (lock, segment prefix) is judged like any other next round */
		cls = classify(pm->buf + skip, size - skip);
		if (placement__emulated(cls))
			break;
	}
	/* another symbol inside the prefix: something calls it there */
	for (n = idx + 1; n < pm->syms->n && pm->syms->v[n].addr <= f->addr + skip; n++) {
		if (pm->syms->v[n].addr > f->addr) {
			out->why = "symbol";
			return;
		}
	}
	why = entered_inside(pm, f, pm->buf, skip);
	if (why) {
		out->why = why;
		return;
	}
	/* every instruction boundary in (entry, probe] must keep the entry's CFA rule */
	p = pm->buf;
	left = skip;
	addr = f->addr;
	while (left && cs_disasm_iter(pm->cs, &p, &left, &addr, pm->insn)) {
		if (!same_cfa(pm, f->addr, addr)) {
			out->why = "cfa";
			return;
		}
	}
	out->skip = (uint32_t)skip;
	out->insn = cls;
}

void placement__apply(struct placement_mod *pm, size_t idx, bool keep_args, struct bp_func *f)
{
	const struct elf_func *ef = &pm->syms->v[idx];
	struct placement p;

	placement__decide(pm, idx, keep_args, &p);
	f->flags = (f->flags & ~BP_FUNC_INSN_MASK) | p.insn;
	f->probe_skip = p.skip;
	f->probe_why = p.why;
	if (!p.skip)
		return;
	f->offset += p.skip;
	/* a lone endbr64 skipped keeps its old flag: archives and tests know it */
	if (p.skip == 4 && ef->insn == ELFSYM_INSN_ENDBR64)
		f->flags |= BP_FUNC_SKIP_ENDBR;
	else
		f->flags |= BP_FUNC_PLACED;
}

bool placement__paths(const struct bp_session *s, char *buf, size_t len)
{
	size_t i, n = 0, emu = 0, entry = 0, jumps = 0, endbr = 0, nop5 = 0, step = 0;

	for (i = 0; i < s->nfuncs; i++) {
		const struct bp_func *f = &s->funcs[i];
		uint32_t insn = f->flags & BP_FUNC_INSN_MASK;
		const char *path;

		if (f->flags & (BP_FUNC_SAMPLED | BP_FUNC_KERNEL | BP_FUNC_UNKNOWN | BP_FUNC_MARKER |
				BP_FUNC_SPAN | BP_FUNC_PYTHON) ||
		    insn == ELFSYM_INSN_REFUSED)
			continue;
		n++;
		path = select__probe_path(f);
		if (!strcmp(path, "emulated")) {
			emu++;
			if (!f->probe_skip) {
				entry++;
				jumps += insn == ELFSYM_INSN_JUMP;
			}
			endbr += !!(f->flags & BP_FUNC_SKIP_ENDBR);
		} else if (!strcmp(path, "nop5")) {
			nop5++;
		} else {
			step++;
		}
	}
	if (len)
		buf[0] = '\0';
	if (!n)
		return false;
	/* the split says what placement added: before it, only push/nop at the entry or after endbr64 */
	snprintf(buf, len, "probe paths: emulated %zu (%.0f%%: %zu at the entry, %zu of them on a "
		 "jump; %zu past endbr64; %zu past a longer prefix), nop5 %zu, single-step %zu "
		 "(%.0f%%)", emu, 100.0 * emu / n, entry, jumps, endbr, emu - entry - endbr, nop5,
		 step, 100.0 * step / n);
	return true;
}
