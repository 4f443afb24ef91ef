/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node's page-cache counters in Prometheus' text format (lib/prom.h),
 * for node_exporter's textfile collector: per tracker job and dataset the
 * misses, own and shared hits and evictions; per dataset its size, and from
 * tandem.ko its residency per NUMA node and the bytes it steered and
 * prefetched; per scratch space its use and drain (scratch.c). `tandemctl
 * stats --prometheus` writes them alone; the node agent (agent/) into its own
 * file, next to its decisions.
 * Documentation/slurm.md lists the families.
 */
#ifndef TANDEM_CTL_METRICS_H
#define TANDEM_CTL_METRICS_H

#include "lib/prom.h"
#include "module/module.h"
#include "tracker/tracker.h"

struct metrics_src {
	const char *node;		/* the "node" label on every sample */
	struct tracker *trk;		/* NULL: no tracker families' samples */
	struct tnl *nl;			/* NULL: no tandem.ko samples */
	size_t *nscratch;		/* non-NULL: gets the number of scratch spaces */
};

/*
 * Every family, in a fixed order, each once (a source that is missing
 * leaves its families without samples). 0, or the first error (of the
 * tracker, of tandem.ko, or of the writer).
 */
int metrics_node_write(struct tandem_prom *p, const struct metrics_src *src);

#endif
