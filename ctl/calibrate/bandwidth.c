// SPDX-License-Identifier: GPL-2.0
/* Cold-read bandwidth with k concurrent readers (calibrate.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "lib/util.h"

#define CAL_CHUNK	(1u << 20)

struct bw_run {
	const struct sample_set *ds;
	uint64_t nsamples;
	int k;
	pthread_mutex_t mu;
	pthread_cond_t go_cv;
	bool go;
	atomic_bool stop;
	atomic_uint_fast64_t bytes;
	uint64_t bytes_at_stop;
	double t_start, t_stop;
	double limit;		/* s; 0: until the first reader runs out */
	int err;
};

struct bw_reader {
	struct bw_run *run;
	int idx;
	pthread_t th;
};

static int bw_read_sample(struct bw_run *r, const struct sample *s, unsigned char *buf)
{
	int fd = open(r->ds->files.paths[s->file], O_RDONLY | O_CLOEXEC), err = 0;

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
		if (r->limit > 0 && now_s() - r->t_start >= r->limit)
			break;
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
	for (uint64_t s = rd->idx; !err && s < r->nsamples && !atomic_load(&r->stop); s += r->k) {
		err = bw_read_sample(r, &r->ds->samples[s], buf);
		if (r->limit > 0 && now_s() - r->t_start >= r->limit)
			break;
	}
	pthread_mutex_lock(&r->mu);
	/* the first reader to run out (or the time limit) ends the window of k streams */
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

int cal_bandwidth(const struct sample_set *ds, uint64_t nsamples, int k,
		  enum cal_cold how, double limit, struct cal_bw *out)
{
	struct bw_run r = { .ds = ds, .nsamples = nsamples, .k = k, .limit = limit };
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
