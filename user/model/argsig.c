// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Typed argument values from a signature and a call's captured words (argsig.h). */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "argsig.h"

static const char *const reg_names[6] = { "rdi", "rsi", "rdx", "rcx", "r8", "r9" };

/* One line's fields (pointers into a copy of the line). */
struct item {
	char kind;
	int size;
	const char *loc, *name, *type, *extra;
};

static bool split_item(char *line, struct item *it)
{
	char *f[6];
	int n = 0;

	f[n++] = line;
	for (char *p = line; *p && n < 6; p++)
		if (*p == '\t') {
			*p = 0;
			f[n++] = p + 1;
		}
	if (n < 6)
		return false;
	it->kind = f[0][0];
	it->size = atoi(f[1]);
	it->loc = f[2];
	it->name = f[3];
	it->type = f[4];
	it->extra = f[5];
	return true;
}

/*
 * The bytes of a value from its eightbytes; false if any is not captured.
 * why: what to say instead.
 */
static bool gather(const struct bp_call *c, const char *loc, bool is_ret, unsigned char *buf,
		   size_t cap, const char **why)
{
	size_t w = 0;

	memset(buf, 0, cap);
	*why = "unavailable";
	if (!strcmp(loc, "m") || !strcmp(loc, "-")) {
		*why = "unavailable (in memory)";
		return false;
	}
	for (const char *p = loc; *p && w + 8 <= cap; w += 8) {
		uint64_t v;
		char t = *p++;
		int n = 0;

		while (isdigit((unsigned char)*p))
			n = n * 10 + (*p++ - '0');
		if (t == 'r' && !is_ret && n < 6 && (c->flags & BP_CALL_HAS_ARGS)) {
			v = c->args[n];
		} else if (t == 'k' && !is_ret && n < BP_ARGX_STACK && (c->flags & BP_CALL_HAS_XARGS)) {
			v = c->x.stack[n];
		} else if (t == 'a' && is_ret && (c->flags & BP_CALL_HAS_RET)) {
			v = c->ret;
		} else if (t == 'd' && is_ret && (c->flags & BP_CALL_HAS_RET) &&
			   (c->flags & BP_CALL_HAS_XARGS)) {
			v = c->x.ret2;
		} else if (t == 'x' && (c->flags & BP_CALL_HAS_XMM) &&
			   (is_ret ? n == 0 : n < BP_ARGX_XRET) &&
			   (c->x.xmm_mask & (1u << (is_ret ? BP_ARGX_XRET : n)))) {
			/* read inside the call where it was in memory or an integer register */
			v = c->x.xmm[is_ret ? BP_ARGX_XRET : n];
		} else {
			/* xmm registers are not in the uprobe's pt_regs */
			*why = t == 'x' ? "unavailable (xmm register)" : "unavailable";
			return false;
		}
		memcpy(buf + w, &v, 8);
	}
	return true;
}

static uint64_t load(const unsigned char *b, int size)
{
	uint64_t v = 0;

	memcpy(&v, b, size > 8 ? 8 : size < 0 ? 0 : size);
	return v;
}

static int64_t sext(uint64_t v, int size)
{
	if (size <= 0 || size >= 8)
		return (int64_t)v;
	return (int64_t)(v << (64 - 8 * size)) >> (64 - 8 * size);
}

/* The enumerator named for v in "VALUE=NAME,...", or NULL. */
static bool enum_name(const char *extra, int64_t v, char *out, size_t size)
{
	const char *p = extra;

	while (p && *p) {
		char *end;
		long long x = strtoll(p, &end, 10);
		const char *name = *end == '=' ? end + 1 : NULL, *stop;

		if (!name)
			return false;
		stop = strchr(name, ',');
		if (x == v) {
			size_t n = stop ? (size_t)(stop - name) : strlen(name);

			snprintf(out, size, "%.*s", (int)n, name);
			return true;
		}
		p = stop ? stop + 1 : NULL;
	}
	return false;
}

/* A scalar of kind k from its bytes. */
static void scalar(struct argval *a, char k, int size, const unsigned char *b, const char *extra)
{
	uint64_t raw = load(b, size);

	switch (k) {
	case AS_INT:
		a->vt = AV_INT;
		a->i = sext(raw, size);
		snprintf(a->text, sizeof(a->text), "%" PRId64, a->i);
		break;
	case AS_UINT:
		a->vt = AV_UINT;
		a->u = size < 8 ? raw & ((1ull << (8 * size)) - 1) : raw;
		snprintf(a->text, sizeof(a->text), "%" PRIu64, a->u);
		break;
	case AS_BOOL:
		a->vt = AV_BOOL;
		a->u = (raw & 0xff) != 0;
		snprintf(a->text, sizeof(a->text), "%s", a->u ? "true" : "false");
		break;
	case AS_CHAR:
		a->i = sext(raw, 1);
		if (isprint((int)(raw & 0xff))) {
			a->vt = AV_STR;
			snprintf(a->str, sizeof(a->str), "%c", (char)raw);
			snprintf(a->text, sizeof(a->text), "'%c'", (char)raw);
		} else {
			a->vt = AV_INT;
			snprintf(a->text, sizeof(a->text), "%" PRId64, a->i);
		}
		break;
	case AS_ENUM:
		a->i = sext(raw, size);
		if (enum_name(extra, a->i, a->str, sizeof(a->str))) {
			a->vt = AV_STR;
			snprintf(a->text, sizeof(a->text), "%s", a->str);
		} else {
			a->vt = AV_INT;
			snprintf(a->text, sizeof(a->text), "%" PRId64, a->i);
		}
		break;
	case AS_FLOAT:
		a->vt = AV_DOUBLE;
		if (size == 4) {
			float f;

			memcpy(&f, b, 4);
			a->d = f;
		} else {
			memcpy(&a->d, b, 8);
		}
		/* enough digits to give the double back; a float is seen as one: 2.0 */
		snprintf(a->text, sizeof(a->text), "%.17g", a->d);
		if (isfinite(a->d) && !strpbrk(a->text, ".e"))
			snprintf(a->text + strlen(a->text), sizeof(a->text) - strlen(a->text), ".0");
		break;
	case AS_PTR:
	case AS_REF:
	case AS_STR:
		a->vt = AV_PTR;
		a->u = raw;
		snprintf(a->text, sizeof(a->text), "%#" PRIx64, raw);
		break;
	default:
		a->vt = AV_UNAVAIL;
		snprintf(a->text, sizeof(a->text), "unavailable (unknown type)");
		break;
	}
}

/* A struct's members "{x=1, y=2}" from its bytes. */
static void members(struct argval *a, const struct item *it, const unsigned char *b)
{
	char copy[1024];
	size_t len = 0;
	char *save = NULL;

	snprintf(copy, sizeof(copy), "%s", it->extra);
	len += snprintf(a->str + len, sizeof(a->str) - len, "{");
	for (char *m = strtok_r(copy, ";", &save); m && len < sizeof(a->str);
	     m = strtok_r(NULL, ";", &save)) {
		char name[64] = "", k = '?';
		unsigned off = 0;
		int size = 0;
		struct argval v = { 0 };

		if (sscanf(m, "%63[^,],%u,%d,%c", name, &off, &size, &k) != 4)
			continue;
		if (off + size > 32 || size <= 0)
			continue;
		if (k == AS_UNKNOWN || k == AS_STRUCT)
			snprintf(v.text, sizeof(v.text), "%#" PRIx64, load(b + off, size));
		else
			scalar(&v, k, size, b + off, "");
		len += snprintf(a->str + len, sizeof(a->str) - len, "%s%s=%s", len > 1 ? ", " : "",
				name, v.text);
		if (a->nmem < AS_MAX_MEMBERS) {
			struct argmem *am = &a->mem[a->nmem++];

			snprintf(am->name, sizeof(am->name), "%s", name);
			am->vt = k == AS_UNKNOWN || k == AS_STRUCT ? AV_PTR : v.vt;
			am->i = v.i;
			am->u = k == AS_UNKNOWN || k == AS_STRUCT ? load(b + off, size) : v.u;
			am->d = v.d;
			snprintf(am->text, sizeof(am->text), "%.71s", v.vt == AV_STR ? v.str : v.text);
		}
	}
	if (len < sizeof(a->str))
		snprintf(a->str + len, sizeof(a->str) - len, "}");
	a->vt = AV_STRUCT;
	snprintf(a->text, sizeof(a->text), "%s", a->str);
}

/* The string read at entry for the word loc names, or NULL. */
static int find_str(const struct bp_call *c, const char *loc)
{
	int slot = -1;

	if (!(c->flags & BP_CALL_HAS_XARGS))
		return -1;
	if (loc[0] == 'r')
		slot = atoi(loc + 1);
	else if (loc[0] == 'k')
		slot = 6 + atoi(loc + 1);
	for (int i = 0; i < BP_ARGX_NSTR; i++)
		if (slot >= 0 && c->x.str_slot[i] == slot)
			return i;
	return -1;
}

static void value(const struct bp_call *c, const struct item *it, bool is_ret, struct argval *a)
{
	unsigned char b[32];
	const char *why;
	int si;

	snprintf(a->name, sizeof(a->name), "%s", it->name);
	snprintf(a->type, sizeof(a->type), "%s", it->type);
	a->nmem = 0;
	if (!gather(c, it->loc, is_ret, b, sizeof(b), &why)) {
		a->vt = AV_UNAVAIL;
		snprintf(a->text, sizeof(a->text), "%s", why);
		return;
	}
	if (it->kind == AS_STRUCT) {
		members(a, it, b);
		return;
	}
	scalar(a, it->kind, it->size, b, it->extra);
	if (it->kind != AS_STR || !a->u)
		return;
	si = find_str(c, it->loc);
	if (si < 0 || c->x.str_state[si] == BP_ARGX_STR_UNREAD) {
		/* the pointer stays: its page was not present at entry */
		return;
	}
	a->vt = AV_STR;
	snprintf(a->str, sizeof(a->str), "%s%s", c->x.str[si],
		 c->x.str_state[si] == BP_ARGX_STR_CUT ? "..." : "");
	snprintf(a->text, sizeof(a->text), "\"%s\"", a->str);
}

static void raw_values(const struct bp_call *c, struct argvals *out)
{
	out->has_args = c->flags & BP_CALL_HAS_ARGS;
	out->has_ret = c->flags & BP_CALL_HAS_RET;
	if (out->has_args) {
		out->n = 6;
		for (int i = 0; i < 6; i++) {
			struct argval *a = &out->v[i];

			snprintf(a->name, sizeof(a->name), "%s", reg_names[i]);
			snprintf(a->type, sizeof(a->type), "register");
			a->vt = AV_PTR;
			a->u = c->args[i];
			snprintf(a->text, sizeof(a->text), "%#" PRIx64, a->u);
		}
	}
	if (out->has_ret) {
		snprintf(out->ret.type, sizeof(out->ret.type), "register");
		out->ret.vt = AV_PTR;
		out->ret.u = c->ret;
		snprintf(out->ret.text, sizeof(out->ret.text), "%#" PRIx64, c->ret);
	}
}

void argsig__values(const struct bp_session *s, const struct bp_call *c, struct argvals *out)
{
	const char *sig = c->func < s->nfuncs ? s->funcs[c->func].sig : NULL;
	char copy[4096];
	char *save = NULL, *line;
	struct item it;

	out->typed = false;
	out->n = 0;
	out->has_args = out->has_ret = out->ret_void = false;
	if (!sig || strncmp(sig, AS_VERSION "\n", 3) || strlen(sig) >= sizeof(copy)) {
		raw_values(c, out);
		return;
	}
	out->typed = true;
	snprintf(copy, sizeof(copy), "%s", sig + 3);
	line = strtok_r(copy, "\n", &save);
	if (!line || !split_item(line, &it))
		return;
	out->ret_void = it.kind == AS_VOID;
	/* a float returned in xmm0 that is also in rax at every return */
	if (it.kind == AS_FLOAT && !strcmp(it.loc, "x0") && strstr(sig, "\n@\t8 0 0 0 2"))
		it.loc = "a";
	out->has_ret = (c->flags & BP_CALL_HAS_RET) && !out->ret_void;
	if (out->has_ret)
		value(c, &it, true, &out->ret);
	out->has_args = c->flags & BP_CALL_HAS_ARGS;
	if (!out->has_args)
		return;
	while ((line = strtok_r(NULL, "\n", &save)) && out->n < AS_MAX_PARAMS) {
		if (!strcmp(line, "..."))
			break;
		if (split_item(line, &it))
			value(c, &it, false, &out->v[out->n++]);
	}
}

/* The length of a demangled C++ name without its parameter list ("A::f(long const&)"). */
static int bare_len(const char *name)
{
	int n = strlen(name), depth = 0;

	if (!n || name[n - 1] != ')')
		return n;
	for (int i = n - 1; i >= 0; i--) {
		if (name[i] == ')')
			depth++;
		else if (name[i] == '(' && !--depth)
			return i ? i : n;
	}
	return n;
}

void argsig__line(const struct argvals *av, const char *name, char *buf, size_t size)
{
	size_t len = snprintf(buf, size, "%.*s(", bare_len(name), name);

	for (int i = 0; i < av->n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s=%s", i ? ", " : "", av->v[i].name,
				av->v[i].text);
	if (len < size)
		len += snprintf(buf + len, size - len, ")");
	if (av->has_ret && len < size)
		snprintf(buf + len, size - len, " = %s", av->ret.text);
}

uint32_t argsig__str_mask(const char *sig)
{
	char copy[4096];
	char *save = NULL, *line;
	uint32_t mask = 0;
	struct item it;
	bool first = true;

	if (!sig || strncmp(sig, AS_VERSION "\n", 3) || strlen(sig) >= sizeof(copy))
		return 0;
	snprintf(copy, sizeof(copy), "%s", sig + 3);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (first) {		/* the return value */
			first = false;
			continue;
		}
		if (!split_item(line, &it) || it.kind != AS_STR)
			continue;
		if (it.loc[0] == 'r')
			mask |= 1u << atoi(it.loc + 1);
		else if (it.loc[0] == 'k' && atoi(it.loc + 1) < BP_ARGX_STACK)
			mask |= 1u << (6 + atoi(it.loc + 1));
	}
	return mask;
}

int argsig__xprobes(const char *sig, struct argxprobe *out, int max)
{
	int n = 0;

	if (!sig || strncmp(sig, AS_VERSION "\n", 3))
		return 0;
	for (const char *p = strstr(sig, "\n@\t"); p && n < max; p = strstr(p + 1, "\n@\t")) {
		unsigned slot, delta, reg, deref;
		int off;

		if (sscanf(p + 3, "%u %u %u %d %u", &slot, &delta, &reg, &off, &deref) != 5 ||
		    slot >= BP_ARGX_XMM || reg > 15 || deref > 2 || off < -32768 || off > 32767)
			continue;
		out[n].delta = delta;
		out[n].slot = slot;
		out[n].reg = reg;
		out[n].deref = deref;
		out[n].pad = 0;
		out[n].off = off;
		n++;
	}
	return n;
}

void argsig__xprobe_line(const struct argxprobe *p, char *buf, size_t size)
{
	snprintf(buf, size, "\n@\t%u %u %u %d %u", p->slot, p->delta, p->reg, p->off, p->deref);
}
