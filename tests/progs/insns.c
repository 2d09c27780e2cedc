// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * insns FUNC [N]: calls FUNC N times (default 100000) through a function
 * pointer and prints "FUNC N calls ns_per_call=X".  Each f_* function is
 * naked assembly so its first instruction is exactly the one named, which is
 * what decides a uprobe's cost:
 *   f_push        push %rbp                 (kernel emulates)
 *   f_nop         nop                       (emulates)
 *   f_nop5        5-byte nop 0f 1f 44 00 00 (kernel may optimise into a call)
 *   f_endbr_push  endbr64; push %rbp        (endbr64 single-stepped; push emulated)
 *   f_endbr_ret   endbr64; ret              (nothing cheaper to probe after endbr64)
 *   f_riprel      addl $1, counter(%rip)    (single-stepped, rip-relative)
 *   f_sub         sub $8, %rsp              (single-stepped)
 *   f_lock        lock addl $1, counter(%rip) (the kernel refuses to probe it)
 *   f_mov_push    mov counter(%rip),%eax; push %rbp  (bpfprof probes the push, +6)
 *   f_xor_push    xor %eax,%eax; push %rbp  (bpfprof probes the push, +2)
 *   f_test_je     test %rdi,%rdi; je; ret   (bpfprof probes the je, +3: emulated)
 * Guarantee: exactly N calls of FUNC, each returning normally; main calls
 * nothing else traced.  x86-64 only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int counter;

#define NAKED __attribute__((naked, noinline, used))
NAKED void f_push(void) { asm("push %rbp\n\tpop %rbp\n\tret"); }
NAKED void f_nop(void) { asm("nop\n\tret"); }
NAKED void f_nop5(void) { asm(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\tret"); }
NAKED void f_endbr_push(void) { asm("endbr64\n\tpush %rbp\n\tpop %rbp\n\tret"); }
NAKED void f_endbr_ret(void) { asm("endbr64\n\tret"); }
NAKED void f_riprel(void) { asm("addl $1, counter(%rip)\n\tret"); }
NAKED void f_sub(void) { asm("sub $8, %rsp\n\tadd $8, %rsp\n\tret"); }
NAKED void f_lock(void) { asm("lock addl $1, counter(%rip)\n\tret"); }
NAKED void f_mov_push(void) { asm("mov counter(%rip), %eax\n\tpush %rbp\n\tpop %rbp\n\tret"); }
NAKED void f_xor_push(void) { asm("xor %eax, %eax\n\tpush %rbp\n\tpop %rbp\n\tret"); }
NAKED void f_test_je(void) { asm("test %rdi, %rdi\n\tje 1f\n\tret\n1:\tret"); }

static const struct {
	const char *name;
	void (*fn)(void);
} funcs[] = {
	{ "f_push", f_push }, { "f_nop", f_nop }, { "f_nop5", f_nop5 },
	{ "f_endbr_push", f_endbr_push }, { "f_endbr_ret", f_endbr_ret },
	{ "f_riprel", f_riprel }, { "f_sub", f_sub }, { "f_lock", f_lock },
	{ "f_mov_push", f_mov_push }, { "f_xor_push", f_xor_push }, { "f_test_je", f_test_je },
};

int main(int argc, char **argv)
{
	void (*volatile fn)(void) = NULL;
	struct timespec a, b;
	long n = argc > 2 ? atol(argv[2]) : 100000, i;
	size_t k;

	for (k = 0; argc > 1 && k < sizeof(funcs) / sizeof(funcs[0]); k++)
		if (!strcmp(argv[1], funcs[k].name))
			fn = funcs[k].fn;
	if (!fn) {
		fprintf(stderr, "usage: insns f_push|f_nop|f_nop5|f_endbr_push|f_endbr_ret|f_riprel|f_sub|"
				"f_lock|f_mov_push|f_xor_push|f_test_je [N]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		fn();
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%s %ld calls ns_per_call=%.1f\n", argv[1], n,
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)(n ? n : 1));
	return 0;
}
