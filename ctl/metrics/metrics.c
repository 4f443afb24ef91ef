// SPDX-License-Identifier: GPL-2.0
/*
 * The node's page-cache counters as Prometheus families (metrics.h). Names
 * follow the conventions lib/prom.c enforces: base units (bytes, not pages:
 * the tracker counts 4 KiB pages, tandem.ko pages of the page size),
 * counters end in _total; one sample per label set.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/internal.h"
#include "metrics/metrics.h"


static const struct {
	const char *name, *help;
	size_t off;
} count_families[] = {
	{ "tandem_tracker_miss_bytes_total",
	  "Dataset bytes the job's reads brought into the page cache (misses).",
	  offsetof(struct tandem_trk_counts, miss) },
	{ "tandem_tracker_own_hit_bytes_total",
	  "Dataset bytes the job read from pages it had loaded itself.",
	  offsetof(struct tandem_trk_counts, own_hit) },
	{ "tandem_tracker_shared_hit_bytes_total",
	  "Dataset bytes the job read from pages another job had loaded.",
	  offsetof(struct tandem_trk_counts, shared_hit) },
	{ "tandem_tracker_evicted_bytes_total",
	  "Dataset bytes the job had loaded that left the page cache.",
	  offsetof(struct tandem_trk_counts, evict) },
};

static void write_counts(struct tandem_prom *p, const char *node,
			 const struct tracker_snapshot *s)
{
	for (size_t f = 0; f < sizeof(count_families) / sizeof(count_families[0]); f++) {
		tandem_prom_family(p, count_families[f].name, TANDEM_PROM_COUNTER,
				   count_families[f].help);
		for (size_t i = 0; s && i < s->ncounts; i++) {
			const struct tracker_count_row *r = &s->counts[i];
			uint64_t pages;
			char id[16];
			struct tandem_prom_label l[] = {
				{ "node", node }, { "dataset", tracker_snapshot_dataset_name(s, r->key.dataset) },
				{ "job", tracker_snapshot_job_name(s, r->key.job) }, { "job_id", id },
			};

			memcpy(&pages, (const char *)&r->c + count_families[f].off, sizeof(pages));
			snprintf(id, sizeof(id), "%u", r->key.job);
			tandem_prom_sample(p, l, 4, pages * TANDEM_TRK_PAGE_SIZE);
		}
	}
}

/* the tracker's own limits: counts are low once page states were lost */
static void write_global(struct tandem_prom *p, const char *node,
			 const struct tracker_snapshot *s)
{
	struct tandem_prom_label l[] = { { "node", node } };

	tandem_prom_family(p, "tandem_tracker_page_states", TANDEM_PROM_GAUGE,
			   "Dataset pages the tracker follows now.");
	if (s)
		tandem_prom_sample(p, l, 1, (double)s->pages_tracked);
	tandem_prom_family(p, "tandem_tracker_page_states_max", TANDEM_PROM_GAUGE,
			   "Page states the tracker's map holds at most.");
	if (s)
		tandem_prom_sample(p, l, 1, (double)s->meta.max_pages);
	tandem_prom_family(p, "tandem_tracker_page_states_lost_total", TANDEM_PROM_COUNTER,
			   "Page states the tracker could not keep (its map was full): "
			   "the counts are low by as much.");
	if (s)
		tandem_prom_sample(p, l, 1, (double)s->overflow);
}

static void write_tracker(struct tandem_prom *p, const char *node,
			  const struct tracker_snapshot *s)
{
	write_counts(p, node, s);
	tandem_prom_family(p, "tandem_tracker_job_processes", TANDEM_PROM_GAUGE,
			   "Live processes of the tracker job.");
	for (size_t i = 0; s && i < s->njobs; i++) {
		char id[16];
		struct tandem_prom_label l[] = { { "node", node }, { "job", s->jobs[i].job.name },
						 { "job_id", id } };

		snprintf(id, sizeof(id), "%u", s->jobs[i].id);
		tandem_prom_sample(p, l, 3, s->jobs[i].nproc);
	}
	tandem_prom_family(p, "tandem_tracker_dataset_size_bytes", TANDEM_PROM_GAUGE,
			   "Size of the dataset's files registered with the tracker.");
	for (size_t i = 0; s && i < s->ndatasets; i++) {
		struct tandem_prom_label l[] = { { "node", node },
						 { "dataset", s->datasets[i].ds.name } };

		tandem_prom_sample(p, l, 2, s->datasets[i].ds.pages * TANDEM_TRK_PAGE_SIZE);
	}
	write_global(p, node, s);
}

/* tandem.ko's datasets, read once, written family by family */
struct mod_states {
	struct dataset_state *st;
	size_t n;
};

static int collect_state(void *arg, const struct dataset_state *st)
{
	struct mod_states *ms = arg;
	struct dataset_state *p = realloc(ms->st, (ms->n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	ms->st = p;
	ms->st[ms->n++] = *st;
	return 0;
}

static void write_module(struct tandem_prom *p, const char *node, const struct mod_states *ms)
{
	double psz = (double)sysconf(_SC_PAGESIZE);

	tandem_prom_family(p, "tandem_dataset_cached_bytes", TANDEM_PROM_GAUGE,
			   "Bytes of the dataset's files in the page cache (tandem.ko).");
	for (size_t i = 0; i < ms->n; i++) {
		struct tandem_prom_label l[] = { { "node", node }, { "dataset", ms->st[i].name } };

		tandem_prom_sample(p, l, 2, ms->st[i].pages_cached * psz);
	}
	tandem_prom_family(p, "tandem_dataset_resident_bytes", TANDEM_PROM_GAUGE,
			   "Bytes of the dataset in the page cache, per NUMA node (tandem.ko).");
	for (size_t i = 0; i < ms->n; i++) {
		for (int nd = 0; nd < DATASET_MAX_NODES; nd++) {
			char numa[12];
			struct tandem_prom_label l[] = { { "node", node },
							 { "dataset", ms->st[i].name },
							 { "numa_node", numa } };

			if (!ms->st[i].node_pages[nd])
				continue;
			snprintf(numa, sizeof(numa), "%d", nd);
			tandem_prom_sample(p, l, 3, ms->st[i].node_pages[nd] * psz);
		}
	}
	tandem_prom_family(p, "tandem_dataset_steered_bytes_total", TANDEM_PROM_COUNTER,
			   "Bytes of the dataset tandem.ko moved to its target node.");
	for (size_t i = 0; i < ms->n; i++) {
		struct tandem_prom_label l[] = { { "node", node }, { "dataset", ms->st[i].name } };

		tandem_prom_sample(p, l, 2, ms->st[i].cnt[TANDEM_CNT_STEERED] * psz);
	}
	tandem_prom_family(p, "tandem_dataset_prefetched_bytes_total", TANDEM_PROM_COUNTER,
			   "Bytes of the dataset tandem.ko read ahead into the page cache.");
	for (size_t i = 0; i < ms->n; i++) {
		struct tandem_prom_label l[] = { { "node", node }, { "dataset", ms->st[i].name } };

		tandem_prom_sample(p, l, 2, ms->st[i].cnt[TANDEM_CNT_PREFETCHED] * psz);
	}
}

int metrics_node_write(struct tandem_prom *p, const struct metrics_src *src)
{
	struct tracker_snapshot snap, *s = NULL;
	struct mod_states ms = { 0 };
	int err = 0, e;

	if (src->trk) {
		err = tracker_snapshot_read(src->trk, &snap);
		s = err ? NULL : &snap;
	}
	write_tracker(p, src->node, s);
	if (src->nl) {
		e = dataset_state_each(src->nl, collect_state, &ms);
		err = err ? err : e;
	}
	write_module(p, src->node, &ms);
	free(ms.st);
	e = metrics_scratch_write(p, src->node, src->nscratch);
	err = err ? err : e;
	if (s)
		tracker_snapshot_free(s);
	return err ? err : p->err;
}
