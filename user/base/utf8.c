// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one UTF-8 check of every text output, and CPython str characters to UTF-8 (see utf8.h). */
#include <string.h>
#include "utf8.h"

int utf8_len(const unsigned char *p)
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

void utf8_from_units(const char *raw, uint32_t len, uint32_t kind, char *out, size_t cap)
{
	size_t o = 0;
	uint32_t i;

	if (kind != 1 && kind != 2 && kind != 4)
		kind = 1;
	for (i = 0; i + kind <= len && o + 5 < cap; i += kind) {
		uint32_t c = 0;

		memcpy(&c, raw + i, kind);	/* little-endian code units */
		if (c < 0x80) {
			out[o++] = c ? c : '?';
		} else if (c < 0x800) {
			out[o++] = 0xc0 | c >> 6;
			out[o++] = 0x80 | (c & 0x3f);
		} else if (c < 0x10000) {
			if (c >= 0xd800 && c < 0xe000)
				c = 0xfffd;	/* a lone surrogate is not UTF-8 */
			out[o++] = 0xe0 | c >> 12;
			out[o++] = 0x80 | ((c >> 6) & 0x3f);
			out[o++] = 0x80 | (c & 0x3f);
		} else {
			if (c > 0x10ffff)
				c = 0xfffd;
			out[o++] = 0xf0 | c >> 18;
			out[o++] = 0x80 | ((c >> 12) & 0x3f);
			out[o++] = 0x80 | ((c >> 6) & 0x3f);
			out[o++] = 0x80 | (c & 0x3f);
		}
	}
	out[o] = 0;
}
