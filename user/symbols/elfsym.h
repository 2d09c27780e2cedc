/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Function symbols of an ELF executable or shared library, with what the
 * loader needs to attach uprobes to them: uprobe_multi takes file offsets,
 * not virtual addresses, and how fast a uprobe fires depends on the first
 * instruction of the function (the kernel emulates push/nop, single-steps
 * everything else out of line).
 */
#ifndef BPFPROF_ELFSYM_H
#define BPFPROF_ELFSYM_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

struct elf_func {
	char *name;		/* demangled C++ name where the symbol is mangled, else the raw name */
	char *raw_name;		/* the symbol as in the ELF file */
	uint64_t addr;		/* st_value */
	uint64_t size;		/* st_size */
	uint64_t offset;	/* file offset of addr (via the PT_LOAD program header containing it) */
	uint32_t insn;		/* ELFSYM_INSN_* class of the first instruction at addr */
	uint32_t flags;		/* ELFSYM_F_* */
	uint32_t insn_next;	/* after an endbr64: the class of the next instruction */
	uint32_t go_prologue;	/* bytes of a Go stack-check prologue at addr, 0: none */
	char **aliases;		/* the other names at addr (raw), which patterns also match */
	uint32_t naliases;
	uint32_t source;	/* SYMSRC_* (symbols/debugsyms.h): where the name comes from */
};

/*
 * First instruction classes.  Only x86-64 code is classified; every other
 * machine gets ELFSYM_INSN_OTHER.
 */
#define ELFSYM_INSN_OTHER	0	/* anything else (kernel will single-step it: slow) */
#define ELFSYM_INSN_PUSH	1	/* push reg (0x50-0x57, or 0x41 0x50-0x57): emulated by the kernel, fast */
#define ELFSYM_INSN_NOP		2	/* 1-byte nop 0x90 or multi-byte nop 0x0f 0x1f (not 5-byte): emulated */
#define ELFSYM_INSN_NOP5	3	/* exactly the 5-byte nop 0f 1f 44 00 00: kernel can optimise */
#define ELFSYM_INSN_ENDBR64	4	/* f3 0f 1e fa */
#define ELFSYM_INSN_MOV_RBP	5	/* 48 89 e5 mov %rsp,%rbp */
#define ELFSYM_INSN_REFUSED	6	/* a prefix the kernel will not probe (lock, es/cs/ss/ds) */
#define ELFSYM_INSN_JUMP	7	/* relative jmp/jcc/call: emulated (set by symbols/placement.c) */

/* elf_func.flags */
#define ELFSYM_F_LOCAL		(1u << 0)	/* STB_LOCAL: a static function */
#define ELFSYM_F_WEAK		(1u << 1)	/* STB_WEAK */
#define ELFSYM_F_ALIASED	(1u << 2)	/* other names at the same address were dropped */
#define ELFSYM_F_DEMANGLED	(1u << 3)	/* name differs from raw_name */
#define ELFSYM_F_STARTUP	(1u << 4)	/* elfsym__is_startup_glue(raw_name) */
#define ELFSYM_F_IFUNC		(1u << 5)	/* an IFUNC's implementation (elfsym__func_at) */
#define ELFSYM_F_UNNAMED	(1u << 6)	/* found by its FDE only: named FILE+0xADDR */
/*
 * Named for sampled stacks only, never probed: a "foo.cold" fragment (jumped
 * to, no return address on top of the stack), a symbol without a size (its
 * size here runs to the next function), an FDE that does not start like a
 * function (_start, fragments).
 */
#define ELFSYM_F_NOPROBE	(1u << 7)

/* A PT_LOAD segment: link-time addresses [vaddr, vaddr + filesz) are at file offset `offset`. */
struct elf_seg {
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t offset;
};

struct elf_funcs {
	struct elf_func *v;
	size_t n;
	bool from_dynsym;	/* true when .symtab was absent and .dynsym was used */
	bool pie;		/* ET_DYN */
	bool go;		/* a Go program (.go.buildinfo or .gopclntab section) */
	char **ifuncs;		/* names of its STT_GNU_IFUNC symbols (glibc's strlen, memcpy...) */
	size_t nifuncs;
	uint32_t ifunc_source;	/* SYMSRC_* of those names */
	struct elf_seg *segs;	/* its PT_LOAD segments */
	size_t nsegs;
	char *build_id;		/* its GNU build-id in hex, NULL: none */
	struct elf_seg *plts;	/* its PLT sections (.plt, .plt.sec...): stubs, not functions */
	size_t nplts;
};

/*
 * Reads the defined function symbols of `path` (an ET_EXEC or ET_DYN file):
 * STT_FUNC, defined in an executable section other than the PLT, with a
 * non-zero st_value and st_size, and inside a PT_LOAD segment's file image.
 * GCC's "foo.cold" fragments are kept for naming samples but flagged
 * ELFSYM_F_NOPROBE: they are jumped to, never called, so a uretprobe there
 * would overwrite whatever the stack holds instead of a return address and
 * break the target.  So are symbols without a size and FDEs that do not
 * start like a function.
 *
 * Uses .symtab.  A file without one (stripped) gets the functions of its
 * .dynsym, those of the first debug source that has any (debugsyms.h: the
 * debug file by build-id or debuglink, MiniDebugInfo, Go's .gopclntab), and
 * every other function its .eh_frame has an FDE for (ehframe.h), named
 * FILE+0xADDR: FILE the DT_SONAME or else the file name, ADDR the link-time
 * address in hex as nm prints it (gzip+0x4a20, libz.so.1+0x4a00).
 * Aliases (several names at one address) are kept once, under the name a
 * user would call it by: one not starting with '_' first (glibc's `fork`,
 * not its GLOBAL `__libc_fork`), then GLOBAL, WEAK, LOCAL, the shortest,
 * alphabetical; the others stay in `aliases` for matching.
 * The result is sorted by addr.
 *
 * Returns 0, or -ENOENT (no such file), -EACCES, -ENOEXEC (not an ELF file
 * or not a supported one: the reason is printed with p_err), -ENODATA (no
 * function symbols at all), or another -errno from open(2).  Only the
 * -ENOEXEC reason is printed; the caller reports the others.  `out` is
 * zeroed on failure.
 */
int elfsym__read(const char *path, struct elf_funcs *out);

/*
 * The same for an image in memory (elf_memory: the fuzz targets, whose
 * exactly-sized buffers let ASan see a read past the file): named `name`
 * in messages; the debug sources are searched beside `name`, and their
 * names are not cached.  elf stays the caller's.
 */
#include <libelf.h>
int elfsym__read_elf(const char *name, Elf *elf, struct elf_funcs *out);

/* Frees what elfsym__read() filled in and zeroes `f`; accepts a zeroed struct and NULL. */
void elfsym__free(struct elf_funcs *f);

/*
 * True when `name` is compiler/libc start-up glue a user never wants traced
 * by default: _start, _init, _fini, frame_dummy, register_tm_clones,
 * deregister_tm_clones, __do_global_dtors_aux, __libc_csu_init,
 * __libc_csu_fini, _dl_relocate_static_pie, __x86.get_pc_thunk.*
 */
bool elfsym__is_startup_glue(const char *name);

/* Glob match of a function name (fnmatch(3), no flags). */
bool elfsym__match(const char *glob, const char *name);
/* File offset of link-time address addr in f's file, -1 when no PT_LOAD maps it from the file. */
int64_t elfsym__addr_to_offset(const struct elf_funcs *f, uint64_t addr);
/*
 * A function known by its file offset only (an IFUNC's implementation, which
 * has no symbol of its own in a stripped library): named `name`, at link
 * address `addr`, its first instructions read from `path`.  0 or -errno.
 */
int elfsym__func_at(const char *path, const char *name, uint64_t addr, uint64_t offset,
		    struct elf_func *out);
/* Does glob match the function under any of its names (name, raw name, aliases)? */
bool elfsym__func_matches(const struct elf_func *f, const char *glob);

/* "push", "nop", "nop5", "endbr64", "mov", "jump", "refused", "other" (also for unknown values). */
const char *elfsym__insn_name(uint32_t insn);

/* Classifies the first instruction of x86-64 code: `len` bytes at `code`. */
uint32_t elfsym__classify_insn(const uint8_t *code, size_t len);
/*
 * Length of the stack check Go (>= 1.17, amd64) puts at a function's entry:
 * [lea -N(%rsp),%r12;] cmp 0x10(%r14),%rsp|%r12; jbe MORESTACK.  When the
 * stack must grow, the function calls morestack and jumps back to its entry:
 * an entry probe fires twice for one call, a probe after the check once.
 * 0 when the code does not start so.
 */
uint32_t elfsym__go_prologue(const uint8_t *code, size_t len);

#endif
