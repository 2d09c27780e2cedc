// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * throwthreads: several std::threads throwing C++ exceptions through traced
 * frames at the same time.
 *
 * Usage: throwthreads MODE THREADS ITERS [gate]
 *   MODE: plain | rethrow | nested
 *
 * The traced functions are extern "C" (plain names).  Each thread t
 * (0..THREADS-1) runs thread_main(t), which calls outer_loop(t) inside a
 * try block.  outer_loop(t) calls outer(t, i) for i = 0..ITERS-1, then
 * throws std::runtime_error carrying a final value, caught by thread_main
 * (so the last exception passes outer_loop's own frame).  outer(t, i):
 * try { middle(t, i) } catch (const std::runtime_error &) -> a value parsed
 * from the message.  inner(t, i) always throws std::runtime_error with the
 * decimal text of t * 1000003 + i * 7.
 *   plain:   middle(t, i) calls inner(t, i).
 *   rethrow: middle_rethrow(t, i) catches inner's exception (catch (...))
 *            and rethrows it with `throw;`.
 *   nested:  middle_nested(t, i) first calls inner_nested(t, i), which
 *            throws std::logic_error caught inside middle_nested (a try
 *            inside a traced frame, nested in outer's), then calls
 *            inner(t, i).
 * So per thread: outer_loop 1, outer ITERS, middle* ITERS, inner ITERS,
 * inner_nested ITERS (nested mode only).  outer and outer_loop never
 * return normally except outer (it returns after its catch); middle*,
 * inner, inner_nested, outer_loop are left by exceptions only.
 *
 * With "gate": every thread runs the first ITERS / 2 iterations, then waits;
 * once all wait, main prints "throwthreads: pid=PID ready" (flushed) and
 * reads one line from stdin; then the threads run the rest.
 *
 * Output (stdout), last line: "throwthreads: caught=N checksum=X" where N
 * = THREADS * (ITERS + 1) exceptions caught and X a checksum (hex) of every
 * value caught, in each thread's order, combined in thread order: the same
 * for every run with the same arguments, traced or not.  Exit 0.  An
 * exception that is not caught, or unwinds to the wrong handler, ends it in
 * std::terminate (SIGABRT) or a different checksum.
 */
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

static int mode;	/* 0 plain, 1 rethrow, 2 nested */
static long iters;
static bool gated;

static std::mutex mu;
static std::condition_variable cv;
static int waiting;
static bool open_gate;

static void gate(int nthreads)
{
	std::unique_lock<std::mutex> lk(mu);

	if (++waiting == nthreads)
		cv.notify_all();
	cv.wait(lk, [] { return open_gate; });
}

extern "C" {

TRACED void inner(int t, long i)
{
	sink++;
	throw std::runtime_error(std::to_string((unsigned long)t * 1000003ul + (unsigned long)i * 7));
}

TRACED void inner_nested(int t, long i)
{
	sink++;
	throw std::logic_error(std::to_string(i - t));
}

TRACED void middle(int t, long i)
{
	sink++;
	inner(t, i);
	sink++;		/* never reached */
}

TRACED void middle_rethrow(int t, long i)
{
	sink++;
	try {
		inner(t, i);
	} catch (...) {
		sink++;
		throw;
	}
}

TRACED void middle_nested(int t, long i)
{
	unsigned long got = 0;

	try {
		inner_nested(t, i);
	} catch (const std::logic_error &e) {
		got = std::strtoul(e.what(), nullptr, 10);
	}
	sink += got;
	inner(t, i);
}

TRACED unsigned long outer(int t, long i)
{
	try {
		if (mode == 1)
			middle_rethrow(t, i);
		else if (mode == 2)
			middle_nested(t, i);
		else
			middle(t, i);
	} catch (const std::runtime_error &e) {
		return std::strtoul(e.what(), nullptr, 10) + 1;
	}
	return 0;	/* never: middle* always throws */
}

TRACED void outer_loop(int t, int nthreads, unsigned long *sum, unsigned long *caught)
{
	for (long i = 0; i < iters; i++) {
		if (gated && i == iters / 2)
			gate(nthreads);
		unsigned long v = outer(t, i);

		*sum = *sum * 1000000007ul + v;
		*caught += v != 0;
	}
	throw std::runtime_error(std::to_string(*sum % 1000003ul));
}

}

static void thread_main(int t, int nthreads, unsigned long *sum, unsigned long *caught)
{
	try {
		outer_loop(t, nthreads, sum, caught);
	} catch (const std::runtime_error &e) {
		*sum ^= std::strtoul(e.what(), nullptr, 10);
		(*caught)++;
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		std::fprintf(stderr, "usage: throwthreads plain|rethrow|nested THREADS ITERS [gate]\n");
		return 2;
	}
	mode = !std::strcmp(argv[1], "rethrow") ? 1 : !std::strcmp(argv[1], "nested") ? 2 : 0;
	int n = std::atoi(argv[2]);
	iters = std::atol(argv[3]);
	gated = argc > 4 && !std::strcmp(argv[4], "gate");
	std::vector<unsigned long> sums(n), caught(n);
	std::vector<std::thread> th;

	for (int t = 0; t < n; t++)
		th.emplace_back(thread_main, t, n, &sums[t], &caught[t]);
	if (gated) {
		char line[64];

		{
			std::unique_lock<std::mutex> lk(mu);

			cv.wait(lk, [n] { return waiting == n; });
		}
		std::printf("throwthreads: pid=%d ready\n", (int)getpid());
		std::fflush(stdout);
		if (!std::fgets(line, sizeof(line), stdin))
			line[0] = 0;
		{
			std::lock_guard<std::mutex> lk(mu);

			open_gate = true;
		}
		cv.notify_all();
	}
	unsigned long sum = 0, total = 0;

	for (int t = 0; t < n; t++) {
		th[t].join();
		sum = sum * 31 + sums[t];
		total += caught[t];
	}
	std::printf("throwthreads: caught=%lu checksum=%lx\n", total, sum);
	return 0;
}
