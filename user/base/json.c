// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <inttypes.h>
#include <stdio.h>
#include "json.h"
#include "utf8.h"


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

char json_first(const void *buf, size_t n)
{
	const unsigned char *b = buf;
	size_t i = 0;

	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
		i++;
	return i < n ? (char)b[i] : 0;
}
