/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TANDEM_CTL_DATASET_H
#define TANDEM_CTL_DATASET_H

#include <stdint.h>

#include "files.h"

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
