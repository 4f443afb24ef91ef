// SPDX-License-Identifier: GPL-2.0
/* Calibration measurements (see calibrate.h). */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "cli/cmd.h"
#include "lib/procio.h"
#include "lib/util.h"

#define CAL_CHUNK	(1u << 20)

uint64_t cal_sample_count(const struct lg_dataset *ds, double bytes)
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
static uint32_t files_of(const struct lg_dataset *ds, uint64_t n)
{
	return n ? ds->samples[n - 1].file + 1 : 0;
}

static int file_resident(const char *path, uint64_t *pages, uint64_t *res)
{
	long psz = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	unsigned char *vec = NULL;
	uint64_t size, np;
	void *map;

	if (fd < 0)
		return -errno;
	size = lseek(fd, 0, SEEK_END);
	np = (size + psz - 1) / psz;
	if (!np)
		goto close_fd;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto close_fd;
	}
	vec = malloc(np);
	if (!vec || mincore(map, size, vec))
		err = vec ? -errno : -ENOMEM;
	for (uint64_t i = 0; !err && i < np; i++)
		*res += vec[i] & 1;
	*pages += np;
	free(vec);
	munmap(map, size);
close_fd:
	close(fd);
	return err;
}

int cal_resident(const struct lg_dataset *ds, uint64_t nsamples, double *frac)
{
	uint64_t pages = 0, res = 0;
	uint32_t nf = files_of(ds, nsamples);
	int err;

	for (uint32_t f = 0; f < nf; f++) {
		err = file_resident(ds->paths[f], &pages, &res);
		if (err)
			return err;
	}
	*frac = pages ? (double)res / pages : 0;
	return 0;
}

static int drop_caches(void)
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

int cal_make_cold(const struct lg_dataset *ds, uint64_t nsamples, enum cal_cold how,
		  double *resident)
{
	uint32_t nf = files_of(ds, nsamples);
	int err = 0;

	if (how == CAL_COLD_DROP_CACHES) {
		err = drop_caches();
	} else {
		for (uint32_t f = 0; f < nf && !err; f++) {
			int fd = open(ds->paths[f], O_RDONLY | O_CLOEXEC);

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

/* ---- bandwidth ---- */

struct bw_run {
	const struct lg_dataset *ds;
	uint64_t nsamples;
	int k;
	pthread_mutex_t mu;
	pthread_cond_t go_cv;
	bool go;
	atomic_bool stop;
	atomic_uint_fast64_t bytes;
	uint64_t bytes_at_stop;
	double t_start, t_stop;
	int err;
};

struct bw_reader {
	struct bw_run *run;
	int idx;
	pthread_t th;
};

static int bw_read_sample(struct bw_run *r, const struct lg_sample *s, unsigned char *buf)
{
	int fd = open(r->ds->paths[s->file], O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	for (uint64_t done = 0; done < s->len && !atomic_load(&r->stop);) {
		size_t n = s->len - done < CAL_CHUNK ? s->len - done : CAL_CHUNK;
		ssize_t got = pread(fd, buf, n, s->off + done);

		if (got <= 0) {
			err = got ? -errno : -EIO;
			break;
		}
		done += got;
		atomic_fetch_add(&r->bytes, got);
	}
	close(fd);
	return err;
}

static void *bw_reader_fn(void *arg)
{
	struct bw_reader *rd = arg;
	struct bw_run *r = rd->run;
	unsigned char *buf = malloc(CAL_CHUNK);
	int err = buf ? 0 : -ENOMEM;

	pthread_mutex_lock(&r->mu);
	while (!r->go)
		pthread_cond_wait(&r->go_cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	for (uint64_t s = rd->idx; !err && s < r->nsamples && !atomic_load(&r->stop); s += r->k)
		err = bw_read_sample(r, &r->ds->samples[s], buf);
	pthread_mutex_lock(&r->mu);
	/* the first reader to run out ends the window of k concurrent streams */
	if (!atomic_exchange(&r->stop, true)) {
		r->t_stop = now_s();
		r->bytes_at_stop = atomic_load(&r->bytes);
	}
	if (err && !r->err)
		r->err = err;
	pthread_mutex_unlock(&r->mu);
	free(buf);
	return NULL;
}

static int bw_threads(struct bw_run *r, struct bw_reader *rd)
{
	int started = 0, err = 0;

	for (; started < r->k; started++) {
		rd[started] = (struct bw_reader){ .run = r, .idx = started };
		err = -pthread_create(&rd[started].th, NULL, bw_reader_fn, &rd[started]);
		if (err)
			break;
	}
	pthread_mutex_lock(&r->mu);
	if (err)
		atomic_store(&r->stop, true);	/* the started ones exit at once */
	r->t_start = now_s();
	r->go = true;
	pthread_cond_broadcast(&r->go_cv);
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < started; i++)
		pthread_join(rd[i].th, NULL);
	return err;
}

int cal_bandwidth(const struct lg_dataset *ds, uint64_t nsamples, int k,
		  enum cal_cold how, struct cal_bw *out)
{
	struct bw_run r = { .ds = ds, .nsamples = nsamples, .k = k };
	struct bw_reader *rd = calloc(k, sizeof(*rd));
	int err;

	memset(out, 0, sizeof(*out));
	if (!rd || k < 1 || nsamples < (uint64_t)k) {
		free(rd);
		return rd ? -EINVAL : -ENOMEM;
	}
	err = cal_make_cold(ds, nsamples, how, &out->resident_before);
	if (err)
		goto free_rd;
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.go_cv, NULL);
	err = bw_threads(&r, rd);
	err = err ?: r.err;
	pthread_cond_destroy(&r.go_cv);
	pthread_mutex_destroy(&r.mu);
	out->bytes = r.bytes_at_stop;
	out->seconds = r.t_stop - r.t_start;
	out->bps = out->seconds > 0 ? out->bytes / out->seconds : 0;
free_rd:
	free(rd);
	return err;
}

/* ---- the storage and memory part of a profile ---- */

static void stamp(struct profile *p)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(p->created, sizeof(p->created), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int measure_bw(const struct cal_opts *o, const struct lg_dataset *ds,
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

		err = cal_bandwidth(ds, n, k, o->cold, &bw);
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
	/* leave the dataset cold, as training jobs will find it */
	return err ?: cal_make_cold(ds, n, o->cold, NULL);
}

int cal_profile(const struct cal_opts *o, const char *dir, const struct lg_dataset *ds,
		struct profile *p)
{
	char *abs = realpath(dir, NULL);
	int err;

	stamp(p);
	free(p->dataset_path);
	p->dataset_path = abs ? abs : strdup(dir);
	if (!p->dataset_path)
		return -ENOMEM;
	p->dataset_bytes = ds->bytes;
	p->files = ds->nfiles;
	p->record_size = ds->record_size;
	p->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(p->cold_method, sizeof(p->cold_method), "%s",
		 o->cold == CAL_COLD_FADVISE ? "fadvise" : "drop-caches");
	err = cal_memory(p);
	return err ?: measure_bw(o, ds, p);
}
