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
#include <sys/stat.h>
#include <zlib.h>
#include "binfile.h"
#include "debugsyms.h"
#include "debuginfod.h"
#include "base/log.h"
#include "base/util.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

/*
 * Limits on what a debug source may cost: they are the file owner's to
 * shape, read by root, often while a traced process is held at a dlopen.
 * A debuglink'd file is checked by its CRC only when there is no build-id
 * to compare, and distributions' debug files (found by build-id) are never
 * CRC'd, so 1 GiB leaves room for any real one and bounds a sparse decoy
 * (3 GiB cost 13 s of CPU and 3 GB); the file is read in chunks with
 * pread (an mmap of a file its owner truncates meanwhile is a SIGBUS).
 * The hold limit (capture/holdlimit.c) bounds the rest.  MiniDebugInfo holds the
 * symbol table of a file's local functions: a few MB decompressed for the
 * largest libraries; the decoder gets the memory of xz -9 and no more.
 */
#define DEBUGLINK_CRC_MAX	(1ull << 30)
#define CRC_CHUNK		(1u << 20)
#define MINIDEBUG_OUT_MAX	(64u << 20)
#define MINIDEBUG_MEMLIMIT	(96u << 20)

struct cache_ent {
	/*
	 * The file the names are for: its build-id ("" none) and its identity
	 * (device, inode, size, mtime, ctime), whatever path it was opened by
	 * (each pin of a file is another /proc/self/fd/N).  Not the build-id alone: a
	 * user's file carrying the build-id of another must not lend that one
	 * the names (and so the probe offsets) its own sections claim.  NULL:
	 * an image in memory, never shared.
	 */
	char *key;
	struct debug_names *names;	/* NULL: no source has names for it */
};

static char **dirs;
static size_t ndirs;
static struct cache_ent *cache;
static size_t ncache;

static void forget_dirs(void)
{
	size_t i;

	for (i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	dirs = NULL;
	ndirs = 0;
}

void debugsyms__configure(const struct debug_conf *conf)
{
	size_t i;

	forget_dirs();
	if (conf && conf->ndirs) {
		dirs = xcalloc(conf->ndirs, sizeof(*dirs));
		for (i = 0; i < conf->ndirs; i++)
			dirs[i] = xstrdup(conf->dirs[i]);
		ndirs = conf->ndirs;
	}
	debuginfod__setup(conf ? conf->debuginfod : NULL, conf ? conf->debuginfod_ms : 0);
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

	forget_dirs();
	debuginfod__reset();
	for (i = 0; i < ncache; i++) {
		free(cache[i].key);	/* (NULL for an image in memory) */
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
	case SYMSRC_DEBUGINFOD:
		return "debuginfod";
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
 * zlib's CRC-32 of the regular file fd of st->st_size bytes, read with pread
 * (crc32_z: 64-bit lengths).  0, -EFBIG (over DEBUGLINK_CRC_MAX) or -EIO
 * (shorter than it was: changed while read).
 */
static int file_crc(int fd, const struct stat *st, uint32_t *out)
{
	uint64_t size = (uint64_t)st->st_size, off = 0;
	uLong c = crc32_z(0, Z_NULL, 0);
	uint8_t *buf;
	int err = 0;

	if (size > DEBUGLINK_CRC_MAX)
		return -EFBIG;
	buf = xmalloc(CRC_CHUNK);
	while (off < size) {
		size_t want = size - off < CRC_CHUNK ? (size_t)(size - off) : CRC_CHUNK;
		ssize_t got = pread(fd, buf, want, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = -EIO;
			break;
		}
		c = crc32_z(c, buf, (z_size_t)got);
		off += (uint64_t)got;
	}
	free(buf);
	*out = (uint32_t)c;
	return err;
}

/*
 * Opens `file` as the debug file of a file with build-id `want` ("" none) or,
 * without build-ids on both sides, debuglink CRC `crc`; returns its symbols.
 * Read with pread (ELF_C_READ), never mapped: the file may be truncated by
 * its owner while it is read, which must end in "not used", not a SIGBUS.
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
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	debugsyms__build_id(elf, have, sizeof(have));
	if (*want && *have) {
		if (strcmp(want, have)) {
			p_dbg("%s: build-id %s, not the %s looked for: not used", file, have, want);
			goto out;
		}
	} else if (check_crc) {
		uint32_t c;
		int err = file_crc(fd, &st, &c);

		if (err == -EFBIG) {
			p_warn("%s: a debug file of %llu MiB, over the %llu MiB whose CRC is checked: "
			       "not used", file, (unsigned long long)st.st_size >> 20,
			       DEBUGLINK_CRC_MAX >> 20);
			goto out;
		}
		if (err) {
			p_warn("%s: debug file changed while read: not used", file);
			goto out;
		}
		if (c != crc) {
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

/*
 * The debug file of `path` (the module's path on the recording's host) by
 * its name, for symbolize: in each debug dir DIR/PATH.debug (the
 * /usr/lib/debug/usr/bin/x.debug layout), DIR/NAME.debug and DIR/NAME (an
 * `objcopy --only-keep-debug` output, an unstripped copy).  Only a file of
 * the same build-id is used.
 */
static struct debug_names *by_path(const char *id, const char *path)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char file[PATH_MAX * 2];
	struct debug_names *dn = NULL;

	if (!*name || !*id)
		return NULL;
	for (size_t i = 0; !dn && i < 3 * (ndirs + 1); i++) {
		const char *dir = dir_at(i / 3);

		if (i % 3 == 0 && path[0] == '/')
			snprintf(file, sizeof(file), "%s%s.debug", dir, path);
		else if (i % 3 == 1)
			snprintf(file, sizeof(file), "%s/%s.debug", dir, name);
		else if (i % 3 == 2)
			snprintf(file, sizeof(file), "%s/%s", dir, name);
		else
			continue;
		dn = try_debug_file(file, id, false, 0, SYMSRC_BUILDID);
	}
	return dn;
}

/* The debug file a debuginfod server has for build-id id: the last source. */
static struct debug_names *by_debuginfod(const char *id, const char *what)
{
	struct debug_names *dn;
	char *file = debuginfod__fetch(id, what);

	if (!file)
		return NULL;
	dn = try_debug_file(file, id, false, 0, SYMSRC_DEBUGINFOD);
	if (!dn)
		p_warn("%s: the debug file debuginfod gave for %s has no function names: not used",
		       file, what);
	free(file);
	return dn;
}

const struct debug_names *debugsyms__by_build_id(const char *id, const char *what)
{
	char key[128];
	struct debug_names *dn;
	size_t i;

	snprintf(key, sizeof(key), "id:%s", id);
	for (i = 0; i < ncache; i++)
		if (cache[i].key && !strcmp(cache[i].key, key))
			return cache[i].names;
	dn = by_build_id(id);
	if (!dn && what)
		dn = by_path(id, what);
	if (!dn && strlen(id) >= 3)
		dn = by_debuginfod(id, what);
	cache = xrealloc(cache, (ncache + 1) * sizeof(*cache));
	cache[ncache].key = xstrdup(key);
	cache[ncache++].names = dn;
	return dn;
}

/* .gnu_debugdata: an xz stream holding a small ELF file with a .symtab. */
static struct debug_names *minidebuginfo(Elf *elf, const char *name)
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
	if (lzma_stream_decoder(&strm, MINIDEBUG_MEMLIMIT, 0) != LZMA_OK)
		return NULL;
	strm.next_in = data->d_buf;
	strm.avail_in = data->d_size;
	do {
		if (strm.avail_out == 0) {
			size_t used = cap;

			if (cap >= MINIDEBUG_OUT_MAX)
				break;	/* not a symbol table any more */
			cap = cap ? cap * 2 : data->d_size * 4 + 4096;
			if (cap > MINIDEBUG_OUT_MAX)
				cap = MINIDEBUG_OUT_MAX;
			buf = xrealloc(buf, cap);
			strm.next_out = buf + used;
			strm.avail_out = cap - used;
		}
		ret = lzma_code(&strm, LZMA_FINISH);
	} while (ret == LZMA_OK);
	if (ret == LZMA_OK)
		p_warn(".gnu_debugdata of %s expands past %u MiB: not used", name,
		       MINIDEBUG_OUT_MAX >> 20);
	else if (ret == LZMA_MEMLIMIT_ERROR)
		p_warn(".gnu_debugdata of %s needs over %u MiB to decompress: not used", name,
		       MINIDEBUG_MEMLIMIT >> 20);
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
	/* nfunc (entryoff, funcoff) pairs and the end entryoff after them */
	if (pcln > len || len - pcln < 4 || nfunc > (len - pcln - 4) / 8 || nameoff > len)
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

const struct debug_names *debugsyms__names(const char *path, Elf *elf, const struct stat *st)
{
	struct debug_names *dn = NULL;
	char id[96], key[256];
	const char *name = binfile__name(path);	/* beside the file, not its /proc/self/fd */
	size_t i;

	debugsyms__build_id(elf, id, sizeof(id));
	/* (ctime too: the owner can set mtime back after a write, not ctime) */
	if (st)
		snprintf(key, sizeof(key), "%s:%llu:%llu:%lld:%lld.%09ld:%lld.%09ld", id,
			 (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
			 (long long)st->st_size, (long long)st->st_mtim.tv_sec,
			 (long)st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec,
			 (long)st->st_ctim.tv_nsec);
	for (i = 0; st && i < ncache; i++)
		if (cache[i].key && !strcmp(cache[i].key, key))
			return cache[i].names;
	if (*id)
		dn = by_build_id(id);
	if (!dn)
		dn = by_debuglink(name, elf, id);
	if (!dn)
		dn = minidebuginfo(elf, name);
	if (!dn)
		dn = gopclntab(elf);
	/* last: the network, for a file nothing local names (st: a file, not a fuzz image) */
	if (!dn && *id && st)
		dn = by_debuginfod(id, name);
	cache = xrealloc(cache, (ncache + 1) * sizeof(*cache));
	cache[ncache].key = st ? xstrdup(key) : NULL;
	cache[ncache++].names = dn;
	return dn;
}
