// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include "escape.h"

void csv_str(FILE *f, const char *s)
{
	size_t len;

	s = s ? s : "";
	len = strlen(s);
	/* Leading or trailing spaces are kept by RFC 4180, trimmed by some readers: quote them. */
	if (!strpbrk(s, ",\"\r\n") && (!len || (s[0] != ' ' && s[len - 1] != ' '))) {
		fputs(s, f);
		return;
	}
	putc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', f);
		putc(*s, f);
	}
	putc('"', f);
}

/* Length of a valid UTF-8 sequence at p (2..4), or 0; p[0] >= 0x80. */
static int utf8_seq(const unsigned char *p)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	int n, i;

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;	/* overlong */
		hi = c == 0xed ? 0x9f : 0xbf;	/* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;	/* overlong */
		hi = c == 0xf4 ? 0x8f : 0xbf;	/* above U+10FFFF */
	} else {
		return 0;
	}
	if (p[1] < lo || p[1] > hi)
		return 0;	/* also stops at the terminating NUL */
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

void dot_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	int n;

	while (*p) {
		if (*p == '"' || *p == '\\') {
			putc('\\', f);
			putc(*p++, f);
		} else if (*p < 0x20 || *p == 0x7f) {
			putc(' ', f);
			p++;
		} else if (*p < 0x80) {
			putc(*p++, f);
		} else if ((n = utf8_seq(p))) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			putc('?', f);
			p++;
		}
	}
}

void folded_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	for (; *p; p++) {
		if (*p == ';')
			putc(':', f);
		else if (*p < 0x20 || *p == 0x7f)
			putc(' ', f);
		else
			putc(*p, f);
	}
}
