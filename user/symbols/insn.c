// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * First instructions: what the kernel does with a probe on them (emulates,
 * single-steps, refuses), and Go's stack-check prologue.  Declared in
 * elfsym.h, used by elfsym.c, placement.c and list.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "elfsym.h"

const char *elfsym__insn_name(uint32_t insn)
{
	switch (insn) {
	case ELFSYM_INSN_PUSH:
		return "push";
	case ELFSYM_INSN_NOP:
		return "nop";
	case ELFSYM_INSN_NOP5:
		return "nop5";
	case ELFSYM_INSN_ENDBR64:
		return "endbr64";
	case ELFSYM_INSN_MOV_RBP:
		return "mov";
	case ELFSYM_INSN_REFUSED:
		return "refused";
	case ELFSYM_INSN_JUMP:
		return "jump";
	default:
		return "other";
	}
}

uint32_t elfsym__classify_insn(const uint8_t *c, size_t len)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	size_t i = 0;

	if (len >= sizeof(endbr64) && !memcmp(c, endbr64, sizeof(endbr64)))
		return ELFSYM_INSN_ENDBR64;
	/*
	 * The kernel's uprobe decoder refuses a lock prefix and the es/cs/ss/ds
	 * segment overrides (arch/x86/kernel/uprobes.c, is_prefix_bad()): such a
	 * probe would be silently skipped when the file is mapped later.
	 */
	for (i = 0; i < len && i < 4; i++) {
		if (c[i] == 0xf0 || c[i] == 0x26 || c[i] == 0x2e || c[i] == 0x36 || c[i] == 0x3e)
			return ELFSYM_INSN_REFUSED;
		if (c[i] != 0x66 && c[i] != 0x67 && c[i] != 0xf2 && c[i] != 0xf3 &&
		    (c[i] & 0xf0) != 0x40)
			break;	/* past the prefixes (and REX) */
	}
	/*
	 * VEX (c4, c5) and EVEX (62) encoded instructions (AVX, AVX-512: glibc's
	 * string functions start so): the kernel checks the opcode byte after
	 * the prefix against its one-byte opcode table.  Measured on 6.18: a
	 * probe on `vmovd %esi,%xmm1` never fired (0x6e reads as "outs",
	 * refused when the file is mapped), and one on `vpbroadcastb
	 * %esi,%zmm16` fired but the instruction was emulated as the `js` its
	 * opcode byte 0x78 would be: wrong results in 996 of 1000 calls, a
	 * python3.11 calling memset spun forever.  Never probed.
	 */
	if (i < len && (c[i] == 0xc4 || c[i] == 0xc5 || c[i] == 0x62))
		return ELFSYM_INSN_REFUSED;
	i = 0;
	if (len >= sizeof(nop5) && !memcmp(c, nop5, sizeof(nop5)))
		return ELFSYM_INSN_NOP5;
	/* mov %rsp,%rbp has two encodings; assemblers emit 48 89 e5 */
	if (len >= 3 && c[0] == 0x48 &&
	    ((c[1] == 0x89 && c[2] == 0xe5) || (c[1] == 0x8b && c[2] == 0xec)))
		return ELFSYM_INSN_MOV_RBP;
	/* the kernel emulates push %reg, and push %r8-%r15 with a bare REX.B only */
	if (len >= 1 && c[0] >= 0x50 && c[0] <= 0x57)
		return ELFSYM_INSN_PUSH;
	if (len >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57)
		return ELFSYM_INSN_PUSH;
	/* long nops come behind operand-size prefixes: 66 0f 1f 44 00 00, 66 90 */
	while (i < len && c[i] == 0x66)
		i++;
	if (i < len && c[i] == 0x90)
		return ELFSYM_INSN_NOP;
	if (i + 1 < len && c[i] == 0x0f && c[i + 1] == 0x1f)
		return ELFSYM_INSN_NOP;
	return ELFSYM_INSN_OTHER;
}

/* Fills one output entry from the winning alias; `fd` is the open ELF file. */
uint32_t elfsym__go_prologue(const uint8_t *code, size_t len)
{
	static const uint8_t cmp_rsp[] = { 0x49, 0x3b, 0x66, 0x10 };	/* cmp 0x10(%r14),%rsp */
	static const uint8_t cmp_r12[] = { 0x4d, 0x3b, 0x66, 0x10 };	/* cmp 0x10(%r14),%r12 */
	const uint8_t *cmp = cmp_rsp;
	size_t i = 0;

	/* lea -N(%rsp),%r12: disp8 (4c 8d 64 24 NN) or disp32 (4c 8d a4 24 NN NN NN NN) */
	if (len >= 5 && code[0] == 0x4c && code[1] == 0x8d && code[3] == 0x24 &&
	    (code[2] == 0x64 || code[2] == 0xa4)) {
		i = code[2] == 0x64 ? 5 : 8;
		cmp = cmp_r12;
	}
	if (len < i + sizeof(cmp_rsp) || memcmp(code + i, cmp, sizeof(cmp_rsp)))
		return 0;
	i += sizeof(cmp_rsp);
	if (len >= i + 2 && code[i] == 0x76)				/* jbe rel8 */
		return i + 2;
	if (len >= i + 6 && code[i] == 0x0f && code[i + 1] == 0x86)	/* jbe rel32 */
		return i + 6;
	return 0;
}
