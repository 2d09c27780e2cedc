// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Links the tracer makes for someone else (the overhead governor re-creates
 * them), and takes back at the end, so that tracer__detach() removes them
 * with its own care (targets held still, see trace.c).
 */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "symbols/binfile.h"
#include "skel/trace.skel.h"
#include "base/log.h"
#include "model/session.h"
#include "trace.h"
#include "trace_internal.h"

void tracer__warn_refused(const struct bp_session *s, const char *path, const uint64_t *refused,
			  size_t nrefused)
{
	size_t i;

	if (!nrefused)
		return;
	p_warn("the kernel refused to probe %zu function%s in %s (first instruction it "
	       "cannot single-step, e.g. a lock prefix); not traced:", nrefused,
	       nrefused == 1 ? "" : "s", binfile__name(path));
	for (i = 0; i < nrefused && i < 20; i++)
		fprintf(stderr, "    %s\n", session__func_name(s, (uint32_t)refused[i]));
	if (nrefused > 20)
		fprintf(stderr, "    ... and %zu more\n", nrefused - 20);
}

int tracer__attach_owned(struct tracer *t, const char *path, const unsigned long *offsets,
			 const uint64_t *cookies, size_t n, bool entry_only, uint64_t *refused,
			 size_t *nrefused, struct bpf_link ***links, size_t *nlinks)
{
	size_t from = t->nlinks, i;
	int err;

	err = tracer__attach(t, path, offsets, cookies, n, entry_only, refused, nrefused);
	if (err) {
		while (t->nlinks > from)
			bpf_link__destroy(t->links[--t->nlinks]);
		return err;
	}
	*nlinks = t->nlinks - from;
	*links = xcalloc(*nlinks ? *nlinks : 1, sizeof(**links));
	for (i = 0; i < *nlinks; i++)
		(*links)[i] = t->links[from + i];
	t->nlinks = from;
	return 0;
}

uint32_t *tracer__gov_groups(struct tracer *t)
{
	return t->skel->bss->gov_groups;
}

uint64_t tracer__gov_dropped_hits(struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->gov_dropped_hits, __ATOMIC_RELAXED);
}

int tracer__gov_dropped_fd(struct tracer *t)
{
	return bpf_map__fd(t->skel->maps.gov_dropped);
}

void tracer__adopt_links(struct tracer *t, struct bpf_link **links, size_t n, bool entry_only)
{
	size_t i;

	t->links = xrealloc(t->links, (t->nlinks + n) * sizeof(*t->links));
	t->kinds = xrealloc(t->kinds, (t->nlinks + n) * sizeof(*t->kinds));
	for (i = 0; i < n; i++) {
		/* attach_range() makes them in pairs: the return link, then the entry link */
		t->kinds[t->nlinks] = entry_only || i % 2 ? LINK_ENTRY : LINK_RETURN;
		t->links[t->nlinks++] = links[i];
	}
}
