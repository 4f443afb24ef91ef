/* SPDX-License-Identifier: GPL-2.0 */
/* Inside ctl/metrics/ only: what scratch.c offers metrics.c. */
#ifndef TANDEM_CTL_METRICS_INTERNAL_H
#define TANDEM_CTL_METRICS_INTERNAL_H

#include <stddef.h>

#include "lib/prom.h"

/*
 * The scratch spaces' families (scratch.c), part of metrics_node_write():
 * per scratch (labels node, scratch, numa_node) its size, use, what waits to
 * drain, the files made durable and the last one's time. A scratch this
 * process may not walk (another user's) gets its size and use only.
 * *nscratch (if given) gets how many there are. 0 or the first error.
 */
int metrics_scratch_write(struct tandem_prom *p, const char *node, size_t *nscratch);

#endif
