// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * elfsym unit tests.  Nothing is compiled at test time: the test binary reads
 * its own symbols (/proc/self/exe, built with -g so it has .symtab) and checks
 * them against where the dynamic loader really put its functions, then does
 * the same for the system libc (stripped: .dynsym only) and libstdc++.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "symbols/elfsym.h"

#define LIBC_PATH	"/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX_PATH	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

/* Targets with known names, bindings and aliases in this very binary. */
int __attribute__((noinline, used)) elfsym_test_target(int x)
{
	/* enough work that the body is not a lone "ret" shared with anything */
	return x * 3 + (x >> 2) - 7;
}

static int __attribute__((noinline, used)) elfsym_local_impl(int x)
{
	return x * 5 + (x >> 3) - 11;
}

/* a GLOBAL alias of a static function: the global name must win even though it is longer */
int elfsym_zz_global_alias_of_local(int x) __attribute__((alias("elfsym_local_impl")));

int __attribute__((noinline, used)) elfsym_tgt_b(int x)
{
	return x * 7 + (x >> 4) - 13;
}

/* same length, both GLOBAL: alphabetical order decides */
int elfsym_tgt_a(int x) __attribute__((alias("elfsym_tgt_b")));

int __attribute__((noinline, used)) elfsym_long_name_target(int x)
{
	return x * 9 + (x >> 5) - 17;
}

/* shorter, both GLOBAL: the shortest name wins */
int elfsym_lnt(int x) __attribute__((alias("elfsym_long_name_target")));

static const struct elf_func *find(const struct elf_funcs *f, const char *raw)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].raw_name, raw))
			return &f->v[i];
	return NULL;
}

struct bias_query {
	uintptr_t addr;
	uintptr_t bias;
	char path[4096];
	bool found;
};

/* Which loaded object maps `addr`, and with what load bias (dl_iterate_phdr's dlpi_addr). */
static int bias_cb(struct dl_phdr_info *info, size_t sz, void *arg)
{
	struct bias_query *q = arg;
	int i;

	(void)sz;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || q->addr < start || q->addr >= start + ph->p_memsz)
			continue;
		q->bias = info->dlpi_addr;
		/* the main program is reported with an empty name */
		snprintf(q->path, sizeof(q->path), "%s",
			 info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
		q->found = true;
		return 1;
	}
	return 0;
}

static void lookup_bias(const void *addr, struct bias_query *q)
{
	memset(q, 0, sizeof(*q));
	q->addr = (uintptr_t)addr;
	dl_iterate_phdr(bias_cb, q);
	assert_true(q->found);
}

/*
 * The file offset must point at the very bytes the loader mapped at the
 * function's runtime address.
 */
static void assert_offset_maps(const char *path, const struct elf_func *fn, const void *runtime)
{
	uint8_t file[32];
	size_t len = fn->size < sizeof(file) ? fn->size : sizeof(file);
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, file, len, (off_t)fn->offset), (ssize_t)len);
	close(fd);
	assert_memory_equal(file, runtime, len);
	/* and the class is that of the real first instruction */
	assert_int_equal(fn->insn, elfsym__classify_insn(runtime, len < 8 ? len : 8));
}

static void test_self_exe(void **state)
{
	struct elf_funcs f = { 0 };
	const struct elf_func *fn;
	struct bias_query q;
	size_t i;

	(void)state;
	assert_int_equal(elfsym__read("/proc/self/exe", &f), 0);
	assert_false(f.from_dynsym);
	assert_true(f.n > 0);

	lookup_bias((const void *)elfsym_test_target, &q);
	assert_string_equal(q.path, "/proc/self/exe");
	/* a PIE is loaded at a random base; a fixed-address executable is not moved */
	if (!f.pie)
		assert_int_equal(q.bias, 0);

	fn = find(&f, "elfsym_test_target");
	assert_non_null(fn);
	assert_string_equal(fn->name, "elfsym_test_target");
	assert_int_equal(q.bias + fn->addr, (uintptr_t)elfsym_test_target);
	assert_true(fn->size > 0);
	assert_false(fn->flags & (ELFSYM_F_LOCAL | ELFSYM_F_WEAK | ELFSYM_F_STARTUP));
	assert_offset_maps("/proc/self/exe", fn, (const void *)elfsym_test_target);

	/* sorted by address, one entry per address */
	for (i = 1; i < f.n; i++)
		assert_true(f.v[i - 1].addr < f.v[i].addr);

	/* startup glue is listed but flagged */
	fn = find(&f, "_start");
	assert_non_null(fn);
	assert_true(fn->flags & ELFSYM_F_STARTUP);

	fn = find(&f, "main");
	assert_non_null(fn);
	assert_false(fn->flags & ELFSYM_F_STARTUP);
	elfsym__free(&f);
	assert_null(f.v);
	assert_int_equal(f.n, 0);
}

static void test_self_aliases(void **state)
{
	struct elf_funcs f = { 0 };
	const struct elf_func *fn;
	struct bias_query q;

	(void)state;
	assert_int_equal(elfsym__read("/proc/self/exe", &f), 0);
	lookup_bias((const void *)elfsym_tgt_b, &q);

	/* GLOBAL beats LOCAL, whatever the length */
	assert_null(find(&f, "elfsym_local_impl"));
	fn = find(&f, "elfsym_zz_global_alias_of_local");
	assert_non_null(fn);
	assert_true(fn->flags & ELFSYM_F_ALIASED);
	assert_false(fn->flags & ELFSYM_F_LOCAL);
	assert_int_equal(q.bias + fn->addr, (uintptr_t)elfsym_zz_global_alias_of_local);
	/* the dropped name still selects it */
	assert_int_equal(fn->naliases, 1);
	assert_string_equal(fn->aliases[0], "elfsym_local_impl");
	assert_true(elfsym__func_matches(fn, "elfsym_local_impl"));
	assert_true(elfsym__func_matches(fn, "elfsym_local_i*"));
	assert_false(elfsym__func_matches(fn, "elfsym_tgt_b"));

	/* same binding and length: alphabetical */
	assert_null(find(&f, "elfsym_tgt_b"));
	fn = find(&f, "elfsym_tgt_a");
	assert_non_null(fn);
	assert_true(fn->flags & ELFSYM_F_ALIASED);
	assert_int_equal(q.bias + fn->addr, (uintptr_t)elfsym_tgt_b);
	assert_offset_maps("/proc/self/exe", fn, (const void *)elfsym_tgt_b);

	/* same binding: shortest */
	assert_null(find(&f, "elfsym_long_name_target"));
	fn = find(&f, "elfsym_lnt");
	assert_non_null(fn);
	assert_int_equal(q.bias + fn->addr, (uintptr_t)elfsym_long_name_target);

	/* a function without aliases is not flagged */
	fn = find(&f, "elfsym_test_target");
	assert_non_null(fn);
	assert_false(fn->flags & ELFSYM_F_ALIASED);
	elfsym__free(&f);
}

/*
 * One function with many aliases (generated code has 10^5): each name once,
 * the chosen name (no leading underscore) not among its aliases.  Built here with the system cc.
 */
#define NALIASES 5000
static void test_many_aliases(void **state)
{
	char dir[] = "/tmp/test_elfsym_XXXXXX", src[64], lib[64], cmd[256];
	struct elf_funcs f = { 0 };
	const struct elf_func *fn;
	uint32_t i;
	char *seen;
	FILE *out;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/al.s", dir);
	snprintf(lib, sizeof(lib), "%s/libal.so", dir);
	out = fopen(src, "w");
	assert_non_null(out);
	fputs(".text\n.globl target\n.type target,@function\ntarget:\n ret\n.size target,1\n", out);
	for (i = 0; i < NALIASES; i++)
		fprintf(out, ".globl _z%u\n.type _z%u,@function\n.set _z%u,target\n.size _z%u,1\n",
			i, i, i, i);
	fputs(".section .note.GNU-stack,\"\",@progbits\n", out);
	assert_int_equal(fclose(out), 0);
	snprintf(cmd, sizeof(cmd), "cc -shared -o %s %s", lib, src);
	if (system(cmd) != 0) {
		unlink(src);
		rmdir(dir);
		skip();	/* no compiler */
	}
	assert_int_equal(elfsym__read(lib, &f), 0);
	unlink(src);
	unlink(lib);
	rmdir(dir);
	fn = find(&f, "target");
	assert_non_null(fn);
	assert_true(fn->flags & ELFSYM_F_ALIASED);
	/* .symtab and .dynsym both list them: still each name once */
	assert_int_equal(fn->naliases, NALIASES);
	seen = calloc(NALIASES, 1);
	assert_non_null(seen);
	for (i = 0; i < fn->naliases; i++) {
		unsigned long k = strtoul(fn->aliases[i] + 2, NULL, 10);

		assert_memory_equal(fn->aliases[i], "_z", 2);
		assert_true(k < NALIASES && !seen[k]);
		seen[k] = 1;
	}
	free(seen);
	assert_true(elfsym__func_matches(fn, "_z4999"));
	elfsym__free(&f);
}

static void test_libc(void **state)
{
	struct elf_funcs f = { 0 };
	const struct elf_func *fn;
	struct bias_query q;
	void *(*volatile malloc_fn)(size_t) = malloc;
	bool has_symtab = false;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	(void)state;
	if (access(LIBC_PATH, R_OK))
		skip();

	/* whether libc still has .symtab, independently of elfsym */
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	fd = open(LIBC_PATH, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			has_symtab = true;
	}
	elf_end(elf);
	close(fd);

	assert_int_equal(elfsym__read(LIBC_PATH, &f), 0);
	assert_int_equal(f.from_dynsym, !has_symtab);
	assert_true(f.pie);
	fn = find(&f, "malloc");
	assert_non_null(fn);
	assert_string_equal(fn->name, "malloc");
	assert_false(fn->flags & ELFSYM_F_DEMANGLED);
	assert_true(elfsym__match("ma*", fn->name));

	/* glibc: fork is a WEAK alias of the GLOBAL __libc_fork; users say fork */
	assert_null(find(&f, "__libc_fork"));
	{
		const struct elf_func *fk = find(&f, "fork");
		uint32_t i;
		bool found = false;

		if (fk) {
			for (i = 0; i < fk->naliases; i++)
				found |= !strcmp(fk->aliases[i], "__libc_fork");
			assert_true(found);
			assert_true(elfsym__func_matches(fk, "__libc_fork"));
		}
	}

	/* the libc this process runs is the same file: offsets must map */
	lookup_bias((const void *)malloc_fn, &q);
	if (strstr(q.path, "libc.so.6")) {
		struct stat a, b;

		if (!stat(q.path, &a) && !stat(LIBC_PATH, &b) && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev) {
			assert_int_equal(q.bias + fn->addr, (uintptr_t)malloc_fn);
			assert_offset_maps(LIBC_PATH, fn, (const void *)malloc_fn);
		}
	}
	elfsym__free(&f);
}

static void test_libstdcxx_demangle(void **state)
{
	struct elf_funcs f = { 0 };
	const struct elf_func *fn;
	size_t i, ncxx = 0;

	(void)state;
	if (access(LIBSTDCXX_PATH, R_OK))
		skip();
	assert_int_equal(elfsym__read(LIBSTDCXX_PATH, &f), 0);

	/* a well-known exported function, mangled and demangled */
	fn = find(&f, "_ZSt9terminatev");
	assert_non_null(fn);
	assert_string_equal(fn->name, "std::terminate()");
	assert_true(fn->flags & ELFSYM_F_DEMANGLED);

	for (i = 0; i < f.n; i++) {
		if (!(f.v[i].flags & ELFSYM_F_DEMANGLED))
			continue;
		assert_memory_equal(f.v[i].raw_name, "_Z", 2);
		assert_string_not_equal(f.v[i].name, f.v[i].raw_name);
		if (strstr(f.v[i].name, "::"))
			ncxx++;
	}
	assert_true(ncxx > 100);
	assert_true(elfsym__match("std::terminate*", fn->name));
	elfsym__free(&f);
}

static void test_errors(void **state)
{
	struct elf_funcs f = { 0 };

	(void)state;
	assert_int_equal(elfsym__read("/nonexistent/bpfprof-elfsym-test", &f), -ENOENT);
	assert_null(f.v);
	assert_int_equal(elfsym__read("/etc/passwd", &f), -ENOEXEC);
	assert_int_equal(elfsym__read("/", &f), -ENOEXEC);
	assert_int_equal(f.n, 0);
	elfsym__free(&f);
	elfsym__free(NULL);
}

static void test_eacces(void **state)
{
	char path[] = "/tmp/test_elfsym_XXXXXX";
	struct elf_funcs f = { 0 };
	int fd;

	(void)state;
	if (geteuid() == 0)
		skip();	/* root reads a mode-000 file anyway */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, 0), 0);
	assert_int_equal(elfsym__read(path, &f), -EACCES);
	unlink(path);
}

/* Copies the first `len` bytes of /proc/self/exe to a temporary file. */
static void write_prefix(char *path, size_t len)
{
	char buf[4096];
	int in, out;
	size_t done = 0;

	in = open("/proc/self/exe", O_RDONLY);
	out = mkstemp(path);
	assert_true(in >= 0 && out >= 0);
	while (done < len) {
		size_t want = len - done < sizeof(buf) ? len - done : sizeof(buf);
		ssize_t got = read(in, buf, want);

		assert_true(got > 0);
		assert_int_equal(write(out, buf, (size_t)got), got);
		done += (size_t)got;
	}
	close(in);
	close(out);
}

/* A truncated ELF file is an error, never a crash or a made-up symbol. */
static void test_truncated(void **state)
{
	/* the last cut loses only the end of the section header table */
	size_t lens[] = { 0, 4, 16, 64, 200, 4096, 0 };
	size_t nlens = sizeof(lens) / sizeof(lens[0]);
	struct elf_funcs f = { 0 };
	struct stat st;
	size_t i;

	(void)state;
	assert_int_equal(stat("/proc/self/exe", &st), 0);
	lens[nlens - 1] = (size_t)st.st_size - 1;
	for (i = 0; i < nlens; i++) {
		char path[] = "/tmp/test_elfsym_XXXXXX";
		int err;

		write_prefix(path, lens[i]);
		err = elfsym__read(path, &f);
		unlink(path);
		assert_int_equal(err, -ENOEXEC);
		assert_null(f.v);
	}
}

/* An ELF executable with no symbol table at all: -ENODATA. */
static void test_no_symbols(void **state)
{
	char path[] = "/tmp/test_elfsym_XXXXXX";
	struct elf_funcs f = { 0 };
	GElf_Ehdr ehdr;
	Elf *elf;
	int fd;

	(void)state;
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	assert_non_null(elf);
	assert_non_null(gelf_newehdr(elf, ELFCLASS64));
	assert_non_null(gelf_getehdr(elf, &ehdr));
	ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
	ehdr.e_type = ET_DYN;
	ehdr.e_machine = EM_X86_64;
	ehdr.e_version = EV_CURRENT;
	assert_true(gelf_update_ehdr(elf, &ehdr));
	assert_true(elf_update(elf, ELF_C_WRITE) > 0);
	elf_end(elf);
	close(fd);

	assert_int_equal(elfsym__read(path, &f), -ENODATA);
	unlink(path);
	assert_null(f.v);
}

static void test_startup_glue(void **state)
{
	(void)state;
	assert_true(elfsym__is_startup_glue("_start"));
	assert_true(elfsym__is_startup_glue("_init"));
	assert_true(elfsym__is_startup_glue("_fini"));
	assert_true(elfsym__is_startup_glue("frame_dummy"));
	assert_true(elfsym__is_startup_glue("register_tm_clones"));
	assert_true(elfsym__is_startup_glue("deregister_tm_clones"));
	assert_true(elfsym__is_startup_glue("__do_global_dtors_aux"));
	assert_true(elfsym__is_startup_glue("__libc_csu_init"));
	assert_true(elfsym__is_startup_glue("__libc_csu_fini"));
	assert_true(elfsym__is_startup_glue("_dl_relocate_static_pie"));
	assert_true(elfsym__is_startup_glue("__x86.get_pc_thunk.bx"));
	assert_false(elfsym__is_startup_glue("main"));
	assert_false(elfsym__is_startup_glue("_start_server"));
	assert_false(elfsym__is_startup_glue("start"));
	assert_false(elfsym__is_startup_glue(""));
	assert_false(elfsym__is_startup_glue(NULL));
}

static void test_match(void **state)
{
	(void)state;
	assert_true(elfsym__match("ma*", "main"));
	assert_true(elfsym__match("*", "anything"));
	assert_true(elfsym__match("[a-c]x", "bx"));
	assert_false(elfsym__match("[a-c]x", "dx"));
	assert_true(elfsym__match("http_?et", "http_get"));
	assert_false(elfsym__match("http_*", "xhttp_get"));
	assert_false(elfsym__match("ma*", "Main"));	/* case matters */
	assert_true(elfsym__match("std::vector<*>::*", "std::vector<int>::push_back(int const&)"));
	assert_false(elfsym__match(NULL, "main"));
}

static void test_classify(void **state)
{
	static const uint8_t push_rbp[] = { 0x55, 0x48, 0x89, 0xe5 };
	static const uint8_t push_r15[] = { 0x41, 0x57, 0x41, 0x56 };
	static const uint8_t push_rex_w[] = { 0x48, 0x55 };	/* not the kernel's form */
	static const uint8_t nop1[] = { 0x90, 0xc3 };
	static const uint8_t nop4[] = { 0x0f, 0x1f, 0x40, 0x00 };
	static const uint8_t nop6[] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55 };
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };
	static const uint8_t mov[] = { 0x48, 0x89, 0xe5 };
	static const uint8_t sub_rsp[] = { 0x48, 0x83, 0xec, 0x08 };
	static const uint8_t ret[] = { 0xc3 };

	(void)state;
	assert_int_equal(elfsym__classify_insn(push_rbp, sizeof(push_rbp)), ELFSYM_INSN_PUSH);
	assert_int_equal(elfsym__classify_insn(push_r15, sizeof(push_r15)), ELFSYM_INSN_PUSH);
	assert_int_equal(elfsym__classify_insn(push_rex_w, sizeof(push_rex_w)), ELFSYM_INSN_OTHER);
	assert_int_equal(elfsym__classify_insn(nop1, sizeof(nop1)), ELFSYM_INSN_NOP);
	assert_int_equal(elfsym__classify_insn(nop4, sizeof(nop4)), ELFSYM_INSN_NOP);
	assert_int_equal(elfsym__classify_insn(nop6, sizeof(nop6)), ELFSYM_INSN_NOP);
	assert_int_equal(elfsym__classify_insn(nop5, sizeof(nop5)), ELFSYM_INSN_NOP5);
	/* only 4 of the 5 bytes belong to the function: not nop5 */
	assert_int_equal(elfsym__classify_insn(nop5, 4), ELFSYM_INSN_NOP);
	assert_int_equal(elfsym__classify_insn(endbr, sizeof(endbr)), ELFSYM_INSN_ENDBR64);
	assert_int_equal(elfsym__classify_insn(mov, sizeof(mov)), ELFSYM_INSN_MOV_RBP);
	assert_int_equal(elfsym__classify_insn(sub_rsp, sizeof(sub_rsp)), ELFSYM_INSN_OTHER);
	assert_int_equal(elfsym__classify_insn(ret, sizeof(ret)), ELFSYM_INSN_OTHER);
	assert_int_equal(elfsym__classify_insn(ret, 0), ELFSYM_INSN_OTHER);
	{
		/* AVX encodings: the kernel mis-decodes them at a probe */
		static const uint8_t vex2[] = { 0xc5, 0xf9, 0x6e, 0xce };	/* vmovd %esi,%xmm1 */
		static const uint8_t vex3[] = { 0xc4, 0xe2, 0x7d, 0x78, 0xd1 };	/* vpbroadcastb */
		static const uint8_t evex[] = { 0x62, 0xe2, 0x7d, 0x48, 0x7a, 0xc6 };	/* vpbroadcastb %esi,%zmm16 */
		static const uint8_t sse[] = { 0x66, 0x0f, 0x6e, 0xc6 };	/* movd %esi,%xmm0 */

		assert_int_equal(elfsym__classify_insn(vex2, sizeof(vex2)), ELFSYM_INSN_REFUSED);
		assert_int_equal(elfsym__classify_insn(vex3, sizeof(vex3)), ELFSYM_INSN_REFUSED);
		assert_int_equal(elfsym__classify_insn(evex, sizeof(evex)), ELFSYM_INSN_REFUSED);
		assert_int_equal(elfsym__classify_insn(sse, sizeof(sse)), ELFSYM_INSN_OTHER);
	}

	assert_string_equal(elfsym__insn_name(ELFSYM_INSN_PUSH), "push");
	assert_string_equal(elfsym__insn_name(ELFSYM_INSN_NOP), "nop");
	assert_string_equal(elfsym__insn_name(ELFSYM_INSN_NOP5), "nop5");
	assert_string_equal(elfsym__insn_name(ELFSYM_INSN_ENDBR64), "endbr64");
	assert_string_equal(elfsym__insn_name(ELFSYM_INSN_MOV_RBP), "mov");
	assert_string_equal(elfsym__insn_name(ELFSYM_INSN_OTHER), "other");
	assert_string_equal(elfsym__insn_name(99), "other");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_exe),
		cmocka_unit_test(test_self_aliases),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_libstdcxx_demangle),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_eacces),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_no_symbols),
		cmocka_unit_test(test_many_aliases),
		cmocka_unit_test(test_startup_glue),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_classify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
