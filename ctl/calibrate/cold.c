// SPDX-License-Identifier: GPL-2.0
/* Calibration samples, and making them cold (calibrate.h). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "lib/residency.h"

uint64_t cal_sample_count(const struct sample_set *ds, double bytes)
{
	double sum = 0;
	uint64_t n = 0;

	if (bytes <= 0)
		return ds->nsamples;
	while (n < ds->nsamples && sum < bytes)
		sum += ds->samples[n++].len;
	return n;
}

/* Files covered by the first n samples (samples are in file order). */
static uint32_t files_of(const struct sample_set *ds, uint64_t n)
{
	return n ? ds->samples[n - 1].file + 1 : 0;
}

int cal_resident(const struct sample_set *ds, uint64_t nsamples, double *frac)
{
	uint32_t nf = files_of(ds, nsamples);
	struct residency r = { 0 };
	int err;

	for (uint32_t f = 0; f < nf; f++) {
		err = residency_file(ds->files.paths[f], RESIDENCY_CACHED, -1, &r);
		if (err)
			return err;
	}
	*frac = r.pages ? (double)r.cached / r.pages : 0;
	return 0;
}

static int drop_page_cache(void)
{
	int fd, err = 0;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

int cal_make_cold(const struct sample_set *ds, uint64_t nsamples, enum cal_cold how,
		  double *resident)
{
	uint32_t nf = files_of(ds, nsamples);
	int err = 0;

	if (how == CAL_COLD_DROP_CACHES) {
		err = drop_page_cache();
	} else {
		for (uint32_t f = 0; f < nf && !err; f++) {
			int fd = open(ds->files.paths[f], O_RDONLY | O_CLOEXEC);

			if (fd < 0)
				return -errno;
			err = -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
	if (!err && resident)
		err = cal_resident(ds, nsamples, resident);
	return err;
}
