/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The release-engine hooks `tandemctl run` installs (ctl/release.h): the
 * dataset goes to tandem.ko when the module is loaded (steering, residency
 * per node) and to the BPF tracker (loaded when it is not), every instance
 * becomes a tracker job before it execs, progress:F reads the tracker's
 * per-job counters. Each part is optional and the run goes on without it.
 */
#ifndef TANDEM_CTL_RUN_HOOKS_H
#define TANDEM_CTL_RUN_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "release/release.h"
#include "tandem.h"

struct run_hooks_opts {
	const char *name;	/* dataset name; NULL: the directory's last component */
	bool module;		/* register with tandem.ko when it is loaded */
	bool tracker;		/* track the instances (load the tracker if needed) */
};

/* What the hooks did, for the report. */
struct run_hooks_state {
	char name[TANDEM_NAME_MAX];
	bool module;			/* registered with tandem.ko */
	uint32_t module_id;
	bool module_created;		/* by this run (else it existed) */
	uint32_t files_added, files_present;
	bool tracker;			/* instances tracked */
	uint32_t tracker_dataset;
	bool tracker_loaded_here;
	/* after the run: "tandem.ko", "mincore" (this process, move_pages) or NULL */
	const char *residency_source;
	uint64_t steered, prefetched;	/* tandem.ko's counters of the dataset */
};

/* The hooks for these options; the result lives until the next call. */
const struct rel_hooks *run_hooks(const struct run_hooks_opts *o);
const struct run_hooks_state *run_hooks_state(void);

/*
 * Bytes of the dataset's files in the page cache per NUMA node, found
 * without tandem.ko: mincore(2) for what is cached, then the cached pages
 * are mapped and move_pages(2) says where they are (no I/O: pages not
 * cached are never touched). bytes[0..*nnodes) is filled.
 */
int run_residency_scan(const struct lg_dataset *ds, double *bytes, int max_nodes, int *nnodes);

#endif
