// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include "escape.h"
#include "utf8.h"

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
		} else if ((n = utf8_len(p))) {
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
