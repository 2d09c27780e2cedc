// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for everything an archive feeds through the replay loop
 * (user/archive/replay.c): every exporter of exporter_table (chrome,
 * perfetto, speedscope, pprof, folded, csv, dot, archive), the report and
 * the diff.  Whatever a hostile archive holds that the reader lets through
 * (an event naming a path of another thread, a sample with no frames, a
 * huge timestamp, a name that is not UTF-8...) must give output or a clean
 * error in each of them, never a crash, a leak, UB or a hang.
 *
 * The reader checks the END section (counts, checksum of every byte
 * before it) only at the end, after the sinks took every event: a mutated
 * input would never reach their end() -- the tables, the report's tree --
 * so this target makes END right for the bytes before it (fix_end); the
 * archive target keeps the check itself fuzzed.
 *
 * The report and the diff take one set of options per input, picked from a
 * hash of its bytes, so the corpus covers their formats and views without
 * running each input through all of them.  Seeds: the archive target's
 * regressions (recordings), and the same with every section stored raw
 * (tests/fuzz/inflate_archive.py): mutations then reach the events, not zlib.
 *
 *   make fuzz          long runs of every target (FUZZ_TIME seconds each)
 *   make fuzz-smoke    a few seconds of each, part of make test
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "fuzz_util.h"
#include "archive/format.h"
#include "archive/replay.h"
#include "exporters/exporter.h"
#include "report/diff.h"
#include "report/report.h"

static FILE *sink;

/* END's section and event counts and checksum, as the reader computes them */
static void fix_end(uint8_t *p, size_t size)
{
	uint64_t off = ARCHIVE_FILE_HDR_LEN, nsec = 0, nev = 0, len;
	uint32_t type, n, crc;

	while (off + ARCHIVE_SEC_HDR_LEN <= size) {
		memcpy(&type, p + off, 4);
		memcpy(&len, p + off + 8, 8);
		if (len > size - off - ARCHIVE_SEC_HDR_LEN)
			return;
		if (type == ARCHIVE_SEC_END) {
			if (len < 24)
				return;
			crc = crc32(0, p, off);
			memcpy(p + off + 16, &nsec, 8);
			memcpy(p + off + 24, &nev, 8);
			memcpy(p + off + 32, &crc, 4);
			return;
		}
		if (type == ARCHIVE_SEC_EVENTS && len >= 8) {
			memcpy(&n, p + off + ARCHIVE_SEC_HDR_LEN + 4, 4);
			nev += n;
		}
		nsec++;
		off += ARCHIVE_SEC_HDR_LEN + len;
	}
}

static uint64_t hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static void report(const char *path, uint64_t h)
{
	struct report_opts o = {
		.format = h % 3,
		.sort = h / 3 % 5,
		.depth = h / 15 % 2 ? 2 : 0,
		.top = h / 30 % 2 ? 3 : 0,
		.no_percentiles = h / 60 % 2,
	};
	struct report *rep = NULL;
	struct bp_session s;

	switch (h / 120 % 5) {	/* the views */
	case 1: o.no_tree = true; break;
	case 2: o.tree_only = true; break;
	case 3: o.edges = true; break;
	case 4: o.marks = true; break;
	}
	session__init(&s);
	if (report__new(&o, &rep))
		abort();
	if (!report__read(rep, path, false, NULL, &s, NULL))
		report__print(rep, &s, sink);
	report__free(rep);
	session__free(&s);
}

static void diff(char *path, uint64_t h)
{
	char *paths[2] = { path, path }, *pb[2], *pn[2];
	struct diff *d = NULL;
	struct diff_opts o;
	size_t runs;

	diff__default_opts(&o);
	o.format = h % 4;
	o.mode = h / 4 % 3;
	o.depth = h / 12 % 2 ? 2 : 0;
	o.all_paths = h / 24 % 2;
	o.min_calls = h / 48 % 2 ? 2 : 20;
	if (h / 96 % 2)
		o.fail_above = 0.01;
	o.all_calls = h / 384 % 2;
	/* each side once, or twice (the test across runs) */
	runs = h / 192 % 2 ? 2 : 1;
	pb[0] = pb[1] = paths[0];
	pn[0] = pn[1] = paths[1];
	if (diff__new(&o, &d))
		abort();
	if (!diff__read(d, pb, runs, pn, runs) && !diff__compute(d)) {
		diff__print(d, sink);
		if (o.fail_above >= 0 && diff__mode(d) == DIFF_CALLS)
			diff__gate(d, sink);
	}
	diff__free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = hash(data, size);
	uint8_t *copy;
	char path[64];
	size_t i;
	int fd;

	if (!sink) {
		/* the exporters write to "-": standard output, here /dev/null */
		sink = fopen("/dev/null", "w");
		if (!sink || dup2(fileno(sink), STDOUT_FILENO) < 0)
			abort();
	}
	copy = malloc(size + 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	fix_end(copy, size);
	fd = fuzz__memfd(copy, size, path, sizeof(path));
	free(copy);
	fuzz__quiet();
	for (i = 0; exporter_table[i]; i++)
		(void)exporter__replay(path, false, NULL, exporter_table[i], "-", NULL);
	report(path, h);
	diff(path, h >> 32);
	fuzz__loud();
	close(fd);
	return 0;
}
