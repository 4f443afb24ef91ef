/* SPDX-License-Identifier: GPL-2.0 */
/* The tracker's state as `stats` prints it: shared by stats and tracker status. */
#ifndef TANDEM_CTL_CMD_STATS_H
#define TANDEM_CTL_CMD_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "tracker/tracker.h"

/* --job and --dataset, resolved to the tracker's ids */
struct stats_filter {
	bool has_job, has_dataset;
	uint32_t job, dataset;
};

/* The tracker: its pin directory, map use, attach points and global counters. */
void stats_print_tracker(const struct tracker_snapshot *s);
/* Each dataset (f->dataset alone when has_dataset): size, all jobs' misses, hits, evictions. */
void stats_print_dataset_totals(const struct tracker_snapshot *s, const struct stats_filter *f);

#endif
