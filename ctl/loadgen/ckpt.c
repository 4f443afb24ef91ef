// SPDX-License-Identifier: GPL-2.0
/*
 * Loadgen checkpoints: the pattern of torch.save(state, tmp); os.replace(tmp,
 * path) every K steps, from the training step's thread (the readers go on
 * prefetching meanwhile, as DataLoader workers do). No fsync: torch.save does
 * not sync either; durability is the store's (or the scratch drainer's) job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loadgen/loadgen.h"
#include "lib/log.h"
#include "lib/util.h"

#define LG_CKPT_CHUNK	(4u << 20)	/* write() size, as a serializer's buffer */

struct lg_ckpt_state {
	const struct lg_opts *o;
	unsigned char *state;	/* the "model and optimizer" */
	unsigned char *snap;	/* target of the in-memory copy */
};

int lg_ckpt_open(const struct lg_opts *o, struct lg_ckpt_state **out)
{
	struct lg_ckpt_state *st;
	uint64_t x = o->seed | 1;

	*out = NULL;
	if (!o->ckpt_dir)
		return 0;
	if (!o->ckpt_size || !o->ckpt_every)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->o = o;
	st->state = malloc(o->ckpt_size);
	st->snap = malloc(o->ckpt_size);
	if (!st->state || !st->snap) {
		lg_ckpt_close(st);
		return -ENOMEM;
	}
	/* touch both, so neither copy nor write pays first-touch faults */
	for (uint64_t i = 0; i < o->ckpt_size; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		st->state[i] = (unsigned char)x;
	}
	memset(st->snap, 0, o->ckpt_size);
	*out = st;
	return 0;
}

void lg_ckpt_close(struct lg_ckpt_state *st)
{
	if (!st)
		return;
	free(st->state);
	free(st->snap);
	free(st);
}

static int write_all(int fd, const unsigned char *p, uint64_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len < LG_CKPT_CHUNK ? len : LG_CKPT_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/* The save: tmp name, write, close, rename over the final name. */
static int save(struct lg_ckpt_state *st, uint64_t step)
{
	char tmp[4096], path[4096];
	int fd, err;

	snprintf(tmp, sizeof(tmp), "%s/.ckpt-%06llu.bin.tmp", st->o->ckpt_dir,
		 (unsigned long long)step);
	snprintf(path, sizeof(path), "%s/ckpt-%06llu.bin", st->o->ckpt_dir,
		 (unsigned long long)step);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_all(fd, st->state, st->o->ckpt_size);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	if (err)
		ctl_err("checkpoint %s: %s", path, strerror(-err));
	return err ? -ECANCELED : 0;
}

static int push(struct lg_result *res, const struct lg_ckpt *c)
{
	struct lg_ckpt *n = realloc(res->ckpt, (res->nckpt + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	res->ckpt = n;
	res->ckpt[res->nckpt++] = *c;
	return 0;
}

/*
 * The same bytes copied into memory just mapped: the page faults and zeroing
 * a snapshot into new memory (or a tmpfs write) pays on top of the copy.
 */
static double copy_new(struct lg_ckpt_state *st)
{
	double t0 = now_s(), t;
	void *p = mmap(NULL, st->o->ckpt_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	memcpy(p, st->state, st->o->ckpt_size);
	t = now_s() - t0;
	munmap(p, st->o->ckpt_size);
	return t;
}

/* After step (1-based) of the run: a checkpoint if it is due. */
int lg_ckpt_step(struct lg_ckpt_state *st, uint64_t step, double t_run, struct lg_result *res)
{
	struct lg_ckpt c = { .step = step };
	double t0;
	int err;

	if (!st || step % st->o->ckpt_every)
		return 0;
	/* the state changes between checkpoints: stamp the step into it */
	memcpy(st->state, &step, sizeof(step) < st->o->ckpt_size ? sizeof(step) :
	       st->o->ckpt_size);
	t0 = now_s();
	memcpy(st->snap, st->state, st->o->ckpt_size);
	c.copy = now_s() - t0;
	c.copy_new = copy_new(st);
	if (c.copy_new < 0)
		return -ENOMEM;
	c.measure = now_s() - t0;
	t0 = now_s();
	err = save(st, step);
	c.stall = now_s() - t0;
	c.at = now_s() - t_run;
	return err ?: push(res, &c);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, uint32_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void lg_ckpt_stats(const struct lg_result *res, double *stall_med, double *stall_max,
		   double *copy_med, double *copy_new_med)
{
	double *v = res->nckpt ? calloc(res->nckpt, sizeof(*v)) : NULL;

	*stall_med = *stall_max = *copy_med = *copy_new_med = 0;
	if (!v)
		return;
	for (uint32_t i = 0; i < res->nckpt; i++) {
		v[i] = res->ckpt[i].stall;
		if (v[i] > *stall_max)
			*stall_max = v[i];
	}
	*stall_med = median(v, res->nckpt);
	for (uint32_t i = 0; i < res->nckpt; i++)
		v[i] = res->ckpt[i].copy;
	*copy_med = median(v, res->nckpt);
	for (uint32_t i = 0; i < res->nckpt; i++)
		v[i] = res->ckpt[i].copy_new;
	*copy_new_med = median(v, res->nckpt);
	free(v);
}
