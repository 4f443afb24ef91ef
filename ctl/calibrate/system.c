// SPDX-License-Identifier: GPL-2.0
/*
 * The system part of a profile, all but its instances: the dataset, storage
 * B(1..k), memory, CPUs (calibrate.h: cal_profile()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "lib/log.h"
#include "lib/util.h"

static void stamp(struct profile *p)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(p->created, sizeof(p->created), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int measure_bw(const struct cal_opts *o, const struct sample_set *ds,
		      struct profile *p)
{
	int kmax = o->max_readers > 0 ? o->max_readers : 2;
	uint64_t n = cal_sample_count(ds, o->sample_bytes);
	int err = 0;

	if (kmax > MODEL_MAX_BW)
		kmax = MODEL_MAX_BW;
	if (n < (uint64_t)kmax)
		return -ENODATA;
	p->nbw = 0;
	for (int k = 1; k <= kmax && !err; k++) {
		struct cal_bw bw;

		err = cal_bandwidth(ds, n, k, o->cold, o->bw_seconds, &bw);
		if (err)
			break;
		if (bw.resident_before > 0.05)
			ctl_err("warning: %.0f%% of the sample stayed cached after %s: "
				"B(%d) is not a cold measurement", bw.resident_before * 100,
				o->cold == CAL_COLD_FADVISE ? "fadvise" : "drop_caches", k);
		if (o->verbose)
			fprintf(stderr, "B(%d) = %.1f MiB/s (%.1f MiB in %.2f s)\n", k,
				bw.bps / 1048576, bw.bytes / 1048576, bw.seconds);
		p->bw[p->nbw++] = bw.bps;
		p->sample_bytes = bw.bytes;
	}
	/* leave the dataset cold, as training jobs will find it (unless warm runs follow) */
	return err || o->keep_cached ? err : cal_make_cold(ds, n, o->cold, NULL);
}

int cal_profile(const struct cal_opts *o, const char *dir, const struct sample_set *ds,
		struct profile *p)
{
	char *abs = realpath(dir, NULL);
	double t0 = now_s();
	int err;

	stamp(p);
	free(p->dataset_path);
	p->dataset_path = abs ? abs : strdup(dir);
	if (!p->dataset_path)
		return -ENOMEM;
	p->dataset_bytes = ds->files.bytes;
	p->files = ds->files.n;
	p->record_size = ds->record_size;
	p->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(p->cold_method, sizeof(p->cold_method), "%s",
		 o->cold == CAL_COLD_FADVISE ? "fadvise" : "drop-caches");
	err = cal_memory(p);
	err = err ?: measure_bw(o, ds, p);
	p->storage_seconds = now_s() - t0;
	return err;
}
