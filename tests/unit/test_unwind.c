// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * unwinder unit tests, without BPF: the test copies its own registers and
 * stack the way bpf/sample.bpf.c does (struct bp_ustack followed by the
 * bytes), from inside a qsort() comparison callback, so the stack runs
 * through Debian's libc (no frame pointers: CFI only), and unwinds the copy
 * with its own /proc/self/maps.  The thread runs on a stack of ours, so the
 * copy never reads past its end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "bpf/events.h"
#include "symbols/unwind.h"

#define STACK_BYTES	(1 << 20)
#define COPY_BYTES	16384

static struct {
	struct bp_ustack us;
	uint8_t stack[COPY_BYTES];
} cap;
static char *stack_top;
/*
 * The live stack, bytes as they are, as the BPF side copies it: ASan's
 * redzones and dead frames below the current one included.  Not memcpy
 * (ASan intercepts it and would call the read of dead frames an underflow).
 */
__attribute__((no_sanitize_address, noinline))
static void raw_copy(void *dst, const void *src, uint64_t len)
{
	volatile unsigned char *d = dst;
	const volatile unsigned char *s = src;

	while (len--)
		*d++ = *s++;
}

static int captured;

/*
 * Registers as the BPF side takes them (DWARF order: rax rdx rcx rbx rsi rdi
 * rbp rsp r8-r15 rip), then the stack from rsp up.  Everything after the asm
 * only writes below rsp or to spilled locals, never to a saved register or
 * return address slot the unwinder reads.
 */
void __attribute__((noinline, used)) unw_capture(void)
{
	__u64 *r = cap.us.regs;
	uint64_t sp, len;

	asm volatile("lea 0(%%rip), %%rax\n\t"
		     "mov %%rax, 128(%0)\n\t"
		     "mov %%rsp, 56(%0)\n\t"
		     "mov %%rbp, 48(%0)\n\t"
		     "mov %%rbx, 24(%0)\n\t"
		     "mov %%r12, 96(%0)\n\t"
		     "mov %%r13, 104(%0)\n\t"
		     "mov %%r14, 112(%0)\n\t"
		     "mov %%r15, 120(%0)\n\t"
		     : : "D"(r) : "rax", "memory");
	sp = r[BP_UREG_SP];
	len = (uint64_t)stack_top - sp;
	if (len > COPY_BYTES)
		len = COPY_BYTES;
	raw_copy(cap.stack, (const void *)sp, len);
	cap.us.len = len;
	cap.us.flags = len == COPY_BYTES ? BP_USTACK_CUT : 0;
}

int __attribute__((noinline, used)) unw_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!captured++)
		unw_capture();
	return x < y ? -1 : x > y;
}

void __attribute__((noinline, used)) unw_sort(void)
{
	int v[64];

	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), unw_cmp);
	asm volatile("" : : "r"(v) : "memory");
}

void *__attribute__((noinline, used)) unw_thread(void *arg)
{
	unw_sort();
	asm volatile("" ::: "memory");	/* not a tail call */
	return arg;
}

static char *read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *buf = calloc(1, 1 << 20);
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Which of our functions holds pc: the nearest start below it, within 1 KiB. */
static const char *which(uint64_t pc)
{
	static const struct { const char *name; void *fn; } fns[] = {
		{ "unw_capture", (void *)unw_capture }, { "unw_cmp", (void *)unw_cmp },
		{ "unw_sort", (void *)unw_sort }, { "unw_thread", (void *)unw_thread },
	};
	const char *best = NULL;
	uint64_t best_start = 0;

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t s = (uint64_t)fns[i].fn;

		if (s <= pc && s >= best_start) {
			best_start = s;
			best = fns[i].name;
		}
	}
	return best && pc - best_start < 1024 ? best : NULL;
}

static void run_thread(void)
{
	pthread_attr_t attr;
	pthread_t th;
	void *stack = aligned_alloc(4096, STACK_BYTES);

	assert_non_null(stack);
	stack_top = (char *)stack + STACK_BYTES;
	captured = 0;
	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstack(&attr, stack, STACK_BYTES), 0);
	assert_int_equal(pthread_create(&th, &attr, unw_thread, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	pthread_attr_destroy(&attr);
	free(stack);
}

static void test_through_libc(void **state)
{
	struct unwinder *u;
	char *maps;
	uint64_t ips[128];
	enum unwind_end end;
	uint32_t n, i, cmp = 0, sort = 0, thread = 0;
	bool libc_between = false;

	run_thread();
	maps = read_maps();
	assert_int_equal(unwinder__new(&u), 0);
	/* the thread is gone: the copy and the maps text are all there is */
	n = unwinder__unwind(u, getpid(), 4242, maps, 1, &cap.us, ips, 128, &end);
	assert_int_equal(end, UNWIND_COMPLETE);
	assert_true(n >= 6);
	assert_string_equal(which(ips[0]), "unw_capture");
	for (i = 1; i < n; i++) {
		const char *w = which(ips[i]);

		if (w && !strcmp(w, "unw_cmp") && !cmp)
			cmp = i;
		else if (w && !strcmp(w, "unw_sort"))
			sort = i;
		else if (w && !strcmp(w, "unw_thread"))
			thread = i;
		else if (!w && cmp && !sort)
			libc_between = true;	/* qsort and libc's merge sort */
	}
	assert_int_equal(cmp, 1);
	assert_true(sort > cmp + 1 && libc_between);
	assert_int_equal(thread, sort + 1);
	assert_true(n > thread + 1);	/* start_thread, clone3: the CFI ends the stack */
	assert_int_equal(unwinder__count(u, UNWIND_COMPLETE), 1);

	/* the same copy again: the Dwfl is reused, same frames */
	{
		uint64_t again[128];

		assert_int_equal(unwinder__unwind(u, getpid(), 4242, maps, 1, &cap.us, again, 128,
						  &end), n);
		assert_memory_equal(again, ips, n * sizeof(ips[0]));
	}
	/* too few frames asked for */
	unwinder__unwind(u, getpid(), 4242, maps, 1, &cap.us, ips, 3, &end);
	assert_int_equal(end, UNWIND_TOO_DEEP);
	unwinder__free(u);
	free(maps);
}

static void test_truncated(void **state)
{
	struct unwinder *u;
	char *maps;
	uint64_t ips[128];
	enum unwind_end end;
	uint32_t full, n;
	uint32_t len;

	run_thread();
	maps = read_maps();
	assert_int_equal(unwinder__new(&u), 0);
	full = unwinder__unwind(u, getpid(), 1, maps, 1, &cap.us, ips, 128, &end);
	assert_int_equal(end, UNWIND_COMPLETE);
	/* a copy cut short by --stack-size: fewer frames, and said so */
	len = cap.us.len;
	cap.us.len = 64;
	cap.us.flags = BP_USTACK_CUT;
	n = unwinder__unwind(u, getpid(), 1, maps, 1, &cap.us, ips, 128, &end);
	assert_int_equal(end, UNWIND_STACK_CUT);
	assert_true(n < full);
	/* cut by the end of the readable stack: the same, for another reason */
	cap.us.flags = 0;
	n = unwinder__unwind(u, getpid(), 1, maps, 1, &cap.us, ips, 128, &end);
	assert_int_equal(end, UNWIND_NO_STACK);
	cap.us.len = len;
	/* a pc in no module, no frame pointer: not complete */
	cap.us.regs[BP_UREG_IP] = 0x10;
	cap.us.regs[BP_UREG_BP] = 0;
	n = unwinder__unwind(u, getpid(), 1, maps, 1, &cap.us, ips, 128, &end);
	assert_int_not_equal(end, UNWIND_COMPLETE);
	assert_true(n <= 1);
	/* no maps known */
	n = unwinder__unwind(u, 1234567, 1, NULL, 0, &cap.us, ips, 128, &end);
	assert_int_equal(end, UNWIND_NO_MAPS);
	assert_int_equal(n, 0);
	unwinder__free(u);
	free(maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_through_libc),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
