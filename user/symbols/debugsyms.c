// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Debug symbol sources for stripped files (see debugsyms.h): libelf reads
 * every ELF involved, liblzma decompresses MiniDebugInfo, zlib's crc32
 * checks a debuglink'd file; Go's pclntab is walked here (no C library
 * reads it).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>
#include "binfile.h"
#include "debugsyms.h"
#include "base/log.h"
#include "base/util.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

struct cache_ent {
	char *key;			/* build-id, or path+size+mtime for a file without one */
	struct debug_names *names;	/* NULL: no source has names for it */
};

static char **dirs;
static size_t ndirs;
static struct cache_ent *cache;
static size_t ncache;

void debugsyms__add_dir(const char *dir)
{
	dirs = xrealloc(dirs, (ndirs + 1) * sizeof(*dirs));
	dirs[ndirs++] = xstrdup(dir);
}

char *debugsyms__search_path(void)
{
	size_t i, len = strlen(SYSTEM_DEBUG_DIR) + 2;
	char *p;

	for (i = 0; i < ndirs; i++)
		len += strlen(dirs[i]) + 1;
	p = xcalloc(1, len);
	for (i = 0; i < ndirs; i++) {
		/* libdwfl splits at ':' and searches only absolute entries by build-id */
		if (dirs[i][0] != '/' || strchr(dirs[i], ':'))
			continue;
		strcat(p, ":");
		strcat(p, dirs[i]);
	}
	strcat(p, ":" SYSTEM_DEBUG_DIR);
	return p;
}

static void names_free(struct debug_names *dn)
{
	size_t i;

	if (!dn)
		return;
	for (i = 0; i < dn->n; i++)
		free(dn->v[i].name);
	free(dn->v);
	free(dn->file);
	free(dn);
}

void debugsyms__reset(void)
{
	size_t i;

	for (i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	dirs = NULL;
	ndirs = 0;
	for (i = 0; i < ncache; i++) {
		free(cache[i].key);
		names_free(cache[i].names);
	}
	free(cache);
	cache = NULL;
	ncache = 0;
}

const char *debugsyms__source_name(uint32_t source)
{
	switch (source) {
	case SYMSRC_SYMTAB:
		return "symtab";
	case SYMSRC_DYNSYM:
		return "dynsym";
	case SYMSRC_BUILDID:
		return "build-id";
	case SYMSRC_DEBUGLINK:
		return "debuglink";
	case SYMSRC_MINIDEBUG:
		return "minidebuginfo";
	case SYMSRC_GOPCLNTAB:
		return "gopclntab";
	case SYMSRC_EHFRAME:
		return "eh_frame";
	default:
		return "-";
	}
}

static void hex(const uint8_t *p, size_t n, char *buf, size_t size)
{
	size_t i;

	buf[0] = 0;
	for (i = 0; i < n && 2 * i + 2 < size; i++)
		snprintf(buf + 2 * i, 3, "%02x", p[i]);
}

/* The build-id note in one block of notes; true when found. */
static bool note_build_id(Elf_Data *data, char *buf, size_t size)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz) {
			hex((uint8_t *)data->d_buf + desc_off, nh.n_descsz, buf, size);
			return true;
		}
	}
	return false;
}

void debugsyms__build_id(Elf *elf, char *buf, size_t size)
{
	Elf_Scn *scn = NULL;
	size_t phnum, i;
	GElf_Shdr sh;
	GElf_Phdr ph;

	buf[0] = 0;
	/* sections first: a debug file keeps its notes there, its PT_NOTE may point anywhere */
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    note_build_id(elf_getdata(scn, NULL), buf, size))
			return;
	if (elf_getphdrnum(elf, &phnum))
		return;
	for (i = 0; i < phnum; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_NOTE &&
		    note_build_id(elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR),
				  buf, size))
			return;
}

static Elf_Scn *find_section(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

static void add_sym(struct debug_names *dn, size_t *cap, uint64_t addr, uint64_t size,
		    const char *name, uint8_t type, uint8_t bind)
{
	if (dn->n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		dn->v = xrealloc(dn->v, *cap * sizeof(*dn->v));
	}
	dn->v[dn->n].addr = addr;
	dn->v[dn->n].size = size;
	dn->v[dn->n].name = xstrdup(name);
	dn->v[dn->n].type = type;
	dn->v[dn->n].bind = bind;
	dn->n++;
}

/* The defined functions of elf's .symtab; NULL when it has none. */
static struct debug_names *read_symtab(Elf *elf, uint32_t source)
{
	struct debug_names *dn;
	Elf_Scn *scn = NULL;
	size_t i, cap = 0;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			break;
	if (!scn || !sh.sh_entsize)
		return NULL;
	dn = xcalloc(1, sizeof(*dn));
	dn->source = source;
	for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		Elf_Data *data = elf_getdata(scn, NULL);
		const char *name;
		GElf_Sym sym;
		int type;

		if (!data || !gelf_getsym(data, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		/* NOTYPE: assembly labels such as ld.so's _start (elfsym names samples by them) */
		if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || !sym.st_value ||
		    (type == STT_NOTYPE && sym.st_size))
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		add_sym(dn, &cap, sym.st_value, sym.st_size, name, type, GELF_ST_BIND(sym.st_info));
	}
	if (!dn->n) {
		names_free(dn);
		return NULL;
	}
	return dn;
}

/*
 * Opens `file` as the debug file of a file with build-id `want` ("" none) or,
 * without build-ids on both sides, debuglink CRC `crc`; returns its symbols.
 */
static struct debug_names *try_debug_file(const char *file, const char *want, bool check_crc,
					  uint32_t crc, uint32_t source)
{
	struct debug_names *dn = NULL;
	char have[96];
	struct stat st;
	Elf *elf = NULL;
	int fd;

	/*
	 * Never blocks (a debug link can name a FIFO the file's owner put beside
	 * it: a plain open() waited forever for its writer), regular files only.
	 */
	fd = open_binary(file, &st);
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	debugsyms__build_id(elf, have, sizeof(have));
	if (*want && *have) {
		if (strcmp(want, have)) {
			p_dbg("%s: build-id %s, not the %s looked for: not used", file, have, want);
			goto out;
		}
	} else if (check_crc) {
		void *map = st.st_size ? mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) :
					 MAP_FAILED;
		uLong c;

		if (map == MAP_FAILED)
			goto out;
		c = crc32(0, map, st.st_size);
		munmap(map, st.st_size);
		if ((uint32_t)c != crc) {
			p_dbg("%s: CRC %#x, not the debuglink's %#x: not used", file, (unsigned)c,
			      (unsigned)crc);
			goto out;
		}
	} else {
		goto out;	/* nothing ties it to the file */
	}
	dn = read_symtab(elf, source);
	if (dn) {
		dn->file = xstrdup(file);
		p_dbg("names from %s (%zu functions)", file, dn->n);
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return dn;
}

static const char *dir_at(size_t i)
{
	return i < ndirs ? dirs[i] : SYSTEM_DEBUG_DIR;
}

static struct debug_names *by_build_id(const char *id)
{
	char file[PATH_MAX];
	size_t i;

	if (strlen(id) < 3)
		return NULL;
	for (i = 0; i <= ndirs; i++) {
		struct debug_names *dn;

		snprintf(file, sizeof(file), "%s/.build-id/%.2s/%s.debug", dir_at(i), id, id + 2);
		dn = try_debug_file(file, id, false, 0, SYMSRC_BUILDID);
		if (dn)
			return dn;
	}
	return NULL;
}

static struct debug_names *by_debuglink(const char *path, Elf *elf, const char *id)
{
	char dir[PATH_MAX], file[PATH_MAX * 2], *slash;
	const char *link, *indir = dir;
	struct debug_names *dn = NULL;
	Elf_Scn *scn = find_section(elf, ".gnu_debuglink");
	Elf_Data *data;
	uint32_t crc;
	size_t len, i;

	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_size)
		return NULL;
	link = data->d_buf;
	len = strnlen(link, data->d_size);
	if (len == data->d_size || ((len + 4) & ~3ul) + 4 > data->d_size || strchr(link, '/'))
		return NULL;
	memcpy(&crc, (const char *)data->d_buf + ((len + 4) & ~3ul), 4);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	/* a file seen through /proc/PID/root: the debug dirs are searched for its own path */
	if (!strncmp(dir, "/proc/", 6) && (slash = strstr(dir, "/root/")))
		indir = slash + 5;
	for (i = 0; !dn && i < 2 * (ndirs + 1) + 2; i++) {
		if (i == 0)
			snprintf(file, sizeof(file), "%s/%s", dir, link);
		else if (i == 1)
			snprintf(file, sizeof(file), "%s/.debug/%s", dir, link);
		else if (i % 2 == 0)
			snprintf(file, sizeof(file), "%s%s/%s", dir_at((i - 2) / 2), indir, link);
		else
			snprintf(file, sizeof(file), "%s/%s", dir_at((i - 2) / 2), link);
		if (!strcmp(file, path))
			continue;
		dn = try_debug_file(file, id, true, crc, SYMSRC_DEBUGLINK);
	}
	return dn;
}

/* .gnu_debugdata: an xz stream holding a small ELF file with a .symtab. */
static struct debug_names *minidebuginfo(Elf *elf)
{
	Elf_Scn *scn = find_section(elf, ".gnu_debugdata");
	lzma_stream strm = LZMA_STREAM_INIT;
	struct debug_names *dn = NULL;
	uint8_t *buf = NULL;
	size_t cap = 0;
	Elf_Data *data;
	Elf *mini;
	lzma_ret ret;

	data = scn ? elf_rawdata(scn, NULL) : NULL;
	if (!data || !data->d_size)
		return NULL;
	if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK)
		return NULL;
	strm.next_in = data->d_buf;
	strm.avail_in = data->d_size;
	do {
		if (strm.avail_out == 0) {
			size_t used = cap - strm.avail_out;

			if (cap >= (256u << 20))
				break;	/* not a symbol table any more */
			cap = cap ? cap * 2 : data->d_size * 4 + 4096;
			buf = xrealloc(buf, cap);
			strm.next_out = buf + used;
			strm.avail_out = cap - used;
		}
		ret = lzma_code(&strm, LZMA_FINISH);
	} while (ret == LZMA_OK);
	if (ret != LZMA_STREAM_END) {
		p_dbg(".gnu_debugdata: xz error %d", (int)ret);
		goto out;
	}
	mini = elf_memory((char *)buf, cap - strm.avail_out);
	if (mini) {
		dn = read_symtab(mini, SYMSRC_MINIDEBUG);
		elf_end(mini);
	}
out:
	lzma_end(&strm);
	free(buf);
	return dn;
}

static uint64_t get_uint(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	memcpy(&v, p, n);	/* little-endian (x86-64, arm64) */
	return v;
}

/*
 * Go 1.18+ pclntab (runtime/symtab.go: pcHeader): magic, 2 pad bytes, minLC,
 * ptrSize, then nfunc, nfiles, textStart, funcnameOffset, cuOffset,
 * filetabOffset, pctabOffset, pclnOffset (ptrSize each).  At pclnOffset:
 * nfunc (entryoff, funcoff) u32 pairs and the end entryoff; at pclnOffset +
 * funcoff a _func starting with entryoff u32, nameoff i32 (into funcnametab).
 */
static struct debug_names *gopclntab(Elf *elf)
{
	Elf_Scn *scn = find_section(elf, ".gopclntab"), *text = find_section(elf, ".text");
	struct debug_names *dn;
	uint64_t nfunc, textstart, nameoff, pcln, i;
	const uint8_t *p;
	size_t len, cap = 0;
	Elf_Data *data;
	uint32_t magic;
	unsigned ps;
	GElf_Shdr sh;

	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || data->d_size < 8 + 8 * 8)
		return NULL;
	p = data->d_buf;
	len = data->d_size;
	magic = get_uint(p, 4);
	ps = p[7];
	if ((magic != 0xfffffff0 && magic != 0xfffffff1) || (ps != 8 && ps != 4) ||
	    len < 8 + 8 * ps) {
		p_dbg(".gopclntab magic %#x: a Go release before 1.18, not read", (unsigned)magic);
		return NULL;
	}
	nfunc = get_uint(p + 8, ps);
	textstart = get_uint(p + 8 + 2 * ps, ps);
	nameoff = get_uint(p + 8 + 3 * ps, ps);
	pcln = get_uint(p + 8 + 7 * ps, ps);
	/* a PIE's textStart is relocated at run time: the file holds 0 */
	if (!textstart && text && gelf_getshdr(text, &sh))
		textstart = sh.sh_addr;
	if (pcln > len || nfunc > (len - pcln) / 8 || nameoff > len)
		return NULL;
	dn = xcalloc(1, sizeof(*dn));
	dn->source = SYMSRC_GOPCLNTAB;
	for (i = 0; i < nfunc; i++) {
		const uint8_t *ft = p + pcln + 8 * i;
		uint64_t entry = get_uint(ft, 4), next = get_uint(ft + 8, 4);
		uint64_t fo = pcln + get_uint(ft + 4, 4);
		int32_t no;
		const char *name;

		if (fo + 8 > len)
			continue;
		no = (int32_t)get_uint(p + fo + 4, 4);
		if (no < 0 || nameoff + no >= len || next <= entry)
			continue;
		name = (const char *)p + nameoff + no;
		if (!memchr(name, 0, len - nameoff - no))
			continue;
		add_sym(dn, &cap, textstart + entry, next - entry, name, STT_FUNC, STB_GLOBAL);
	}
	if (!dn->n) {
		names_free(dn);
		return NULL;
	}
	return dn;
}

const struct debug_names *debugsyms__names(const char *path, Elf *elf)
{
	struct debug_names *dn = NULL;
	char id[96], key[PATH_MAX + 64];
	struct stat st;
	size_t i;

	debugsyms__build_id(elf, id, sizeof(id));
	if (*id)
		snprintf(key, sizeof(key), "%s", id);
	else if (!stat(path, &st))
		snprintf(key, sizeof(key), "%s:%lld:%lld", path, (long long)st.st_size,
			 (long long)st.st_mtime);
	else
		snprintf(key, sizeof(key), "%s", path);
	for (i = 0; i < ncache; i++)
		if (!strcmp(cache[i].key, key))
			return cache[i].names;
	if (*id)
		dn = by_build_id(id);
	if (!dn)
		dn = by_debuglink(binfile__name(path), elf, id);	/* beside the file, not its /proc/self/fd */
	if (!dn)
		dn = minidebuginfo(elf);
	if (!dn)
		dn = gopclntab(elf);
	cache = xrealloc(cache, (ncache + 1) * sizeof(*cache));
	cache[ncache].key = xstrdup(key);
	cache[ncache++].names = dn;
	return dn;
}
