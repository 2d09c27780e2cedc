/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Typed arguments and return values (--args).  symbols/dwarfargs.c writes a
 * function's signature as text (bp_func.sig, kept as one string in the
 * archive); here it is read back and applied to a call's captured words
 * (bp_call.args, .x, .ret) to give each parameter's name, type and value.
 *
 * The text: "S1", then one line for the return value, then one per
 * parameter ("..." last for a variadic function).  A line is
 *   kind TAB size TAB loc TAB name TAB type TAB extra
 * kind: AS_* below.  loc: eightbytes, each rN (argument register N:
 * rdi rsi rdx rcx r8 r9), kN (stack word N above the return address), xN
 * (xmm N), or for the return value a (rax), d (rdx), x0/x1; m: in memory,
 * not captured; -: none (void).  extra: an enum's "VALUE=NAME,...", a
 * struct's members "name,offset,size,kind;...".
 *
 * Last, lines "@ TAB slot delta reg offset deref" (numbers separated by
 * spaces) say where a float/double held in an xmm register at entry or at
 * return can be read instead: at the instruction `delta` bytes into the
 * function, DWARF register `reg` plus `offset` (deref 1: the 8 bytes at
 * that address, 0: the register itself); slot N: the parameter in xmm N,
 * 8: the return value (see bpf/events.h struct bp_rec_xval).  "@ TAB 8 0 0
 * 0 2": the return value is also in rax at every return (no probe).
 */
#ifndef BPFPROF_ARGSIG_H
#define BPFPROF_ARGSIG_H

#include <stdbool.h>
#include <stdint.h>
#include "session.h"

#define AS_VERSION	"S1"
#define AS_MAX_ENUMS	256
#define AS_MAX_PARAMS	16

/* kinds */
#define AS_INT		'i'
#define AS_UINT		'u'
#define AS_BOOL		'b'
#define AS_CHAR		'c'
#define AS_ENUM		'e'
#define AS_PTR		'p'
#define AS_STR		's'	/* char *: the string read at entry */
#define AS_FLOAT	'f'
#define AS_STRUCT	'S'
#define AS_REF		'r'	/* C++ reference: the address */
#define AS_VOID		'v'
#define AS_UNKNOWN	'?'

/* How a value is typed in the outputs. */
enum av_type {
	AV_INT,		/* i */
	AV_UINT,	/* u */
	AV_BOOL,	/* u: 0 or 1 */
	AV_STR,		/* str (a string, an enumerator, a struct's members) */
	AV_PTR,		/* u */
	AV_DOUBLE,	/* d */
	AV_UNAVAIL,	/* not captured: text says why */
	AV_STRUCT,	/* mem[0..nmem), text {x=1, y=2} */
};

#define AS_MAX_MEMBERS	8

/* A member of a struct passed by value: a scalar, typed like a value. */
struct argmem {
	char name[32];
	enum av_type vt;
	int64_t i;
	uint64_t u;
	double d;
	char text[72];	/* as C writes it; AV_STR: the value unquoted */
};

struct argval {
	char name[64];		/* the parameter's name; "" for the return value */
	char type[96];		/* its C type */
	enum av_type vt;
	int64_t i;
	uint64_t u;
	double d;
	char str[BP_ARGX_STR + 192];	/* AV_STR: the value, unquoted */
	char text[BP_ARGX_STR + 200];	/* as C writes it: 0, true, RED, "abc", 0x7f.., {x=1} */
	int nmem;
	struct argmem mem[AS_MAX_MEMBERS];
};

struct argvals {
	bool typed;		/* from the signature; false: raw registers (no DWARF) */
	bool has_args, has_ret;	/* entry / return captured */
	bool ret_void;
	int n;
	struct argval v[AS_MAX_PARAMS];
	struct argval ret;
};

/* A place inside a function where a float/double can be read (the "@" lines). */
struct argxprobe {
	uint32_t delta;		/* bytes from the function's entry */
	uint8_t slot;		/* xmm N of a parameter; 8: the return value */
	uint8_t reg;		/* DWARF register number, 0-15 */
	uint8_t deref;
	uint8_t pad;
	int16_t off;
};
#define AS_MAX_XPROBES	16

/* The values of call c (raw registers when its function has no signature). */
void argsig__values(const struct bp_session *s, const struct bp_call *c, struct argvals *out);
/* "name(a=0, b=1) = 1" into buf. */
void argsig__line(const struct argvals *av, const char *name, char *buf, size_t size);
/* The argument words of a signature holding `char *` (bit i: regs[i], 6 + j: stack[j]). */
uint32_t argsig__str_mask(const char *sig);
/* The "@" places of a signature into out[0..max); returns how many. */
int argsig__xprobes(const char *sig, struct argxprobe *out, int max);
/* The "@" line of a place, into buf. */
void argsig__xprobe_line(const struct argxprobe *p, char *buf, size_t size);

#endif
