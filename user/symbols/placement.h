/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where a function's entry probe goes.
 *
 * The kernel emulates a few instructions at a uprobe (push reg, nop, a
 * 5-byte nop it turns into a call, and the relative jmp/jcc/call) and
 * single-steps every other one out of line, about 3x dearer per call on this
 * machine.  Half of the functions of a distribution build start with an
 * instruction of the second kind (mov, xor, sub, test...).  The entry probe
 * may sit on a later instruction when every call reaches it exactly once and
 * finds the same state the entry had: the instructions before it (the
 * prefix) run straight through (no branch, call, ret, syscall), leave rsp
 * alone (the return address stays on top for the return probe), write no
 * memory, and, when arguments are recorded, leave the argument registers
 * alone.  That is not enough: the placement is refused when anything can
 * enter the function between its entry and the probe, because each such
 * entry would count a call that did not happen:
 *   - a direct branch of the function (or of its .cold fragments) targets an
 *     instruction in (entry, probe]: a loop back to just after the prefix;
 *   - a jump table the function reads points there;
 *   - another symbol starts there;
 *   - the unwind information (.eh_frame) gives a different CFA rule there
 *     than at the entry (then the prefix is not what it looks like).
 * The function is decoded in full with Capstone (see README: why not
 * libopcodes); a function Capstone cannot decode to its end is not moved.
 */
#ifndef BPFPROF_PLACEMENT_H
#define BPFPROF_PLACEMENT_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "elfsym.h"
#include "model/session.h"

/* The decision for one function. */
struct placement {
	uint32_t skip;		/* bytes from the entry to the probe; 0: at the entry */
	uint32_t insn;		/* ELFSYM_INSN_* of the instruction the probe sits on */
	/*
	 * Why the probe is not on an emulated instruction (NULL when it is),
	 * a static word: what stopped the walk from the entry ("branch",
	 * "trap", "rsp", "mem-write", "arg-write" with --args, "too-long", "end",
	 * "undecodable", "too-large", "no-size", "unreadable"),
	 * or what refused a placement that was otherwise possible: something
	 * enters the function inside the prefix ("branch-target", "jump-table",
	 * "cold-jump", "symbol") or the unwind rules change there ("cfa").
	 */
	const char *why;
};

/* One binary: its decoder, unwind tables and the branch targets of its .cold fragments. */
struct placement_mod;

/*
 * Opens `path` (whose functions elfsym__read() gave as `syms`, sorted by
 * address) for placement decisions.  Returns 0 or -errno; on failure *out is
 * NULL and callers keep every probe where elfsym put it.
 */
int placement__open(const char *path, const struct elf_funcs *syms, struct placement_mod **out);
void placement__close(struct placement_mod *pm);

/*
 * Decides where the probe of syms->v[idx] goes.  keep_args: --args, the six
 * integer argument registers must be what the caller passed.  Never fails:
 * anything unclear leaves the probe at the entry (out->skip 0, out->insn the
 * class of the first instruction) with out->why saying why.
 */
void placement__decide(struct placement_mod *pm, size_t idx, bool keep_args,
		       struct placement *out);

/*
 * placement__decide() for the function f describes (syms->v[idx]): moves
 * f->offset, sets BP_FUNC_PLACED (BP_FUNC_SKIP_ENDBR for a lone endbr64) and
 * the class in f->flags, f->probe_skip and f->probe_why.
 */
void placement__apply(struct placement_mod *pm, size_t idx, bool keep_args, struct bp_func *f);

/*
 * One line into buf: how many of the session's probed functions take each
 * probe path ("probe paths: emulated 1234 (61%: ...), nop5 0, single-step
 * 790 (39%)").  False (buf empty) when no function is probed.
 */
bool placement__paths(const struct bp_session *s, char *buf, size_t len);

/* Is an instruction of class insn (ELFSYM_INSN_*) emulated by the kernel's uprobe code? */
bool placement__emulated(uint32_t insn);

#endif
