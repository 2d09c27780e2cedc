// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Functions from .eh_frame: the starts come from .eh_frame_hdr's binary
 * search table (the linker's sorted index of every FDE), everything else
 * from libdw, which decodes the FDEs and runs their CFA programs.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include "ehframe.h"
#include "base/log.h"

/* DW_EH_PE_* pointer encodings (LSB, "Exception Frames"): format in the low nibble. */
#define PE_FMT(e)	((e) & 0x0f)
#define PE_APP(e)	((e) & 0x70)
#define PE_PCREL	0x10
#define PE_DATAREL	0x30

/*
 * Reads one encoded pointer at p (vaddr `at`, `left` bytes there); `data` is
 * the base of datarel values (the start of .eh_frame_hdr).  Fixed-size
 * formats only: linkers write nothing else into .eh_frame_hdr.
 */
static int read_enc(const uint8_t *p, size_t left, uint8_t enc, uint64_t at, uint64_t data,
		    uint64_t *val, size_t *len)
{
	uint64_t v = 0;
	size_t n;

	switch (PE_FMT(enc)) {
	case 0x00:	/* absptr: 8 bytes on a 64-bit file */
	case 0x04:	/* udata8 */
	case 0x0c:	/* sdata8 */
		n = 8;
		break;
	case 0x03:	/* udata4 */
	case 0x0b:	/* sdata4 */
		n = 4;
		break;
	case 0x02:	/* udata2 */
	case 0x0a:	/* sdata2 */
		n = 2;
		break;
	default:
		return -1;
	}
	if (left < n)
		return -1;
	memcpy(&v, p, n);	/* little-endian file on a little-endian host (x86-64 only) */
	if (PE_FMT(enc) == 0x0b)
		v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	else if (PE_FMT(enc) == 0x0a)
		v = (uint64_t)(int64_t)(int16_t)(uint16_t)v;
	if (PE_APP(enc) == PE_PCREL)
		v += at;
	else if (PE_APP(enc) == PE_DATAREL)
		v += data;
	else if (PE_APP(enc))
		return -1;
	*val = v;
	*len = n;
	return 0;
}

/*
 * Is `start` a function entry by its CFI: CFA = rsp + 8 (DWARF register 7)
 * and the return address saved at CFA - 8?  That is the state right after a
 * call; a cold fragment or a mid-function FDE starts with another CFA, and
 * _start marks its return address undefined.
 */
static bool entry_state(Dwarf_CFI *cfi, uint64_t start)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops, mem[3];
	Dwarf_Addr s, e;
	size_t nops;
	bool signal = false, ok = false;
	int ra;

	if (dwarf_cfi_addrframe(cfi, start, &frame) || !frame)
		return false;
	/* (s, e) is the range of the first row of the CFA table, not of the FDE) */
	ra = dwarf_frame_info(frame, &s, &e, &signal);
	if (ra < 0 || s != start || signal)
		goto out;
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    ops[0].number != 7 || ops[0].number2 != 8)
		goto out;
	/* offset(-8): libdw says "the CFA, plus -8", a memory location */
	if (dwarf_frame_register(frame, ra, mem, &ops, &nops) || nops != 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst ||
	    (int64_t)ops[1].number != -8)
		goto out;
	ok = true;
out:
	free(frame);
	return ok;
}

/* Skips a LEB128 number; false past `end`. */
static bool skip_leb(const uint8_t **p, const uint8_t *end)
{
	while (*p < end)
		if (!(*(*p)++ & 0x80))
			return true;
	return false;
}

/*
 * The pointer encoding of the FDEs of a CIE: its 'R' augmentation (after a
 * 'P' personality pointer and an 'L' LSDA encoding, in string order),
 * DW_EH_PE_absptr without one.  -1: an augmentation not understood.
 */
static int cie_fde_encoding(const Dwarf_CIE *cie)
{
	const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
	const char *a = cie->augmentation;
	uint64_t v;
	size_t len;

	if (!a || a[0] != 'z')
		return a && !a[0] ? 0 : -1;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			return p < end ? *p : -1;
		case 'L':
			p++;
			break;
		case 'P':
			if (p >= end)
				return -1;
			if (PE_FMT(*p) == 0x01 || PE_FMT(*p) == 0x09) {	/* (s)uleb128 */
				p++;
				if (!skip_leb(&p, end))
					return -1;
			} else if (read_enc(p + 1, end - p - 1, *p & 0x0f, 0, 0, &v, &len)) {
				return -1;
			} else {
				p += 1 + len;
			}
			break;
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return -1;
		}
	}
	return 0;
}

struct cie_cache {
	Dwarf_Off off;
	int enc;
};

/* The FDE encoding of the CIE at `off` (looked up once per CIE: a file has a handful). */
static int fde_encoding(Elf *elf, Elf_Data *data, Dwarf_Off off, struct cie_cache **cache,
			size_t *ncache)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	size_t i;
	int enc = -1;

	for (i = 0; i < *ncache; i++)
		if ((*cache)[i].off == off)
			return (*cache)[i].enc;
	if (dwarf_next_cfi((const unsigned char *)elf_getident(elf, NULL), data, true, off, &next,
			   &e) == 0 && dwarf_cfi_cie_p(&e))
		enc = cie_fde_encoding(&e.cie);
	*cache = xrealloc(*cache, (*ncache + 1) * sizeof(**cache));
	(*cache)[*ncache].off = off;
	(*cache)[(*ncache)++].enc = enc;
	return enc;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void ehframe__funcs(Elf *elf, struct fde_range **out, size_t *n)
{
	struct cie_cache *cies = NULL;
	Elf_Scn *scn = NULL, *eh = NULL;
	size_t shstrndx, ncies = 0, cap = 0;
	const unsigned char *ident;
	Dwarf_Off off = 0, next;
	Dwarf_CFI *cfi = NULL;
	Elf_Data *data;
	GElf_Ehdr ehdr;
	GElf_Shdr sh;

	*out = NULL;
	*n = 0;
	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame")) {
			eh = scn;
			break;
		}
	}
	data = eh ? elf_rawdata(eh, NULL) : NULL;
	ident = (const unsigned char *)elf_getident(elf, NULL);
	if (!data || !data->d_size || !ident)
		return;
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi)
		return;
	for (;;) {
		Dwarf_CFI_Entry e;
		const uint8_t *p;
		uint64_t start, range;
		size_t len, len2;
		int enc, ret;

		ret = dwarf_next_cfi(ident, data, true, off, &next, &e);
		if (ret > 0)
			break;
		if (ret < 0) {
			if (next == (Dwarf_Off)-1 || next <= off)
				break;
			off = next;	/* a bad entry that can be skipped */
			continue;
		}
		if (dwarf_cfi_cie_p(&e) ||
		    (enc = fde_encoding(elf, data, e.fde.CIE_pointer, &cies, &ncies)) < 0)
			goto skip;
		p = e.fde.start;
		if (read_enc(p, e.fde.end - p, enc, sh.sh_addr + (p - (const uint8_t *)data->d_buf),
			     0, &start, &len) ||
		    read_enc(p + len, e.fde.end - p - len, enc & 0x0f, 0, 0, &range, &len2) ||
		    !start || !range || start + range < start)
			goto skip;	/* (a range past the end of the address space: no function) */
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[*n].start = start;
		(*out)[*n].entry = entry_state(cfi, start);
		(*out)[(*n)++].end = start + range;
skip:
		if (next <= off)
			break;
		off = next;
	}
	dwarf_cfi_end(cfi);
	free(cies);
	if (*n)
		qsort(*out, *n, sizeof(**out), range_cmp);
}
