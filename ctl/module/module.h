/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TANDEM_CTL_DATASET_H
#define TANDEM_CTL_DATASET_H

#include <stdint.h>

#include "lib/files.h"
#include "tandem.h"

#define DATASET_MAX_NODES 64

/* A dataset's residency and counters, from DATASET_GET. */
struct dataset_state {
	uint32_t id;
	char name[TANDEM_NAME_MAX];
	uint64_t pages_cached;
	int32_t node;			/* own target node, -1 = cxl_node */
	uint32_t steer_pending;
	uint64_t cnt[__TANDEM_CNT_MAX];
	uint64_t node_pages[DATASET_MAX_NODES];
	uint8_t pf_state;
	uint64_t pf_done, pf_total, pf_elapsed_ns;
};

int dataset_state_get(uint32_t id, struct dataset_state *st);
/* one dataset's residency, text or JSON object */
void dataset_state_print(const char *key, const struct dataset_state *st);
/* every dataset's residency as a JSON array "datasets" (text: one block each) */
int dataset_residency_print_all(void);

/* "ID|NAME" -> id (a number is an id); 0 or -errno, printed */
int dataset_resolve(const char *arg, uint32_t *id);
/* register fl's paths with dataset id, in batches */
int dataset_add_files(uint32_t id, const struct file_list *fl, uint32_t *added,
		      uint32_t *dups);
int dataset_del(uint32_t id);
/*
 * Called after a dataset was registered with tandem.ko, so other consumers
 * (the tracker) can register the same files. A weak default does nothing.
 */
int dataset_registered_hook(uint32_t id, const char *name, const struct file_list *fl);

#endif
