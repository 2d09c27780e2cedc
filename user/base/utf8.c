// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one UTF-8 check of every text output (see utf8.h). */
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
