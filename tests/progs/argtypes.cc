// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * argtypes [N]: calls, N times (default 3), one function per kind of
 * argument and return value that --args types from DWARF.  Round i passes:
 *   t_int(i - 1) = i - 2                  int in edi, int return in eax
 *   t_uint(4000000000 + i) = 2 * that (mod 2^32)    unsigned
 *   t_bool(i odd) = !that                 bool
 *   t_enum(COLORS[i % 3]) = RED or BLUE   enum color { RED = 0, GREEN = 5, BLUE = 6 }
 *   t_char('a' + i) = 'b' + i             char
 *   t_str("name-<i>") = strlen            char * read as a string
 *   t_double(i + 0.5) = 2 * that          double in xmm0, returned in xmm0
 *   t_pair({x = i, y = -10 i}) = {x = -10 i, y = i}   16 bytes in rdi:rsi, rax:rdx
 *   t_eight(i+1, ..., i+8) = 8 i + 36     7th and 8th on the stack
 *   t_void(i)                             no return value
 *   Counter::add(this, v = i) = 0 + 1 + .. + i   C++ method: this, const long &
 * then t_lit(FAR) once: a string literal alone in its own 64 KiB of
 * .rodata whose page is unmapped (madvise MADV_DONTNEED) just before the
 * call (not present at entry: the BPF side cannot read it), and prints "this <&c> ref <&v>" (the addresses add receives) and
 * "done <sink>".  Every round calls each function once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include "progs.h"

volatile unsigned long sink;

enum color { RED = 0, GREEN = 5, BLUE = 6 };
struct pair {
	long x;
	long y;
};

extern "C" {
TRACED int t_int(int v)
{
	sink += v;
	return v - 1;
}

TRACED unsigned t_uint(unsigned v)
{
	sink += v;
	return v * 2u;
}

TRACED bool t_bool(bool v)
{
	sink += v;
	return !v;
}

TRACED enum color t_enum(enum color c)
{
	sink += c;
	return c == RED ? BLUE : RED;
}

TRACED char t_char(char c)
{
	sink += c;
	return c + 1;
}

TRACED size_t t_str(const char *s)
{
	sink += strlen(s);
	return strlen(s);
}

TRACED double t_double(double d)
{
	sink += (unsigned long)d;
	return d * 2;
}

TRACED struct pair t_pair(struct pair p)
{
	struct pair r = { p.y, p.x };

	sink += p.x;
	return r;
}

TRACED long t_eight(long a, long b, long c, long d, long e, long f, long g, long h)
{
	sink += a;
	return a + b + c + d + e + f + g + h;
}

/* 64 KiB-aligned and followed by 64 KiB: no fault-around maps it early */
__attribute__((aligned(65536), used)) static const char FAR[131072] = "far-literal";

TRACED size_t t_lit(const char *s)
{
	sink += strlen(s);
	return strlen(s);
}

TRACED void t_void(int v)
{
	sink += v;
}
}

struct Counter {
	long total;
	long add(const long &v);
};

TRACED long Counter::add(const long &v)
{
	total += v;
	sink += v;
	return total;
}

int main(int argc, char **argv)
{
	static const enum color colors[3] = { RED, GREEN, BLUE };
	int n = argc > 1 ? atoi(argv[1]) : 3;
	Counter c = { 0 };

	for (int i = 0; i < n; i++) {
		char name[32];
		struct pair p = { i, -10L * i };
		long v = i;

		snprintf(name, sizeof(name), "name-%d", i);
		if (!i)
			printf("this %p ref %p\n", (void *)&c, (void *)&v);
		t_int(i - 1);
		t_uint(4000000000u + (unsigned)i);
		t_bool(i & 1);
		t_enum(colors[i % 3]);
		t_char((char)('a' + i));
		t_str(name);
		t_double(i + 0.5);
		t_pair(p);
		t_eight(i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, i + 8);
		t_void(i);
		c.add(v);
	}
	/* its page unmapped (the file's bytes stay): not present at t_lit's entry */
	madvise((void *)((uintptr_t)FAR & ~(uintptr_t)4095), 4096, MADV_DONTNEED);
	t_lit(FAR);
	printf("done %lu\n", sink);
	return 0;
}
