// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * prefixes [N]: functions whose entry probe bpfprof may move past a harmless
 * prefix onto an instruction the kernel emulates (user/symbols/placement.c),
 * and functions where it must not.  Assembly, so the prefix is exactly the
 * one named, with CFI directives so .eh_frame describes them.
 *
 *   p_riprel(x)     mov base(%rip),%rax; push...   -> x + 7     placed +7 on push
 *   p_xor(x)        xor %eax,%eax; push...         -> 2x        placed +2 on push
 *   p_xor_arg(a,b)  xor %esi,%esi; push...         -> a         placed +2; with --args
 *                                                                 refused (b is overwritten)
 *   p_test(x)       test %rdi,%rdi; je ...         -> x, or -1 when x == 0
 *                                                                 placed +3 on the je
 *   p_sub(x)        sub $8,%rsp                    -> x + 1     stays (rsp changes)
 *   p_loop(n)       xor %eax,%eax; L: nop; ...; jl L -> n (n >= 1)
 *                                                                 refused: a loop back to
 *                                                                 the instruction after
 *                                                                 the prefix
 *   p_jtab(k)       xor %eax,%eax; L: push; ... jmp *table(k)  -> 100 (k 0), 101 (k 1, 2)
 *                                                                 refused: entry 2 of the
 *                                                                 jump table points at L
 *   p_sym(x)        xor %eax,%eax; p_sym_inner: push... -> x + 3 refused: a symbol
 *   p_sym_inner(x)  (inside p_sym)                 -> x + 3     probed at its own entry;
 *                                                                 p_sym falls through it
 *   p_cfa(x)        mov %rsp,%rbp (CFA now rbp-based); push... -> x   refused: CFA rule
 *   p_nest(x)       C: calls p_riprel(x) then p_test(x), returns their sum
 *
 * Guarantee, one thread: for i = 0..N-1 (default 1000), main calls, in
 * this order, p_riprel(i), p_xor(i), p_xor_arg(i, 5), p_test(i % 2 ? i : 0),
 * p_sub(i), p_loop(3), p_jtab(i % 3), p_sym(i), p_sym_inner(i), p_cfa(i),
 * p_nest(i); so every function is called N times from main, except
 * p_riprel and p_test (2N: N from main, N from p_nest) and p_sym_inner
 * (entered 2N times: N calls from main, N falls from p_sym, which returns
 * through it).  Prints "prefixes: N rounds sum=S" with S the sum of every
 * return value, and exits 0.  x86-64 only.
 */
#include <stdio.h>
#include <stdlib.h>
#include "progs.h"

volatile unsigned long sink;

long p_riprel(long x);
long p_xor(long x);
long p_xor_arg(long a, long b);
long p_test(long x);
long p_sub(long x);
long p_loop(long n);
long p_jtab(long k);
long p_sym(long x);
long p_sym_inner(long x);
long p_cfa(long x);

asm(".pushsection .rodata\n"
    ".p2align 3\n"
    "pfx_base: .quad 7\n"
    ".popsection\n"
    ".text\n"

    ".globl p_riprel\n.type p_riprel,@function\n.p2align 4\n"
    "p_riprel:\n.cfi_startproc\n"
    "	mov pfx_base(%rip), %rax\n"
    "	push %rbx\n.cfi_adjust_cfa_offset 8\n"
    "	add %rdi, %rax\n"
    "	pop %rbx\n.cfi_adjust_cfa_offset -8\n"
    "	ret\n.cfi_endproc\n.size p_riprel, .-p_riprel\n"

    ".globl p_xor\n.type p_xor,@function\n.p2align 4\n"
    "p_xor:\n.cfi_startproc\n"
    "	xor %eax, %eax\n"
    "	push %rbx\n.cfi_adjust_cfa_offset 8\n"
    "	lea (%rax,%rdi,2), %rax\n"
    "	pop %rbx\n.cfi_adjust_cfa_offset -8\n"
    "	ret\n.cfi_endproc\n.size p_xor, .-p_xor\n"

    ".globl p_xor_arg\n.type p_xor_arg,@function\n.p2align 4\n"
    "p_xor_arg:\n.cfi_startproc\n"
    "	xor %esi, %esi\n"
    "	push %rbx\n.cfi_adjust_cfa_offset 8\n"
    "	lea (%rdi,%rsi), %rax\n"
    "	pop %rbx\n.cfi_adjust_cfa_offset -8\n"
    "	ret\n.cfi_endproc\n.size p_xor_arg, .-p_xor_arg\n"

    ".globl p_test\n.type p_test,@function\n.p2align 4\n"
    "p_test:\n.cfi_startproc\n"
    "	test %rdi, %rdi\n"
    "	je 1f\n"
    "	mov %rdi, %rax\n"
    "	ret\n"
    "1:	mov $-1, %rax\n"
    "	ret\n.cfi_endproc\n.size p_test, .-p_test\n"

    ".globl p_sub\n.type p_sub,@function\n.p2align 4\n"
    "p_sub:\n.cfi_startproc\n"
    "	sub $8, %rsp\n.cfi_adjust_cfa_offset 8\n"
    "	lea 1(%rdi), %rax\n"
    "	add $8, %rsp\n.cfi_adjust_cfa_offset -8\n"
    "	ret\n.cfi_endproc\n.size p_sub, .-p_sub\n"

    /* the loop's head is the first emulated instruction: moving there counts n calls */
    ".globl p_loop\n.type p_loop,@function\n.p2align 4\n"
    "p_loop:\n.cfi_startproc\n"
    "	xor %eax, %eax\n"
    "2:	nop\n"
    "	add $1, %rax\n"
    "	cmp %rdi, %rax\n"
    "	jl 2b\n"
    "	ret\n.cfi_endproc\n.size p_loop, .-p_loop\n"

    /* k 2 goes round once more through the table's last entry, which is 3: */
    ".globl p_jtab\n.type p_jtab,@function\n.p2align 4\n"
    "p_jtab:\n.cfi_startproc\n"
    "	xor %eax, %eax\n"
    "3:	push %rbx\n.cfi_adjust_cfa_offset 8\n"
    "	pop %rbx\n.cfi_adjust_cfa_offset -8\n"
    "	cmp $2, %rdi\n"
    "	ja 6f\n"
    "	lea pfx_tab(%rip), %rdx\n"
    "	movslq (%rdx,%rdi,4), %rcx\n"
    "	add %rdx, %rcx\n"
    "	sub $1, %rdi\n"
    "	jmp *%rcx\n"
    "4:	add $100, %rax\n"
    "	ret\n"
    "5:	add $101, %rax\n"
    "	ret\n"
    "6:	ret\n.cfi_endproc\n.size p_jtab, .-p_jtab\n"
    ".pushsection .rodata\n.p2align 2\n"
    "pfx_tab: .long 4b - pfx_tab, 5b - pfx_tab, 3b - pfx_tab\n"
    ".popsection\n"

    ".globl p_sym\n.type p_sym,@function\n.p2align 4\n"
    "p_sym:\n.cfi_startproc\n"
    "	xor %eax, %eax\n"
    ".globl p_sym_inner\n.type p_sym_inner,@function\n"
    "p_sym_inner:\n"
    "	push %rbx\n.cfi_adjust_cfa_offset 8\n"
    "	lea 3(%rdi), %rax\n"
    "	pop %rbx\n.cfi_adjust_cfa_offset -8\n"
    "	ret\n.cfi_endproc\n.size p_sym, .-p_sym\n.size p_sym_inner, .-p_sym_inner\n"

    /* the prefix reads rsp only, but the unwind rules say the frame changed */
    ".globl p_cfa\n.type p_cfa,@function\n.p2align 4\n"
    "p_cfa:\n.cfi_startproc\n"
    "	mov %rsp, %rax\n.cfi_def_cfa_register %rax\n"
    "	push %rbx\n"
    "	pop %rbx\n.cfi_def_cfa_register %rsp\n"
    "	mov %rdi, %rax\n"
    "	ret\n.cfi_endproc\n.size p_cfa, .-p_cfa\n");

TRACED long p_nest(long x)
{
	sink++;
	return p_riprel(x) + p_test(x);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i, sum = 0;

	for (i = 0; i < n; i++) {
		sum += p_riprel(i);
		sum += p_xor(i);
		sum += p_xor_arg(i, 5);
		sum += p_test(i % 2 ? i : 0);
		sum += p_sub(i);
		sum += p_loop(3);
		sum += p_jtab(i % 3);
		sum += p_sym(i);
		sum += p_sym_inner(i);
		sum += p_cfa(i);
		sum += p_nest(i);
	}
	printf("prefixes: %ld rounds sum=%ld\n", n, sum);
	return 0;
}
