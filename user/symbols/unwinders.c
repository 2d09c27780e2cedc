// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The exception unwinder's entry points, hooked for C++ exceptions
 * (select.h: select__unwinders; see "C++ exceptions" in docs/): in the
 * program itself when it links the unwinder in, and in libgcc_s when the
 * program uses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "binfile.h"
#include "elfsym.h"
#include "libpaths.h"
#include "select.h"
#include "base/log.h"
#include "base/util.h"

static const char *const unwinder_syms[] = {
	"_Unwind_RaiseException", "_Unwind_Resume", "_Unwind_ForcedUnwind",
	"_Unwind_Resume_or_Rethrow", "_Unwind_Backtrace", NULL,
};

static bool is_elf(const char *path)
{
	return file_has_magic(path, "\177ELF", 4);
}

static void add_unwinder_module(const char *path, struct probe_set *out)
{
	struct elf_funcs syms = { 0 };
	struct probe_module pm = { 0 };
	size_t i, j;

	if (!is_elf(path) || elfsym__read(path, &syms))
		return;
	pm.offsets = xcalloc(sizeof(unwinder_syms) / sizeof(unwinder_syms[0]), sizeof(*pm.offsets));
	for (i = 0; i < syms.n; i++)
		for (j = 0; unwinder_syms[j]; j++)
			if (elfsym__func_matches(&syms.v[i], unwinder_syms[j])) {
				pm.offsets[pm.n++] = syms.v[i].offset;
				break;	/* once per function, whatever its names */
			}
	elfsym__free(&syms);
	if (!pm.n) {
		free(pm.offsets);
		return;
	}
	pm.path = xstrdup(path);
	binfile__ref(pm.path);	/* held while bpfprof runs */
	out->mods = xrealloc(out->mods, (out->nmods + 1) * sizeof(*out->mods));
	out->mods[out->nmods++] = pm;
	out->nfuncs += pm.n;
}

/*
 * Does the program use the exception unwinder at all: C++ or libgcc_s among
 * its direct dependencies (a plain C program gains nothing from the hook but
 * its attach and detach time)?  A running process (attach) is asked through
 * its mappings instead.
 */
static bool needs_unwinder(const char *exe, pid_t pid)
{
	Elf_Scn *scn = NULL;
	bool need = false;
	Elf *elf;
	int fd;

	if (pid > 0) {
		char **paths = NULL;
		size_t n = 0, i;

		libpaths__scan_maps(pid, "libgcc_s.so*", &paths, &n);
		for (i = 0; i < n; i++) {
			binfile__unpin(paths[i]);
			free(paths[i]);
		}
		free(paths);
		if (n)
			return true;
	}
	fd = open_binary(exe, NULL);
	if (fd < 0)
		return true;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !need && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 16); i++) {
			GElf_Dyn dyn;
			const char *name;

			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (name && (strstr(name, "libstdc++") || strstr(name, "libgcc_s") ||
				     strstr(name, "libc++")))
				need = true;
		}
	}
	if (!elf)
		need = true;	/* cannot tell: hook it */
	elf_end(elf);
	close(fd);
	return need;
}

void select__unwinders(const char *exe, pid_t pid, struct probe_set *out)
{
	char **paths = NULL;
	size_t npaths = 0, i;
	const char *src;

	memset(out, 0, sizeof(*out));
	if (!binfile__pin(exe, pid, &src)) {	/* the descriptor its functions were read from */
		add_unwinder_module(src, out);
		binfile__unpin(src);
	}
	if (!needs_unwinder(exe, pid))
		return;
	libpaths__resolve("libgcc_s.so*", NULL, pid, &paths, &npaths);
	for (i = 0; i < npaths; i++) {
		add_unwinder_module(paths[i], out);
		binfile__unpin(paths[i]);
		free(paths[i]);
	}
	free(paths);
}
