/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A dataset as training jobs read it: its files, by the dataset walk
 * (lib/files.h), and its samples, each a whole file or one record of a
 * file. run, calibrate, the release engine and loadgen all take a dataset
 * directory this way.
 */
#ifndef TANDEM_CTL_SAMPLES_H
#define TANDEM_CTL_SAMPLES_H

#include <stdint.h>

#include "lib/files.h"

/* One training sample: a whole file, or one record of a large file. */
struct sample {
	uint32_t file;		/* index in files */
	uint64_t off, len;
};

struct sample_set {
	char *dir;			/* as given */
	struct file_list files;		/* in walk order; files.n fits in uint32_t */
	uint64_t record_size;		/* 0: one sample per file */
	uint64_t nsamples;
	struct sample *samples;		/* file by file, record by record */
};

/*
 * The files of dir by the dataset walk (lib/files.h: recursive, in name
 * order, hidden names, special files and second links to a file skipped;
 * symbolic links followed), as samples. -ENODATA: no files; -E2BIG: more
 * than UINT32_MAX files; other errors printed by the walk.
 */
int sample_set_scan(const char *dir, uint64_t record_size, struct sample_set *ds);
void sample_set_free(struct sample_set *ds);

#endif
