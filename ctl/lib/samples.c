// SPDX-License-Identifier: GPL-2.0
/* A dataset directory scanned into files and samples (lib/samples.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/samples.h"

static int add_samples(struct sample_set *ds)
{
	uint64_t n = 0, rs = ds->record_size;

	for (uint32_t f = 0; f < ds->files.n; f++)
		n += rs ? (ds->files.sizes[f] + rs - 1) / rs : 1;
	ds->samples = calloc(n ? n : 1, sizeof(*ds->samples));
	if (!ds->samples)
		return -ENOMEM;
	for (uint32_t f = 0; f < ds->files.n; f++) {
		uint64_t size = ds->files.sizes[f];

		if (!rs) {
			ds->samples[ds->nsamples++] = (struct sample){ f, 0, size };
			continue;
		}
		for (uint64_t off = 0; off < size; off += rs)
			ds->samples[ds->nsamples++] = (struct sample){
				f, off, size - off < rs ? size - off : rs };
	}
	return 0;
}

int sample_set_scan(const char *dir, uint64_t record_size, struct sample_set *ds)
{
	char *arg = (char *)dir;
	int err;

	memset(ds, 0, sizeof(*ds));
	ds->record_size = record_size;
	ds->dir = strdup(dir);
	if (!ds->dir)
		return -ENOMEM;
	err = file_list_collect(&ds->files, &arg, 1);
	file_list_seal(&ds->files);
	if (!err && ds->files.n > UINT32_MAX)
		err = -E2BIG;
	err = err ?: add_samples(ds);
	if (!err && !ds->nsamples)
		err = -ENODATA;
	if (err)
		sample_set_free(ds);
	return err;
}

void sample_set_free(struct sample_set *ds)
{
	file_list_free(&ds->files);
	free(ds->samples);
	free(ds->dir);
	memset(ds, 0, sizeof(*ds));
}
