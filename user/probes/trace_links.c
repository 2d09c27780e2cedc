// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tracer's links: those it makes for someone else (the overhead governor
 * re-creates them), and takes back at the end, so that tracer__detach()
 * removes them with its own care (targets held still, see trace.c); their
 * removal, in parallel; and their hand-off to bpfprof-release (teardown.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "symbols/binfile.h"
#include "skel/trace.skel.h"
#include "base/log.h"
#include "base/util.h"
#include "model/session.h"
#include "trace.h"
#include "target/keeper.h"
#include "internal.h"

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

	/*
	 * Always an entry and a return link, never a session link: the
	 * governor re-links these groups, and a session link's return is seen
	 * by that link alone, so a call open across the re-link (main, a
	 * handler entered a moment before) would lose its end; a return link
	 * made anew sees the returns of calls entered before it.
	 */
	err = tracer_attach_kind(t, path, offsets, cookies, n, entry_only, false, refused, nrefused);
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

void tracer_destroy_kind(struct tracer *t, int kind)
{
	size_t i;

	for (i = 0; i < t->nlinks; i++)
		if (t->links[i] && t->kinds[i] == kind) {
			bpf_link__destroy(t->links[i]);
			t->links[i] = NULL;
		}
}

static void *destroy_one(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

void tracer_destroy_parallel(struct tracer *t, bool calls_only)
{
	const struct bpf_object_skeleton *sk = t->skel->skeleton;
	size_t i, n = 0, cap = t->nlinks + (sk ? sk->prog_cnt : 0);
	struct bpf_link **links = xcalloc(cap ? cap : 1, sizeof(*links));
	pthread_t *th = xcalloc(cap ? cap : 1, sizeof(*th));
	bool *started = xcalloc(cap ? cap : 1, sizeof(*started));

	/*
	 * The uprobe links, and the task tracepoint links too: removing a
	 * tracepoint probe also waits for a grace period (up to ~13 ms each
	 * here, one after the other when the skeleton is destroyed).
	 */
	for (i = 0; i < t->nlinks; i++) {
		if (!t->links[i] || (calls_only && t->kinds[i] == LINK_UNWIND))
			continue;
		links[n++] = t->links[i];
		t->links[i] = NULL;
	}
	for (i = 0; !calls_only && sk && i < (size_t)sk->prog_cnt; i++) {
		struct bpf_link **l = sk->progs[i].link;

		if (l && *l) {
			links[n++] = *l;
			*l = NULL;
		}
	}
	for (i = 0; i < n; i++) {
		started[i] = !pthread_create(&th[i], NULL, destroy_one, links[i]);
		if (!started[i])
			bpf_link__destroy(links[i]);	/* no thread: do it here */
	}
	for (i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	free(links);
	free(th);
	free(started);
}

void tracer__count_links(const struct tracer *t, size_t *made, size_t *uprobe, size_t *other)
{
	const struct bpf_object_skeleton *sk = t->skel->skeleton;
	size_t i;

	*made = t->nmade;
	*uprobe = *other = 0;
	for (i = 0; i < t->nlinks; i++)
		*uprobe += t->links[i] != NULL;
	for (i = 0; sk && i < (size_t)sk->prog_cnt; i++)
		*other += sk->progs[i].link && *sk->progs[i].link;
}

size_t tracer__keep_fds(const struct tracer *t, int *fds, size_t max)
{
	size_t n = 0;

	if (t->keeper && n < max)
		fds[n++] = keeper__fd(t->keeper);
	if (t->guard && n < max)
		fds[n++] = keeper__fd(t->guard);
	return n;
}

size_t tracer__link_fds(const struct tracer *t, int **fds)
{
	size_t i, n = 0;

	*fds = xcalloc(t->nlinks ? t->nlinks : 1, sizeof(**fds));
	for (i = 0; i < t->nlinks; i++)
		if (t->links[i] && bpf_link__fd(t->links[i]) >= 0)
			(*fds)[n++] = bpf_link__fd(t->links[i]);
	return n;
}

void tracer__disown(struct tracer *t)
{
	t->disowned = true;
}

void tracer__in_background(struct tracer *t)
{
	t->background = true;
}

/*
 * Without detaching: their descriptors are closed, the links stay while
 * bpfprof-release holds them; so does the keeper (or the guard), whose
 * socket is still open there.
 */
void tracer_drop_links(struct tracer *t)
{
	size_t i;

	t->fn = NULL;
	for (i = 0; i < t->nlinks; i++)
		if (t->links[i])
			bpf_link__destroy(t->links[i]);	/* a close: uprobe links have no detach */
	t->nlinks = 0;
	keeper__disown(t->keeper);
	keeper__disown(t->guard);
	t->keeper = t->guard = NULL;
}
