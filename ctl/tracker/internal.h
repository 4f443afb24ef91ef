/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the tracker library only: pins.c offers it to load.c. */
#ifndef TANDEM_CTL_TRACKER_INTERNAL_H
#define TANDEM_CTL_TRACKER_INTERNAL_H

/* remove every pin under DIR and DIR itself; detaches the programs */
int tracker_unpin_all(const char *dir);

#endif
