/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Quoting of names for the text formats.  Function names come from symbol
 * tables and demangling: they can hold commas, quotes, spaces, semicolons,
 * backslashes, even control bytes or invalid UTF-8, and none of that may
 * break the file's syntax.
 */
#ifndef BPFPROF_ESCAPE_H
#define BPFPROF_ESCAPE_H

#include <stdio.h>

/*
 * A CSV field (RFC 4180): as is, unless it holds a comma, a double quote,
 * CR or LF (or starts or ends with a space), then inside double quotes with
 * every quote doubled.
 */
void csv_str(FILE *f, const char *s);

/*
 * The inside of a DOT double-quoted string used as a label (escString):
 * `"` and `\` are backslash-escaped (so a name cannot form a `\n`/`\l`
 * label escape), control bytes become spaces and invalid UTF-8 bytes `?`
 * (Graphviz reads UTF-8 and rejects the rest).  No quotes are written.
 */
void dot_str(FILE *f, const char *s);

/*
 * A frame of a folded stack: `;` separates frames and a line is one stack,
 * so `;` becomes `:` and control bytes (newlines) become spaces; spaces are
 * kept (the count is after the last space of the line).
 */
void folded_str(FILE *f, const char *s);

#endif
