/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the tracker library only: pins.c offers it to load.c. */
#ifndef TANDEM_CTL_TRACKER_INTERNAL_H
#define TANDEM_CTL_TRACKER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* remove every pin under DIR and DIR itself; detaches the programs */
int tracker_unpin_all(const char *dir);
/*
 * A load pins everything in a staging directory next to DIR,
 * "DIR-loading-PID" (bpffs refuses names with a dot), and renames it to DIR when done, so DIR is either
 * absent or complete. Writes the staging path for this process.
 */
void tracker_staging_dir(const char *dir, char *buf, size_t len);
/*
 * What an interrupted load left: staging directories of processes that are
 * gone, and DIR itself when it holds pins but no meta (a load by a version
 * that pinned in place); only a directory that holds nothing but names a
 * load pins (a pin directory set to hold other pins is left alone). Returns
 * how many it removed.
 */
int tracker_remove_partial(const char *dir);
/* a name a load pins: one of its maps, or link_<program> */
bool tracker_pin_name_ours(const char *name);

#endif
