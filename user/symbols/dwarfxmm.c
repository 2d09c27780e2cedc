// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Where a float/double can be read although it travels in an xmm register.
 *
 * A uprobe's BPF program sees pt_regs, the integer registers saved at the
 * trap: the xmm registers are not there, and the task's saved FPU state is
 * not current while the probe runs (the registers stay live in the CPU;
 * they are saved only on a context switch or a kernel_fpu_begin(), which a
 * uprobe program cannot cause).  So a value in xmm0..7 is read at another
 * instruction, where it is also in memory or in an integer register:
 *
 *  - a parameter: at the function's first breakpoint after its prologue
 *    (dwarf_entry_breakpoints: the line table's prologue end, as debuggers
 *    use), if the parameter's DWARF location there is memory addressed by
 *    an integer register (DW_OP_fbreg with a frame base of the CFA or a
 *    register, DW_OP_bregN) or an integer register (DW_OP_regN).  An -O0
 *    build spills every parameter to its frame in the prologue.
 *  - the return value: at an instruction that moves it into xmm0 from an
 *    integer register or from memory addressed by rbp/rsp, followed only by
 *    `pop %rbp` or `leave` and `ret` (-O0 builds return a double so: movq
 *    %xmm0,%rax; movq %rax,%xmm0; pop %rbp; ret).  Nothing between that
 *    instruction and the `ret` changes xmm0.  Where every way out is such a
 *    move from rax, the return probe's rax is the value: no probe needed.
 *
 * Anything else (an optimized function that keeps the value in xmm
 * registers throughout) stays "unavailable (xmm register)".
 */
#include <dwarf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include <capstone/capstone.h>
#include "dwarfxmm.h"
#include "model/argsig.h"
#include "base/log.h"
#include "base/util.h"

/* DWARF register numbers of capstone's 64-bit and 32-bit integer registers; -1: other. */
static int dwarf_regno(unsigned r)
{
	static const unsigned r64[16] = { X86_REG_RAX, X86_REG_RDX, X86_REG_RCX, X86_REG_RBX,
					  X86_REG_RSI, X86_REG_RDI, X86_REG_RBP, X86_REG_RSP,
					  X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
					  X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15 };
	static const unsigned r32[16] = { X86_REG_EAX, X86_REG_EDX, X86_REG_ECX, X86_REG_EBX,
					  X86_REG_ESI, X86_REG_EDI, X86_REG_EBP, X86_REG_ESP,
					  X86_REG_R8D, X86_REG_R9D, X86_REG_R10D, X86_REG_R11D,
					  X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D };

	for (int i = 0; i < 16; i++)
		if (r == r64[i] || r == r32[i])
			return i;
	return -1;
}

/* Register + offset of a one-op location at pc (base: the frame base, for fbreg). */
static bool op_place(const Dwarf_Op *op, size_t n, struct argxprobe *p)
{
	if (n != 1)
		return false;
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg15) {
		p->reg = op->atom - DW_OP_breg0;
		p->off = (int16_t)(int64_t)op->number;
		p->deref = 1;
		return (int64_t)op->number >= -32768 && (int64_t)op->number <= 32767;
	}
	if (op->atom == DW_OP_bregx && op->number < 16) {	/* libdw's CFA rule */
		p->reg = op->number;
		p->off = (int16_t)(int64_t)op->number2;
		p->deref = 1;
		return (int64_t)op->number2 >= -32768 && (int64_t)op->number2 <= 32767;
	}
	if (op->atom == DW_OP_regx && op->number < 16) {
		p->reg = op->number;
		p->off = 0;
		p->deref = 0;
		return true;
	}
	if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg15) {
		p->reg = op->atom - DW_OP_reg0;
		p->off = 0;
		p->deref = 0;
		return true;
	}
	return false;
}

/* The frame base of fn at pc as register + offset (deref 0: the address itself). */
static bool frame_base(Dwarf_Die *fn, Dwarf_CFI *cfi, Dwarf_Addr pc, struct argxprobe *fb)
{
	Dwarf_Attribute a;
	Dwarf_Op *op;
	size_t n;

	if (!dwarf_attr(fn, DW_AT_frame_base, &a) || dwarf_getlocation_addr(&a, pc, &op, &n, 1) != 1)
		return false;
	if (n == 1 && op->atom == DW_OP_call_frame_cfa) {
		Dwarf_Frame *fr = NULL;
		Dwarf_Op *cop;
		size_t cn;
		bool ok;

		if (!cfi || dwarf_cfi_addrframe(cfi, pc, &fr) || !fr)
			return false;
		/* libdw says a register + offset rule as DW_OP_bregN offset */
		ok = dwarf_frame_cfa(fr, &cop, &cn) == 0 && op_place(cop, cn, fb) && fb->deref;
		free(fr);
		fb->deref = 0;
		return ok;
	}
	if (!op_place(op, n, fb))
		return false;
	if (!fb->deref) {		/* DW_OP_regN: the register's value is the base */
		return true;
	}
	return false;			/* DW_OP_bregN as a frame base would be a loaded value */
}

/* Where the parameter `par` (in xmm slot) can be read after the prologue. */
static bool param_place(Dwarf_Die *fn, Dwarf_Die *par, Dwarf_CFI *cfi, Dwarf_Addr low,
			Dwarf_Addr bp, int slot, struct argxprobe *p)
{
	Dwarf_Attribute a;
	Dwarf_Op *op;
	size_t n;

	if (!dwarf_attr(par, DW_AT_location, &a) || dwarf_getlocation_addr(&a, bp, &op, &n, 1) != 1)
		return false;
	p->slot = slot;
	p->delta = bp - low;
	p->pad = 0;
	if (n == 1 && op->atom == DW_OP_fbreg) {
		struct argxprobe fb;
		int64_t off;

		if (!frame_base(fn, cfi, bp, &fb))
			return false;
		off = (int64_t)fb.off + (int64_t)op->number;
		if (off < -32768 || off > 32767)
			return false;
		p->reg = fb.reg;
		p->off = off;
		p->deref = 1;
		return true;
	}
	return op_place(op, n, p);
}

/* The bytes of [low, high) from the file's sections, or NULL (a debug file: no code). */
static const uint8_t *code_of(Elf *elf, Dwarf_Addr low, Dwarf_Addr high)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || low < sh.sh_addr ||
		    high > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (low - sh.sh_addr);
	}
	return NULL;
}

/* i moves a float/double into xmm0 from an integer register or rbp/rsp-based memory. */
static bool into_xmm0(const cs_insn *i, struct argxprobe *p)
{
	const cs_x86 *x = &i->detail->x86;
	const cs_x86_op *src = &x->operands[1];

	if ((i->id != X86_INS_MOVQ && i->id != X86_INS_MOVD && i->id != X86_INS_MOVSD &&
	     i->id != X86_INS_MOVSS) || x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[0].reg != X86_REG_XMM0 || i->bytes[0] == 0xc4 || i->bytes[0] == 0xc5 ||
	    i->bytes[0] == 0x62)
		return false;
	if (src->type == X86_OP_REG && dwarf_regno(src->reg) >= 0) {
		p->reg = dwarf_regno(src->reg);
		p->off = 0;
		p->deref = 0;
		return true;
	}
	if (src->type == X86_OP_MEM && (src->mem.base == X86_REG_RBP || src->mem.base == X86_REG_RSP) &&
	    src->mem.index == X86_REG_INVALID && src->mem.segment == X86_REG_INVALID &&
	    src->mem.disp >= -32768 && src->mem.disp <= 32767) {
		p->reg = dwarf_regno(src->mem.base);
		p->off = src->mem.disp;
		p->deref = 1;
		return true;
	}
	return false;
}

#define MAX_INSNS 4096

/* i leaves the function other than by `ret`: a jump outside [low, high) or through a pointer. */
static bool jumps_out(const cs_insn *i, Dwarf_Addr low, Dwarf_Addr high)
{
	const cs_x86 *x = &i->detail->x86;

	if (i->id != X86_INS_JMP)
		return false;
	return x->op_count != 1 || x->operands[0].type != X86_OP_IMM ||
	       (uint64_t)x->operands[0].imm < low || (uint64_t)x->operands[0].imm >= high;
}

/*
 * The places that give the return value in xmm0: one before each `ret` that
 * has one.  When every way out of the function is such a `ret` after a move
 * from rax (movq %rax,%xmm0: -O0's way), rax at the return probe is the
 * value: one place of deref 2 ("rax at return") and no probe at all.
 */
static int ret_places(Elf *elf, Dwarf_Addr low, Dwarf_Addr high, struct argxprobe *out, int max)
{
	const uint8_t *code = code_of(elf, low, high);
	cs_insn *ins = NULL;
	csh cs;
	size_t n;
	int got = 0, nret = 0, nrax = 0;
	bool out_jump = false;

	if (!code || high - low > 65536 || cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return 0;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(cs, code, high - low, low, 0, &ins);
	/* a sweep that stops short of the end did not decode the function: no places */
	if (n && n < MAX_INSNS && ins[n - 1].address + ins[n - 1].size == high) {
		for (size_t r = 1; r < n && got < max; r++) {
			size_t j = r - 1;

			out_jump |= jumps_out(&ins[r], low, high);
			if (ins[r].id != X86_INS_RET)
				continue;
			nret++;
			while (j > 0 && (ins[j].id == X86_INS_LEAVE ||
					 (ins[j].id == X86_INS_POP && ins[j].detail->x86.op_count == 1 &&
					  ins[j].detail->x86.operands[0].type == X86_OP_REG &&
					  ins[j].detail->x86.operands[0].reg == X86_REG_RBP)))
				j--;
			if (!into_xmm0(&ins[j], &out[got]))
				continue;
			nrax += !out[got].deref && out[got].reg == 0;
			out[got].slot = BP_ARGX_XRET;
			out[got].delta = ins[j].address - low;
			out[got].pad = 0;
			got++;
		}
		if (nret && nrax == nret && !out_jump && !jumps_out(&ins[0], low, high)) {
			out[0] = (struct argxprobe){ .slot = BP_ARGX_XRET, .deref = 2 };
			got = 1;
		}
	}
	if (n)
		cs_free(ins, n);
	cs_close(&cs);
	return got;
}

/*
 * Line idx of the signature (0: the return value, 1..: the parameters):
 * false when there is none.  *xslot: N when its location is one xmm
 * register "xN", else -1.
 */
static bool sig_line(const char *sig, int idx, char *kind, int *xslot)
{
	const char *p = strchr(sig, '\n');
	char loc[16];
	int size, end = 0;

	for (int i = 0; p && i < idx; i++)
		p = strchr(p + 1, '\n');
	if (!p || p[1] == '@' || p[1] == '.' || !p[1])
		return false;
	*kind = p[1];
	*xslot = -1;
	if (sscanf(p + 2, "\t%d\t%15[^\t\n]", &size, loc) == 2 &&
	    sscanf(loc, "x%d%n", xslot, &end) == 1 && loc[end])
		*xslot = -1;	/* several eightbytes: a struct */
	return true;
}

void dwarfxmm__places(Dwarf_Die *fn, Elf *elf, char **sig)
{
	struct argxprobe pl[AS_MAX_XPROBES];
	Dwarf_Addr low, high, *bps = NULL;
	Dwarf_CFI *cfi = NULL;
	Dwarf_Die c;
	int n = 0, nbp, idx = 0, slot;
	char kind;
	bool want_params = false;

	if (!*sig || !elf || dwarf_lowpc(fn, &low) || dwarf_highpc(fn, &high) || high <= low)
		return;
	for (int i = 1; sig_line(*sig, i, &kind, &slot); i++)
		if (kind == AS_FLOAT && slot >= 0)
			want_params = true;
	nbp = want_params ? dwarf_entry_breakpoints(fn, &bps) : 0;
	if (nbp == 1 && bps[0] > low && bps[0] < high && dwarf_child(fn, &c) == 0) {
		cfi = dwarf_getcfi_elf(elf);
		do {
			if (dwarf_tag(&c) != DW_TAG_formal_parameter)
				continue;
			idx++;
			if (!sig_line(*sig, idx, &kind, &slot) || kind != AS_FLOAT ||
			    slot < 0 || slot > 7 || n >= AS_MAX_XPROBES)
				continue;
			if (param_place(fn, &c, cfi, low, bps[0], slot, &pl[n]))
				n++;
		} while (dwarf_siblingof(&c, &c) == 0);
		if (cfi)
			dwarf_cfi_end(cfi);
	}
	free(bps);
	if (sig_line(*sig, 0, &kind, &slot) && kind == AS_FLOAT && slot == 0)
		n += ret_places(elf, low, high, pl + n, AS_MAX_XPROBES - n);
	for (int i = 0; i < n; i++) {
		char line[64];
		size_t len = strlen(*sig);

		argsig__xprobe_line(&pl[i], line, sizeof(line));
		*sig = xrealloc(*sig, len + strlen(line) + 1);
		memcpy(*sig + len, line, strlen(line) + 1);
	}
}
