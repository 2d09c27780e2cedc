// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * model/argsig.c: a signature (the text symbols/dwarfargs.c writes) applied
 * to a call's captured words gives each value by its type; what was not
 * captured is said, never guessed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "model/argsig.h"
#include "model/session.h"

/* f(int a, unsigned char u, enum e, const char *s, struct {int x; int y;} p,
 *   double d, long g7, long g8) -> struct {long lo; long hi;} */
static const char SIG[] =
	"S1\n"
	"S\t16\tad\t\tstruct pair\tlo,0,8,i;hi,8,8,i\n"
	"i\t4\tr0\ta\tint\t\n"
	"u\t1\tr1\tu\tunsigned char\t\n"
	"e\t4\tr2\te\tenum color\t0=RED,5=GREEN,-1=NONE\n"
	"s\t8\tr3\ts\tconst char *\t\n"
	"S\t8\tr4\tp\tstruct xy\tx,0,4,i;y,4,4,i\n"
	"f\t8\tx0\td\tdouble\t\n"
	"i\t8\tr5\tg6\tlong\t\n"
	"i\t8\tk0\tg7\tlong\t\n"
	"u\t8\tk1\tg8\tunsigned long\t";

static void test_values(void **state)
{
	struct bp_func f = { .name = "f", .sig = (char *)SIG };
	struct bp_session s = { .funcs = &f, .nfuncs = 1 };
	struct bp_call c = { .func = 0, .flags = BP_CALL_HAS_ARGS | BP_CALL_HAS_RET | BP_CALL_HAS_XARGS };
	static struct argvals av;
	char line[1024];

	(void)state;
	c.args[0] = 0xffffffff;			/* -1 as an int, garbage above */
	c.args[1] = 0x1234ff;			/* 255 in the low byte */
	c.args[2] = (uint64_t)-1 & 0xffffffff;	/* NONE */
	c.args[3] = 0x7000;
	c.args[4] = (uint64_t)(uint32_t)-7 << 32 | 3;	/* {x=3, y=-7} */
	c.args[5] = 6;
	c.x.stack[0] = (uint64_t)-2;
	c.x.stack[1] = 8;
	c.x.str_slot[0] = 3;
	c.x.str_state[0] = BP_ARGX_STR_CUT;
	strcpy(c.x.str[0], "abc");
	c.x.str_slot[1] = BP_ARGX_NONE;
	c.ret = 10;
	c.x.ret2 = (uint64_t)-20;
	argsig__values(&s, &c, &av);
	assert_true(av.typed);
	assert_int_equal(av.n, 9);
	argsig__line(&av, "f", line, sizeof(line));
	assert_string_equal(line, "f(a=-1, u=255, e=NONE, s=\"abc...\", p={x=3, y=-7}, "
				  "d=unavailable (xmm register), g6=6, g7=-2, g8=8) = {lo=10, hi=-20}");
	assert_int_equal(av.v[0].vt, AV_INT);
	assert_int_equal(av.v[1].vt, AV_UINT);
	assert_int_equal(av.v[3].vt, AV_STR);
	assert_int_equal(av.v[4].vt, AV_STRUCT);
	assert_int_equal(av.v[4].nmem, 2);
	assert_int_equal(av.v[5].vt, AV_UNAVAIL);
	assert_int_equal(argsig__str_mask(SIG), 1u << 3);

	/* the string not readable at entry: the pointer stays */
	c.x.str_state[0] = BP_ARGX_STR_UNREAD;
	argsig__values(&s, &c, &av);
	assert_int_equal(av.v[3].vt, AV_PTR);
	assert_string_equal(av.v[3].text, "0x7000");
	/* the stack words not captured: unavailable, not 0 */
	c.flags &= ~BP_CALL_HAS_XARGS;
	argsig__values(&s, &c, &av);
	assert_int_equal(av.v[7].vt, AV_UNAVAIL);
	assert_int_equal(av.ret.vt, AV_UNAVAIL);	/* rax alone: not the whole struct */
}

static void test_raw_without_signature(void **state)
{
	struct bp_func f = { .name = "g" };
	struct bp_session s = { .funcs = &f, .nfuncs = 1 };
	struct bp_call c = { .func = 0, .flags = BP_CALL_HAS_ARGS | BP_CALL_HAS_RET };
	static struct argvals av;
	char line[512];

	(void)state;
	c.args[0] = 1;
	c.ret = 0x10;
	argsig__values(&s, &c, &av);
	assert_false(av.typed);
	argsig__line(&av, "g", line, sizeof(line));
	assert_string_equal(line, "g(rdi=0x1, rsi=0, rdx=0, rcx=0, r8=0, r9=0) = 0x10");
}

/* double h(float f, double g): the places where they are read, and the values so read. */
static const char XSIG[] =
	"S1\n"
	"f\t8\tx0\t\tdouble\t\n"
	"f\t4\tx0\tf\tfloat\t\n"
	"f\t8\tx1\tg\tdouble\t\n"
	"@\t0 9 6 -20 1\n"
	"@\t8 0 0 0 2";

static void test_xmm_places_and_values(void **state)
{
	struct bp_func fn = { .name = "h", .sig = (char *)XSIG };
	struct bp_session s = { .funcs = &fn, .nfuncs = 1 };
	struct bp_call c = { .func = 0, .flags = BP_CALL_HAS_ARGS | BP_CALL_HAS_RET | BP_CALL_HAS_XARGS };
	struct argxprobe xp[4];
	static struct argvals av;
	char line[512];
	double r = 1.0 / 3;
	float f = -2.5f;

	(void)state;
	assert_int_equal(argsig__xprobes(XSIG, xp, 4), 2);
	assert_int_equal(xp[0].slot, 0);
	assert_int_equal(xp[0].delta, 9);
	assert_int_equal(xp[0].reg, 6);
	assert_int_equal(xp[0].off, -20);
	assert_int_equal(xp[0].deref, 1);
	assert_int_equal(xp[1].slot, BP_ARGX_XRET);
	assert_int_equal(xp[1].deref, 2);
	argsig__xprobe_line(&xp[0], line, sizeof(line));
	assert_string_equal(line, "\n@\t0 9 6 -20 1");
	/* the "@" lines are not parameters */
	assert_int_equal(argsig__str_mask(XSIG), 0);

	/* f read inside the call (slot 0), g not (slot 1): said so; the return from rax */
	memcpy(&c.x.xmm[0], &f, sizeof(f));
	c.x.xmm_mask = 1;
	c.flags |= BP_CALL_HAS_XMM;
	memcpy(&c.ret, &r, sizeof(r));
	argsig__values(&s, &c, &av);
	assert_int_equal(av.n, 2);
	assert_int_equal(av.v[0].vt, AV_DOUBLE);
	assert_true(av.v[0].d == -2.5);
	assert_int_equal(av.ret.vt, AV_DOUBLE);
	assert_true(av.ret.d == r);
	argsig__line(&av, "h", line, sizeof(line));
	assert_string_equal(line, "h(f=-2.5, g=unavailable (xmm register)) = 0.33333333333333331");
	/* an integral double is written as a double */
	r = 4;
	memcpy(&c.ret, &r, sizeof(r));
	argsig__values(&s, &c, &av);
	assert_string_equal(av.ret.text, "4.0");
	/* without the flag the words are not values */
	c.flags &= ~BP_CALL_HAS_XMM;
	argsig__values(&s, &c, &av);
	assert_int_equal(av.v[0].vt, AV_UNAVAIL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_raw_without_signature),
		cmocka_unit_test(test_xmm_places_and_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
