/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by ctl/tracker.c and ctl/tracker_load.c only. */
#ifndef TANDEM_CTL_TRACKER_PRIV_H
#define TANDEM_CTL_TRACKER_PRIV_H

#include <limits.h>

/* remove every pin under DIR and DIR itself; detaches the programs */
int tracker_unpin_all(const char *dir);

#endif
