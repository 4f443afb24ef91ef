// SPDX-License-Identifier: GPL-2.0
/*
 * Loadgen run: reader threads fill a prefetch queue of batches in epoch
 * order; the main thread is the training step, taking batches in order and
 * sleeping for the compute time. As in PyTorch's DataLoader (without
 * persistent workers), prefetching does not cross an epoch boundary.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loadgen/loadgen.h"
#include "lib/util.h"

#define LG_READ_CHUNK	(1u << 20)
#define LG_HDR		32

struct lg_run {
	const struct sample_set *ds;
	const struct lg_opts *o;
	pthread_mutex_t mu;
	pthread_cond_t to_readers, to_step;
	uint32_t *order;	/* samples of the current epoch */
	uint64_t nsamples;	/* per epoch */
	uint64_t nb;		/* batches per epoch */
	uint64_t claimed;	/* next batch a reader takes */
	uint64_t fetched;	/* batches the step has taken */
	uint8_t *ready;		/* per batch of the current epoch */
	uint64_t ep_bytes;
	bool stop;
	int err;
	uint64_t verify_errors;
	uint64_t *file_seed;	/* for --verify: seed from each file's header */
	struct lg_ckpt_state *ck;	/* --checkpoint-dir, or NULL */
	struct lg_result *res;
};

void lg_opts_default(struct lg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->epochs = 1;
	o->shuffle = true;
	o->seed = 1;
	o->threads = 1;
	o->queue = 8;
	o->batch = 1;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (s > 0 && clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Decoding stand-in: burn CPU time, not wall time, so contention shows. */
static void burn_cpu(double s)
{
	struct timespec a, b;
	volatile uint64_t x = 0;

	if (s <= 0)
		return;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 10000; i++)
			x += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < s);
}

static int read_sample(struct lg_run *r, const struct sample *s, unsigned char *buf,
		       bool *bad)
{
	const char *path = r->ds->files.paths[s->file];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	uint64_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < s->len) {
		size_t n = s->len - done < LG_READ_CHUNK ? s->len - done : LG_READ_CHUNK;
		ssize_t got = pread(fd, buf, n, s->off + done);

		if (got <= 0) {
			err = got < 0 ? -errno : -EIO;
			break;
		}
		if (r->o->verify && !lg_check(buf, s->off + done, got, r->file_seed[s->file],
					      s->file, r->ds->files.sizes[s->file]))
			*bad = true;
		done += got;
	}
	close(fd);
	return err;
}

static int read_batch(struct lg_run *r, uint64_t b, unsigned char *buf, uint64_t *bytes)
{
	uint64_t first = b * r->o->batch, last = first + r->o->batch;
	int err = 0;

	if (last > r->nsamples)
		last = r->nsamples;
	*bytes = 0;
	for (uint64_t k = first; k < last && !err; k++) {
		const struct sample *s = &r->ds->samples[r->order[k]];
		bool bad = false;

		err = read_sample(r, s, buf, &bad);
		if (bad) {
			pthread_mutex_lock(&r->mu);
			r->verify_errors++;
			pthread_mutex_unlock(&r->mu);
		}
		burn_cpu(r->o->decode);
		*bytes += s->len;
	}
	return err;
}

static void *reader(void *arg)
{
	struct lg_run *r = arg;
	unsigned char *buf = malloc(LG_READ_CHUNK);

	pthread_mutex_lock(&r->mu);
	if (!buf)
		r->err = -ENOMEM;
	while (!r->stop && !r->err) {
		uint64_t b, bytes;
		int err;

		if (r->claimed >= r->nb || r->claimed >= r->fetched + r->o->queue) {
			pthread_cond_wait(&r->to_readers, &r->mu);
			continue;
		}
		b = r->claimed++;
		pthread_mutex_unlock(&r->mu);
		err = read_batch(r, b, buf, &bytes);
		pthread_mutex_lock(&r->mu);
		if (err && !r->err)
			r->err = err;
		r->ready[b] = 1;
		r->ep_bytes += bytes;
		pthread_cond_broadcast(&r->to_step);
	}
	pthread_cond_broadcast(&r->to_step);
	pthread_mutex_unlock(&r->mu);
	free(buf);
	return NULL;
}

/* Wait for batch b; returns the wait in seconds, or < 0 on a reader error. */
static double fetch_batch(struct lg_run *r, uint64_t b)
{
	double t0 = now_s(), waited;

	pthread_mutex_lock(&r->mu);
	while (!r->ready[b] && !r->err)
		pthread_cond_wait(&r->to_step, &r->mu);
	waited = r->err ? -1 : now_s() - t0;
	r->fetched = b + 1;
	pthread_cond_broadcast(&r->to_readers);
	pthread_mutex_unlock(&r->mu);
	return waited;
}

static void start_epoch(struct lg_run *r, uint32_t e)
{
	pthread_mutex_lock(&r->mu);
	lg_order(r->ds->nsamples, r->o->seed, e, r->o->shuffle, r->order);
	memset(r->ready, 0, r->nb);
	r->claimed = 0;
	r->fetched = 0;
	r->ep_bytes = 0;
	pthread_cond_broadcast(&r->to_readers);
	pthread_mutex_unlock(&r->mu);
}

static int run_epoch(struct lg_run *r, uint32_t e, double t_run, FILE *tl,
		     uint64_t *iter, struct lg_epoch *ep)
{
	int err;

	ep->start = now_s() - t_run;
	start_epoch(r, e);
	for (uint64_t b = 0; b < r->nb; b++) {
		double t0 = now_s(), w = fetch_batch(r, b), c0;

		if (w < 0)
			return r->err;
		c0 = now_s();
		sleep_s(r->o->compute);
		ep->wait += w;
		if (tl)
			fprintf(tl, "%llu,%u,%llu,%.6f,%.6f,%.6f\n", (unsigned long long)(*iter),
				e, (unsigned long long)b, t0 - t_run, w, now_s() - c0);
		(*iter)++;
		err = lg_ckpt_step(r->ck, *iter, t_run, r->res);
		if (err)
			return err;
	}
	ep->end = now_s() - t_run;
	pthread_mutex_lock(&r->mu);
	ep->bytes = r->ep_bytes;
	pthread_mutex_unlock(&r->mu);
	ep->samples = r->nsamples;
	return 0;
}

/* --verify: each file's seed is in its header */
static int read_seeds(struct lg_run *r)
{
	r->file_seed = calloc(r->ds->files.n, sizeof(uint64_t));
	if (!r->file_seed)
		return -ENOMEM;
	for (uint32_t f = 0; f < r->ds->files.n; f++) {
		unsigned char h[LG_HDR];
		int fd = open(r->ds->files.paths[f], O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? pread(fd, h, sizeof(h), 0) : -1;

		if (fd >= 0)
			close(fd);
		if (n != LG_HDR || memcmp(h, "TNDMLG01", 8))
			return -EBADMSG;
		for (int i = 7; i >= 0; i--)
			r->file_seed[f] = r->file_seed[f] << 8 | h[8 + i];
	}
	return 0;
}

static int run_setup(struct lg_run *r, const struct sample_set *ds, const struct lg_opts *o,
		     struct lg_result *res)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->ds = ds;
	r->o = o;
	r->res = res;
	r->nsamples = o->limit && o->limit < ds->nsamples ? o->limit : ds->nsamples;
	r->nb = (r->nsamples + o->batch - 1) / o->batch;
	r->order = calloc(ds->nsamples, sizeof(uint32_t));
	r->ready = calloc(r->nb ? r->nb : 1, 1);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->to_readers, NULL);
	pthread_cond_init(&r->to_step, NULL);
	if (!r->order || !r->ready)
		return -ENOMEM;
	err = lg_ckpt_open(o, &r->ck);
	if (err)
		return err;
	return o->verify ? read_seeds(r) : 0;
}

static void run_teardown(struct lg_run *r)
{
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->to_readers);
	pthread_cond_destroy(&r->to_step);
	free(r->order);
	free(r->ready);
	free(r->file_seed);
	lg_ckpt_close(r->ck);
}

static int run_epochs(struct lg_run *r, struct lg_result *res, FILE *tl)
{
	double t_run = now_s();
	uint64_t iter = 0;
	int err = 0;

	for (uint32_t e = 0; e < r->o->epochs && !err; e++) {
		err = run_epoch(r, e, t_run, tl, &iter, &res->ep[e]);
		if (err)
			break;
		res->epochs++;
		res->bytes += res->ep[e].bytes;
		res->samples += res->ep[e].samples;
		res->wait += res->ep[e].wait;
	}
	res->total = now_s() - t_run;
	return err;
}

int lg_run(const struct sample_set *ds, const struct lg_opts *o, struct lg_result *res)
{
	pthread_t *th = calloc(o->threads ? o->threads : 1, sizeof(pthread_t));
	FILE *tl = NULL;
	struct lg_run r;
	uint32_t started = 0;
	int err;

	memset(res, 0, sizeof(*res));
	res->ep = calloc(o->epochs ? o->epochs : 1, sizeof(*res->ep));
	if (!th || !res->ep || !o->threads || !o->batch || !o->queue) {
		free(th);
		return !th || !res->ep ? -ENOMEM : -EINVAL;
	}
	err = run_setup(&r, ds, o, res);
	if (!err && o->timeline) {
		tl = fopen(o->timeline, "w");
		if (!tl)
			err = -errno;
		else
			fprintf(tl, "iter,epoch,batch,t_s,wait_s,compute_s\n");
	}
	/* readers idle until the first epoch's order is set */
	r.claimed = r.nb;
	for (; !err && started < o->threads; started++)
		err = -pthread_create(&th[started], NULL, reader, &r);
	if (!err)
		err = run_epochs(&r, res, tl);
	pthread_mutex_lock(&r.mu);
	r.stop = true;
	pthread_cond_broadcast(&r.to_readers);
	pthread_mutex_unlock(&r.mu);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	res->verify_errors = r.verify_errors;
	if (tl && fclose(tl) && !err)
		err = -errno;
	run_teardown(&r);
	free(th);
	return err;
}

void lg_result_free(struct lg_result *res)
{
	free(res->ep);
	free(res->ckpt);
	memset(res, 0, sizeof(*res));
}
