// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * throw: C++ exceptions thrown through traced frames.
 *
 * Usage: throw [dtor]
 *
 * The traced functions are extern "C" so their names are plain (no
 * demangled parameter lists).  Guaranteed facts, one run, one thread:
 *
 *   Without argument:
 *   - main calls catcher(i) for i = 0..4 (5 calls).
 *   - catcher(i): try { thrower_mid(i); } catch (const std::runtime_error &)
 *     { after_catch(i); }
 *   - thrower_mid(i) calls thrower_leaf(i) once; thrower_leaf throws
 *     std::runtime_error("leaf i").  Neither returns normally: the exception
 *     unwinds both frames (the unwinder walks the stack through the return
 *     addresses: with return probes installed, a tracer that did not put the
 *     real ones back would make it call std::terminate).
 *   - after_catch(i) is called exactly once per catcher, by catcher directly,
 *     after thrower_mid/thrower_leaf are gone.  catcher returns normally.
 *   - Counts: catcher 5, thrower_mid 5, thrower_leaf 5, after_catch 5;
 *     cleanup_dtor and thrower_mid_dtor 0.
 *
 *   With "dtor":
 *   - the same, except catcher(i) calls thrower_mid_dtor(i) instead of
 *     thrower_mid(i).  thrower_mid_dtor holds a local Guard object whose
 *     destructor calls cleanup_dtor(i): when the exception passes through
 *     thrower_mid_dtor, the unwinder runs its cleanup pad (the destructor),
 *     which calls cleanup_dtor(i) from thrower_mid_dtor's frame, then
 *     continues with _Unwind_Resume.  cleanup_dtor returns normally.
 *   - Counts: catcher 5, thrower_mid_dtor 5, thrower_leaf 5, cleanup_dtor 5,
 *     after_catch 5; thrower_mid 0.
 *
 *   Both: prints "caught leaf i" for i = 0..4, one line each, then
 *   "throw: caught=5" to stdout; exits 0.  (std::terminate would abort:
 *   exit by SIGABRT.)
 */
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include "progs.h"

volatile unsigned long sink;

extern "C" {

TRACED void thrower_leaf(int i)
{
	sink++;
	throw std::runtime_error("leaf " + std::to_string(i));
}

TRACED void thrower_mid(int i)
{
	sink++;
	thrower_leaf(i);
	sink++;		/* never reached */
}

TRACED void cleanup_dtor(int i)
{
	sink += (unsigned long)i;
}

}

struct Guard {
	int i;
	explicit Guard(int v) : i(v) { }
	~Guard() { cleanup_dtor(i); }
};

extern "C" {

TRACED void thrower_mid_dtor(int i)
{
	Guard g(i);

	sink++;
	thrower_leaf(i);
	sink++;		/* never reached */
}

TRACED void after_catch(int i)
{
	sink += (unsigned long)i;
}

static int caught;
static bool use_dtor;

TRACED void catcher(int i)
{
	try {
		if (use_dtor)
			thrower_mid_dtor(i);
		else
			thrower_mid(i);
	} catch (const std::runtime_error &e) {
		std::printf("caught %s\n", e.what());
		caught++;
		after_catch(i);
	}
}

}

int main(int argc, char **argv)
{
	use_dtor = argc > 1 && !std::strcmp(argv[1], "dtor");
	for (int i = 0; i < 5; i++)
		catcher(i);
	std::printf("throw: caught=%d\n", caught);
	return 0;
}
