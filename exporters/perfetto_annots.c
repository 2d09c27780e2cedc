// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perfetto's debug annotations of a slice (perfetto.c writes the slices):
 * one of each value type, and a call's --args, typed from DWARF or raw.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "model/argsig.h"

static const char *annot_name(const struct perfetto_priv *pr, uint64_t iid)
{
	return iid < NANNOTS ? annot_names[iid] : pr->info_keys[iid - NANNOTS];
}

/* Starts one debug annotation in pr->an, its name interned in the lane. */
static void an_begin(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid)
{
	pf_need(pr, l, KEY_ANNOT, iid, annot_name(pr, iid));
	pb_reset(&pr->an);
	pb_uint(&pr->an, F_DA_NAME_IID, iid);
}

static void an_end(struct perfetto_priv *pr)
{
	pb_msg(&pr->te, F_TE_DEBUG_ANNOT, &pr->an);
}

void pf_an_bool(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid)
{
	an_begin(pr, l, iid);
	pb_uint(&pr->an, F_DA_BOOL, 1);
	an_end(pr);
}

void pf_an_int(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid, int64_t v)
{
	an_begin(pr, l, iid);
	pb_tag(&pr->an, F_DA_INT, PB_VARINT);
	pb_varint(&pr->an, (uint64_t)v);
	an_end(pr);
}

void pf_an_ptr(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid, uint64_t v)
{
	an_begin(pr, l, iid);
	pb_tag(&pr->an, F_DA_POINTER, PB_VARINT);
	pb_varint(&pr->an, v);
	an_end(pr);
}

/* A typed --args value (model/argsig.h) as the annotation of its type. */
static void an_argval(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid,
		      enum av_type vt, int64_t i, uint64_t u, double d, const char *text)
{
	an_begin(pr, l, iid);
	switch (vt) {
	case AV_INT:
		pb_tag(&pr->an, F_DA_INT, PB_VARINT);
		pb_varint(&pr->an, (uint64_t)i);
		break;
	case AV_UINT:
		pb_tag(&pr->an, F_DA_UINT, PB_VARINT);
		pb_varint(&pr->an, u);
		break;
	case AV_BOOL:	/* (pb_uint leaves a 0 out: false must be written) */
		pb_tag(&pr->an, F_DA_BOOL, PB_VARINT);
		pb_varint(&pr->an, u != 0);
		break;
	case AV_PTR:
		pb_tag(&pr->an, F_DA_POINTER, PB_VARINT);
		pb_varint(&pr->an, u);
		break;
	case AV_DOUBLE: {
		uint64_t bits;

		memcpy(&bits, &d, 8);
		pb_fixed64(&pr->an, F_DA_DOUBLE, bits);
		break;
	}
	default:	/* strings, enumerators, what was not captured */
		pb_str(&pr->an, F_DA_STRING, text);
		break;
	}
	an_end(pr);
}

/*
 * --args: typed from DWARF, "arg.NAME" (a struct's members "arg.NAME.MEMBER"),
 * "return" and "call" (the call as C writes it); without DWARF the raw
 * registers arg0..arg5 and ret, and "arg_regs" saying so.
 */
void pf_write_args(struct perfetto_priv *pr, struct pf_lane *l, const struct bp_session *s,
		   const struct bp_call *c)
{
	static struct argvals av;
	static char key[160], line[4096];

	argsig__values(s, c, &av);
	if (!av.typed) {
		if (c->flags & BP_CALL_HAS_ARGS)
			for (int i = 0; i < 6; i++)
				pf_an_ptr(pr, l, AN_ARG0 + i, c->args[i]);
		if (c->flags & BP_CALL_HAS_RET)
			pf_an_ptr(pr, l, AN_RET, c->ret);
		pf_an_str(pr, l, pf_info_iid(pr, "arg_regs"), "raw (no DWARF)");
		return;
	}
	for (int i = 0; i < av.n + av.has_ret; i++) {
		const struct argval *a = i < av.n ? &av.v[i] : &av.ret;

		if (i < av.n)
			snprintf(key, sizeof(key), "arg.%s", a->name[0] ? a->name : "?");
		else
			snprintf(key, sizeof(key), "return");
		if (a->vt != AV_STRUCT) {
			an_argval(pr, l, pf_info_iid(pr, key), a->vt, a->i, a->u, a->d,
				  a->vt == AV_STR ? a->str : a->text);
			continue;
		}
		for (int m = 0; m < a->nmem; m++) {
			char mkey[200];

			snprintf(mkey, sizeof(mkey), "%s.%s", key, a->mem[m].name);
			an_argval(pr, l, pf_info_iid(pr, mkey), a->mem[m].vt, a->mem[m].i, a->mem[m].u,
				  a->mem[m].d, a->mem[m].text);
		}
	}
	argsig__line(&av, s->funcs[c->func].name, line, sizeof(line));
	pf_an_str(pr, l, pf_info_iid(pr, "call"), line);
}

void pf_an_str(struct perfetto_priv *pr, struct pf_lane *l, uint64_t iid, const char *v)
{
	an_begin(pr, l, iid);
	pb_str(&pr->an, F_DA_STRING, v);
	an_end(pr);
}
