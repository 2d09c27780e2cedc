/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names for the functions of a file whose own .symtab is gone, from the
 * sources a distribution offers, first found wins:
 *   1. the separate debug file by build-id: DIR/.build-id/xx/yyyy.debug for
 *      each --debug-dir DIR, then /usr/lib/debug (Debian's -dbg/-dbgsym);
 *   2. the debug file .gnu_debuglink names, next to the file, in its .debug/
 *      folder, and under each debug dir (checked by build-id, else CRC);
 *   3. MiniDebugInfo: .gnu_debugdata, an xz-compressed ELF holding the
 *      symbol table of the functions .dynsym lacks (Fedora and others);
 *   4. Go's .gopclntab, which names every Go function even when stripped.
 * Local files only: never debuginfod or any other network service.
 *
 * Read only when asked (a file with .symtab never is), and kept for the
 * life of the process keyed by build-id and file identity (device, inode,
 * size, mtime, ctime), so select and the symbolizer of one recording read each
 * source once, a rebuilt file is another entry, and a file carrying another
 * file's build-id never gets the names read for that other file.
 *
 * Every source is the file owner's to shape: a debuglink'd file over 1 GiB
 * is not CRC'd (refused with a warning), and is read with pread, never
 * mapped; MiniDebugInfo is decompressed within 96 MiB of decoder memory
 * and to at most 64 MiB; .gopclntab reads stay inside the section.
 */
#ifndef BPFPROF_DEBUGSYMS_H
#define BPFPROF_DEBUGSYMS_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

/* Where a function's name comes from (elf_func.source, bp_func.source). */
#define SYMSRC_SYMTAB		0	/* the file's own .symtab */
#define SYMSRC_DYNSYM		1	/* its .dynsym (exported) */
#define SYMSRC_BUILDID		2	/* debug file found by build-id */
#define SYMSRC_DEBUGLINK	3	/* debug file found by .gnu_debuglink */
#define SYMSRC_MINIDEBUG	4	/* .gnu_debugdata */
#define SYMSRC_GOPCLNTAB	5	/* Go's .gopclntab */
#define SYMSRC_EHFRAME		6	/* no name anywhere: FILE+0xADDR, found by its FDE */
#define SYMSRC_NONE		7	/* not from a file's symbols (kernel, markers) */
#define SYMSRC_DEBUGINFOD	8	/* debug file fetched from a debuginfod server */

struct debug_sym {
	uint64_t addr;		/* link-time address, as in the file itself */
	uint64_t size;
	char *name;
	uint8_t type;		/* STT_FUNC, STT_GNU_IFUNC or (a label, no size) STT_NOTYPE */
	uint8_t bind;		/* STB_* */
};

struct debug_names {
	struct debug_sym *v;
	size_t n;
	uint32_t source;	/* SYMSRC_* */
	char *file;		/* the debug file read, NULL for sections of the file itself */
};

/*
 * Where debug files are looked for (--debug-dir, --debuginfod,
 * --debuginfod-timeout): a field of the options of what reads names
 * (capture_opts, select_opts, symbolize__run), given to
 * debugsyms__configure() by the layer that reads them, never set by cmd/.
 */
struct debug_conf {
	char **dirs;		/* searched in this order before /usr/lib/debug */
	size_t ndirs;
	const char *debuginfod;	/* server URL; NULL: DEBUGINFOD_URLS as set */
	unsigned debuginfod_ms;	/* each fetch's budget; 0: the default (debuginfod.h) */
};

/*
 * Debug files are looked for where conf says from now on (its dirs are
 * copied) and libdebuginfod is set up (debuginfod__setup); NULL: only
 * /usr/lib/debug and the environment.  Called by capture__new,
 * select__resolve and resymbolize__session before they read a name.
 */
void debugsyms__configure(const struct debug_conf *conf);
/*
 * The debug dirs as libdwfl's debuginfo_path wants them (":DIR1:DIR2:/usr/lib/debug":
 * absolute entries are searched by build-id); malloc'd.
 */
char *debugsyms__search_path(void);
/* Forgets the --debug-dir list and the cache (tests, and the end of a command). */
void debugsyms__reset(void);

/*
 * The names a debug source has for `path`, open as `elf`; NULL when none has
 * any.  Owned by the cache: never freed by the caller.  st: the fstat of
 * the descriptor elf reads (the cache key), NULL for an image in memory
 * (elf_memory: read anew each time).
 */
struct stat;
const struct debug_names *debugsyms__names(const char *path, Elf *elf, const struct stat *st);

/*
 * The names of the debug file of build-id `id` (hex) without the file it is
 * for (bpfprof symbolize: the recording's host had it): the debug dirs by
 * build-id, then by the file's path `what` (DIR/PATH.debug, DIR/NAME.debug,
 * DIR/NAME; the build-id must match), then debuginfod.  Cached as
 * debugsyms__names(); NULL: none.  `what` also names the file in messages.
 */
const struct debug_names *debugsyms__by_build_id(const char *id, const char *what);

/* The GNU build-id of elf as lowercase hex, "" when it has none; buf >= 81 bytes. */
void debugsyms__build_id(Elf *elf, char *buf, size_t size);

/* "symtab", "dynsym", "build-id", "debuglink", "minidebuginfo", "gopclntab", "eh_frame",
 * "debuginfod", "-". */
const char *debugsyms__source_name(uint32_t source);

#endif
