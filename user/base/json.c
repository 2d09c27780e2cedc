// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <inttypes.h>
#include <stdio.h>
#include "json.h"

/*
 * Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there
 * are not one: a stray continuation byte, a truncated sequence, an overlong
 * form, a UTF-16 surrogate or a code point above U+10FFFF.  Names come from
 * symbol tables and comm strings, which nothing forces to be UTF-8, and one bad
 * byte must not make the whole output unreadable to a strict JSON parser.
 */
static int utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xbf;	/* allowed range of the second byte */
	int n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		return 0;	/* 0x80-0xc1 (continuation, overlong lead), 0xf5-0xff */
	}
	if (p[1] < lo || p[1] > hi)
		return 0;	/* also stops at the terminating NUL */
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	int n;

	putc('"', f);
	while (*p) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		default:
			if (*p < 0x20) {
				fprintf(f, "\\u%04x", *p);
				break;
			}
			n = utf8_len(p);
			if (n == 0) {
				/* Replace one byte and resynchronise on the next. */
				fputs("\\uFFFD", f);
				break;
			}
			fwrite(p, 1, n, f);
			p += n - 1;
			break;
		}
		p++;
	}
	putc('"', f);
}

void json_us(FILE *f, uint64_t ns)
{
	/* Integer arithmetic: a double loses nanoseconds after about 104 days. */
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
}
