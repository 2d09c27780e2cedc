// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Writes a real seed for fuzz_unwind: this program's registers and stack,
 * taken four calls deep (functions without frame pointers: CFI only), and
 * its own executable, in the parts fuzz_unwind.c reads:
 *   1. load address (u64), flags (u32), the registers in DWARF order (17 u64)
 *   2. the stack from rsp upward (what bpf/sample.bpf.c copies)
 *   3. the ELF file
 * each a u32 little-endian length then the bytes (fuzz__split).
 *
 *   mkseed_unwind OUT      (built and run by tests/fuzz/seeds.sh)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define UREGS	17
#define COPY	4096

static uint64_t regs[UREGS];
static unsigned char stack[COPY];
static size_t stack_len;

/* getcontext() saves the callee-saved registers, rsp and the pc it returns to */
static void __attribute__((noinline)) take(void)
{
	static ucontext_t uc;
	const volatile unsigned char *sp;
	size_t i;

	if (getcontext(&uc))
		exit(1);
	regs[3] = uc.uc_mcontext.gregs[REG_RBX];
	regs[6] = uc.uc_mcontext.gregs[REG_RBP];
	regs[7] = uc.uc_mcontext.gregs[REG_RSP];
	regs[12] = uc.uc_mcontext.gregs[REG_R12];
	regs[13] = uc.uc_mcontext.gregs[REG_R13];
	regs[14] = uc.uc_mcontext.gregs[REG_R14];
	regs[15] = uc.uc_mcontext.gregs[REG_R15];
	regs[16] = uc.uc_mcontext.gregs[REG_RIP];
	/* byte by byte from the saved rsp: what lies above it is the callers' frames */
	sp = (const volatile unsigned char *)regs[7];
	for (i = 0; i < COPY; i++)
		stack[i] = sp[i];
	stack_len = COPY;
}

static int __attribute__((noinline)) level(int n)
{
	volatile int keep = n;

	if (n == 0)
		take();
	else
		keep += level(n - 1);
	return keep;
}

static void part(FILE *f, const void *p, uint32_t len)
{
	unsigned char l[4] = { len, len >> 8, len >> 16, len >> 24 };

	if (fwrite(l, 4, 1, f) != 1 || (len && fwrite(p, len, 1, f) != 1))
		exit(1);
}

int main(int argc, char **argv)
{
	unsigned long long start = 0, off;
	unsigned char head[8 + 4 + sizeof(regs)] = { 0 };
	static char exe[1 << 20];
	char line[4200], self[4096];
	size_t n;
	FILE *f;
	ssize_t sl;

	if (argc != 2 || level(4) < 0)
		return 2;
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		return 1;
	self[sl] = 0;
	/* the load address: the mapping of our file at offset 0 */
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, self) && sscanf(line, "%llx-%*llx %*s %llx", &start, &off) == 2 &&
		    !off)
			break;
	if (f)
		fclose(f);
	f = fopen("/proc/self/exe", "rb");
	n = f ? fread(exe, 1, sizeof(exe), f) : 0;
	if (f)
		fclose(f);
	memcpy(head, &start, 8);
	memcpy(head + 12, regs, sizeof(regs));
	f = fopen(argv[1], "wb");
	if (!f || !start || !n)
		return 1;
	part(f, head, sizeof(head));
	part(f, stack, stack_len);
	part(f, exe, n);
	return fclose(f) ? 1 : 0;
}
