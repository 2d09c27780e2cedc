// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A function's typed signature from its DWARF subprogram: each parameter's
 * name, type and where the x86-64 System V calling convention puts it at
 * entry, and the return value's type and register.  The result is the text
 * form of model/argsig.h, so that the archive keeps it as one string.
 *
 * The classification follows the psABI in the cases C and C++ programs
 * meet: integer-class scalars in rdi..r9 then on the stack, floating
 * scalars in xmm0..7, aggregates of at most 16 bytes split in eightbytes
 * (INTEGER or SSE each), larger ones in memory (on the stack for a
 * parameter, through a hidden pointer in rdi for a return value).  Types
 * it cannot place (long double, a C++ class passed by invisible reference,
 * bit-fields) are marked unavailable rather than guessed.
 */
#include <dwarf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include "dwarfargs.h"
#include "model/argsig.h"
#include "base/log.h"
#include "base/util.h"

struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* A name or type name inside a field: the separators become spaces. */
static void sb_field(struct sbuf *b, const char *s)
{
	for (; s && *s; s++) {
		char c = *s == '\t' || *s == '\n' || *s == ',' || *s == ';' || *s == '=' ? ' ' : *s;

		sb_add(b, &c, 1);
	}
}

static bool type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

/* typedef, const, volatile, restrict, atomic: the type underneath. */
static bool peel(Dwarf_Die *t, Dwarf_Die *out)
{
	*out = *t;
	return dwarf_peel_type(t, out) == 0;
}

/* The C spelling of a type, enough to read (not a full declarator). */
static void type_name(Dwarf_Die *t, struct sbuf *b, int depth)
{
	Dwarf_Die sub;
	const char *n = dwarf_diename(t);
	int tag = dwarf_tag(t);

	if (depth > 8) {
		sb_str(b, "?");
		return;
	}
	switch (tag) {
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		if (!type_of(t, &sub)) {
			sb_str(b, "void");
			return;
		}
		sb_str(b, tag == DW_TAG_const_type ? "const " : "volatile ");
		type_name(&sub, b, depth + 1);
		return;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		if (type_of(t, &sub))
			type_name(&sub, b, depth + 1);
		else
			sb_str(b, "void");
		sb_str(b, tag == DW_TAG_pointer_type ? " *" :
			  tag == DW_TAG_reference_type ? " &" : " &&");
		return;
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		if (type_of(t, &sub))
			type_name(&sub, b, depth + 1);
		return;
	case DW_TAG_structure_type:
		sb_str(b, "struct ");
		break;
	case DW_TAG_union_type:
		sb_str(b, "union ");
		break;
	case DW_TAG_enumeration_type:
		sb_str(b, "enum ");
		break;
	case DW_TAG_subroutine_type:
		sb_str(b, "fn");
		return;
	default:
		break;
	}
	sb_field(b, n ? n : "?");
}

static int size_of(Dwarf_Die *t)
{
	Dwarf_Word sz;

	return dwarf_aggregate_size(t, &sz) == 0 && sz < (1u << 20) ? (int)sz : -1;
}

/* The argsig kind of a scalar type (already peeled), or 0 for an aggregate / unknown. */
static char scalar_kind(Dwarf_Die *t)
{
	Dwarf_Attribute a;
	Dwarf_Word enc;
	Dwarf_Die sub, p;

	switch (dwarf_tag(t)) {
	case DW_TAG_base_type:
		if (!dwarf_attr(t, DW_AT_encoding, &a) || dwarf_formudata(&a, &enc))
			return AS_UNKNOWN;
		switch (enc) {
		case DW_ATE_signed:
			return AS_INT;
		case DW_ATE_unsigned:
			return AS_UINT;
		case DW_ATE_boolean:
			return AS_BOOL;
		case DW_ATE_signed_char:
		case DW_ATE_unsigned_char:
			return size_of(t) == 1 ? AS_CHAR : AS_UINT;
		case DW_ATE_UTF:
			return AS_UINT;
		case DW_ATE_float:
			return AS_FLOAT;
		default:
			return AS_UNKNOWN;
		}
	case DW_TAG_enumeration_type:
		return AS_ENUM;
	case DW_TAG_pointer_type:
		/* char * (any qualifiers): a string */
		if (type_of(t, &sub) && peel(&sub, &p) && dwarf_tag(&p) == DW_TAG_base_type &&
		    size_of(&p) == 1 && scalar_kind(&p) == AS_CHAR)
			return AS_STR;
		return AS_PTR;
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		return AS_REF;
	case DW_TAG_ptr_to_member_type:
		return AS_PTR;
	default:
		return 0;
	}
}

/* The enumerators, "VALUE=NAME,..." */
static void enumerators(Dwarf_Die *t, struct sbuf *b)
{
	Dwarf_Die c;
	Dwarf_Attribute a;
	char num[32];
	int n = 0;

	if (dwarf_child(t, &c))
		return;
	do {
		Dwarf_Sword v;

		if (dwarf_tag(&c) != DW_TAG_enumerator || !dwarf_attr(&c, DW_AT_const_value, &a) ||
		    dwarf_formsdata(&a, &v))
			continue;
		if (n++ >= AS_MAX_ENUMS)
			break;
		snprintf(num, sizeof(num), "%s%lld=", n > 1 ? "," : "", (long long)v);
		sb_str(b, num);
		sb_field(b, dwarf_diename(&c));
	} while (dwarf_siblingof(&c, &c) == 0);
}

/*
 * An aggregate's members, "name,offset,size,kind;..." (scalars only; a
 * nested aggregate is shown as its bytes), and the class of each of its
 * eightbytes: sse[i] when every member in it is floating.  false when it
 * cannot be passed in registers (bit-fields, unaligned members).
 */
static bool members(Dwarf_Die *t, int size, struct sbuf *b, bool sse[2], int depth)
{
	bool has_int[2] = { false, false }, has_sse[2] = { false, false };
	Dwarf_Die c, mt, pt;
	Dwarf_Attribute a;
	Dwarf_Word off;
	char num[64];
	bool ok = true;
	int n = 0;

	if (dwarf_child(t, &c) == 0) {
		do {
			int msz;
			char k;

			if (dwarf_tag(&c) != DW_TAG_member)
				continue;
			if (dwarf_hasattr(&c, DW_AT_bit_size) || dwarf_hasattr(&c, DW_AT_data_bit_offset))
				ok = false;
			off = 0;
			if (dwarf_attr(&c, DW_AT_data_member_location, &a))
				dwarf_formudata(&a, &off);
			if (!type_of(&c, &mt) || !peel(&mt, &pt))
				return false;
			msz = size_of(&pt);
			if (msz < 0 || (int)off + msz > size)
				return false;
			k = scalar_kind(&pt);
			if (!k) {
				bool sub[2];

				/* a nested aggregate: classified with its own members */
				if (depth > 4 || !members(&pt, msz, NULL, sub, depth + 1))
					return false;
				for (int w = (int)off / 8; w <= ((int)off + msz - 1) / 8 && w < 2; w++) {
					has_sse[w] |= sub[w - (int)off / 8 < 2 ? w - (int)off / 8 : 1];
					has_int[w] |= !sub[w - (int)off / 8 < 2 ? w - (int)off / 8 : 1];
				}
				k = AS_UNKNOWN;
			} else if (off % (msz ? msz : 1) == 0 && off / 8 < 2) {
				if (k == AS_FLOAT && msz <= 8)
					has_sse[off / 8] = true;
				else
					has_int[off / 8] = true;
			} else {
				ok = false;
			}
			if (b) {
				snprintf(num, sizeof(num), "%s", n ? ";" : "");
				sb_str(b, num);
				sb_field(b, dwarf_diename(&c) ? dwarf_diename(&c) : "?");
				snprintf(num, sizeof(num), ",%u,%d,%c", (unsigned)off, msz, k);
				sb_str(b, num);
			}
			n++;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	for (int w = 0; w < 2; w++)
		sse[w] = has_sse[w] && !has_int[w];
	return ok;
}

struct place {
	int ints, sses, stack;	/* registers used so far, stack words used so far */
};

/* The location of `words` eightbytes of an aggregate in registers, or on the stack. */
static void place_words(struct place *pl, int words, const bool sse[2], bool in_regs,
			struct sbuf *loc)
{
	int need_int = 0, need_sse = 0;
	char t[16];

	for (int w = 0; in_regs && w < words; w++)
		sse[w] ? need_sse++ : need_int++;
	if (in_regs && pl->ints + need_int <= 6 && pl->sses + need_sse <= 8) {
		for (int w = 0; w < words; w++) {
			if (sse[w])
				snprintf(t, sizeof(t), "x%d", pl->sses++);
			else
				snprintf(t, sizeof(t), "r%d", pl->ints++);
			sb_str(loc, t);
		}
		return;
	}
	for (int w = 0; w < words; w++) {
		snprintf(t, sizeof(t), "k%d", pl->stack++);
		sb_str(loc, t);
	}
}

/*
 * One item: kind TAB size TAB loc TAB name TAB type TAB extra.  For a
 * parameter pl says which registers are taken; for the return value pl is
 * NULL and the location is a (rax), d (rdx), x0/x1, m (memory) or -.
 */
static void item(struct sbuf *b, Dwarf_Die *type, const char *name, struct place *pl)
{
	struct sbuf loc = { 0 }, extra = { 0 }, tn = { 0 };
	Dwarf_Die pt;
	char k = AS_VOID, num[32];
	int size = 0;

	if (type) {
		type_name(type, &tn, 0);
		if (!peel(type, &pt)) {
			k = AS_UNKNOWN;
		} else {
			size = size_of(&pt);
			k = scalar_kind(&pt);
			if (!k) {
				int tag = dwarf_tag(&pt);

				k = tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
				    tag == DW_TAG_class_type ? AS_STRUCT : AS_UNKNOWN;
			}
		}
	}
	if (!type && pl)
		k = AS_UNKNOWN;
	if (k == AS_ENUM)
		enumerators(&pt, &extra);
	if (k == AS_VOID) {
		sb_str(&loc, "-");
	} else if (k == AS_STRUCT && size > 0) {
		bool sse[2] = { false, false };
		bool regs = size <= 16 && members(&pt, size, &extra, sse, 0);
		int words = (size + 7) / 8;

		if (!pl) {
			if (regs) {
				int ni = 0, ns = 0;

				for (int w = 0; w < words; w++) {
					snprintf(num, sizeof(num), "%s",
						 sse[w] ? (ns++ ? "x1" : "x0") : (ni++ ? "d" : "a"));
					sb_str(&loc, num);
				}
			} else {
				sb_str(&loc, "m");
			}
		} else {
			if (!regs && size > 16 && !extra.len)
				members(&pt, size, &extra, sse, 0);
			place_words(pl, words, sse, regs, &loc);
		}
	} else if (k == AS_FLOAT) {
		if (size > 8) {		/* long double: memory, never read */
			if (pl)
				pl->stack += (size + 7) / 8;
			sb_str(&loc, "m");
		} else if (!pl) {
			sb_str(&loc, "x0");
		} else if (pl->sses < 8) {
			snprintf(num, sizeof(num), "x%d", pl->sses++);
			sb_str(&loc, num);
		} else {
			snprintf(num, sizeof(num), "k%d", pl->stack++);
			sb_str(&loc, num);
		}
	} else if (k == AS_UNKNOWN || size <= 0 || size > 16) {
		if (pl)
			pl->ints++;	/* a guess: most unknowns are one integer word */
		sb_str(&loc, "m");
	} else if (!pl) {
		sb_str(&loc, size > 8 ? "ad" : "a");	/* __int128: rax:rdx */
	} else {
		int words = (size + 7) / 8;
		bool sse[2] = { false, false };

		place_words(pl, words, sse, true, &loc);
	}
	snprintf(num, sizeof(num), "%c\t%d\t", k, size < 0 ? 0 : size);
	sb_str(b, num);
	sb_str(b, loc.p ? loc.p : "-");
	sb_str(b, "\t");
	sb_field(b, name);
	sb_str(b, "\t");
	sb_str(b, tn.p ? tn.p : (type ? "?" : "void"));
	sb_str(b, "\t");
	if (extra.p)
		sb_str(b, extra.p);
	free(loc.p);
	free(extra.p);
	free(tn.p);
}

char *dwarfargs__sig(Dwarf_Die *fn)
{
	struct sbuf b = { 0 };
	struct place pl = { 0 };
	Dwarf_Die rt, prt, c;
	bool has_ret = type_of(fn, &rt);
	int nparams = 0;

	/* a struct returned in memory: its address comes first, in rdi */
	if (has_ret && peel(&rt, &prt) && !scalar_kind(&prt) && size_of(&prt) > 16)
		pl.ints = 1;
	sb_str(&b, AS_VERSION "\n");
	item(&b, has_ret ? &rt : NULL, "", NULL);
	if (dwarf_child(fn, &c) == 0) {
		do {
			Dwarf_Die t;
			const char *name;

			if (dwarf_tag(&c) == DW_TAG_unspecified_parameters) {
				sb_str(&b, "\n...");
				break;
			}
			if (dwarf_tag(&c) != DW_TAG_formal_parameter)
				continue;
			name = dwarf_diename(&c);
			if (!name) {
				Dwarf_Attribute a;
				Dwarf_Die origin;

				if (dwarf_attr(&c, DW_AT_abstract_origin, &a) &&
				    dwarf_formref_die(&a, &origin))
					name = dwarf_diename(&origin);
			}
			sb_str(&b, "\n");
			item(&b, type_of(&c, &t) ? &t : NULL, name ? name : "", &pl);
			nparams++;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	(void)nparams;
	return b.p;
}
