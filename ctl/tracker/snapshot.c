// SPDX-License-Identifier: GPL-2.0
/*
 * Read every tracker counter into one snapshot: per-CPU values summed,
 * jobs, datasets, and the page-state overflow worked out from the maps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "tracker/tracker.h"

/*
 * Walk a hash map: for each key, read the value (per-CPU maps fill
 * ncpus copies of value_size) and hand both to FN.
 */
static int map_walk(int fd, size_t key_size, size_t value_size, int ncpus,
		    int (*fn)(void *ctx, const void *key, const void *values),
		    void *ctx)
{
	char key[64], prev[64];
	bool first = true;
	void *values;
	int err = 0;

	if (key_size > sizeof(key))
		return -EINVAL;
	values = calloc(ncpus, value_size);
	if (!values)
		return -ENOMEM;
	while (!err && !bpf_map_get_next_key(fd, first ? NULL : prev, key)) {
		first = false;
		memcpy(prev, key, key_size);
		if (bpf_map_lookup_elem(fd, key, values))
			continue;	/* deleted meanwhile */
		err = fn(ctx, key, values);
	}
	free(values);
	return err;
}

/* grow *arr by one element of SIZE; returns the new slot */
static void *push(void **arr, size_t *n, size_t size)
{
	void *p = realloc(*arr, (*n + 1) * size);

	if (!p)
		return NULL;
	*arr = p;
	memset((char *)p + *n * size, 0, size);
	return (char *)p + (*n)++ * size;
}

struct snap_ctx {
	struct tracker_snapshot *s;
	int ncpus;
};

static int add_count(void *data, const void *key, const void *values)
{
	struct snap_ctx *c = data;
	const struct tandem_trk_counts *v = values;
	struct tracker_count_row *r;

	r = push((void **)&c->s->counts, &c->s->ncounts, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memcpy(&r->key, key, sizeof(r->key));
	for (int i = 0; i < c->ncpus; i++) {
		r->c.miss += v[i].miss;
		r->c.first_access += v[i].first_access;
		r->c.own_hit += v[i].own_hit;
		r->c.shared_hit += v[i].shared_hit;
		r->c.evict += v[i].evict;
	}
	return 0;
}

static int add_matrix(void *data, const void *key, const void *values)
{
	struct snap_ctx *c = data;
	const __u64 *v = values;
	struct tracker_matrix_row *r;

	r = push((void **)&c->s->matrix, &c->s->nmatrix, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memcpy(&r->key, key, sizeof(r->key));
	for (int i = 0; i < c->ncpus; i++)
		r->pages += v[i];
	return 0;
}

static int add_job(void *data, const void *key, const void *value)
{
	struct snap_ctx *c = data;
	struct tracker_job_row *r;

	r = push((void **)&c->s->jobs, &c->s->njobs, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memcpy(&r->id, key, sizeof(r->id));
	memcpy(&r->job, value, sizeof(r->job));
	return 0;
}

static int add_dataset(void *data, const void *key, const void *value)
{
	struct snap_ctx *c = data;
	struct tracker_dataset_row *r;

	r = push((void **)&c->s->datasets, &c->s->ndatasets, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memcpy(&r->id, key, sizeof(r->id));
	memcpy(&r->ds, value, sizeof(r->ds));
	return 0;
}

/* live processes of each job: the tasks entries holding its id */
static void count_procs(struct tracker *t, struct tracker_snapshot *s)
{
	__u32 key, prev, job;
	bool first = true;

	while (!bpf_map_get_next_key(t->tasks_fd, first ? NULL : &prev, &key)) {
		first = false;
		prev = key;
		if (bpf_map_lookup_elem(t->tasks_fd, &key, &job))
			continue;
		for (size_t i = 0; i < s->njobs; i++)
			if (s->jobs[i].id == job)
				s->jobs[i].nproc++;
	}
}

static int read_global(struct tracker *t, struct tandem_trk_global *g)
{
	struct tandem_trk_global *v;
	__u32 zero = 0;
	int err = 0;

	v = calloc(t->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(t->global_fd, &zero, v)) {
		err = -errno;
		goto out;
	}
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < t->ncpus; i++) {
		const __u64 *src = (const __u64 *)&v[i];
		__u64 *dst = (__u64 *)g;

		/* every field is a __u64 counter */
		for (size_t k = 0; k < sizeof(*g) / sizeof(__u64); k++)
			dst[k] += src[k];
	}
out:
	free(v);
	return err;
}

int tracker_snapshot_read(struct tracker *t, struct tracker_snapshot *s)
{
	struct snap_ctx c = { .s = s, .ncpus = t->ncpus };
	struct snap_ctx one = { .s = s, .ncpus = 1 };
	__u32 zero = 0;
	uint64_t lost;
	int err;

	memset(s, 0, sizeof(*s));
	err = read_global(t, &s->global);
	if (!err && bpf_map_lookup_elem(t->meta_fd, &zero, &s->meta))
		err = -errno;
	if (!err)
		err = map_walk(t->counts_fd, sizeof(struct tandem_trk_ckey),
			       sizeof(struct tandem_trk_counts), t->ncpus, add_count, &c);
	if (!err)
		err = map_walk(t->matrix_fd, sizeof(struct tandem_trk_mkey),
			       sizeof(__u64), t->ncpus, add_matrix, &c);
	if (!err)
		err = map_walk(t->jobs_fd, sizeof(__u32), sizeof(struct tandem_trk_job),
			       1, add_job, &one);
	if (!err)
		err = map_walk(t->datasets_fd, sizeof(__u32),
			       sizeof(struct tandem_trk_dataset), 1, add_dataset, &one);
	if (err) {
		tracker_snapshot_free(s);
		return err;
	}
	count_procs(t, s);
	/* kept by the BPF programs: the words of `pages` set */
	s->pages_tracked = s->meta.pages_tracked;
	/* every state is deleted when its pages leave the cache; 0 unless a state was lost */
	lost = s->global.inserted - s->global.removed;
	lost = lost > s->pages_tracked ? lost - s->pages_tracked : 0;
	s->overflow = lost + s->global.insert_failed;
	return 0;
}

void tracker_snapshot_free(struct tracker_snapshot *s)
{
	free(s->counts);
	free(s->matrix);
	free(s->jobs);
	free(s->datasets);
	memset(s, 0, sizeof(*s));
}

const char *tracker_snapshot_dataset_name(const struct tracker_snapshot *s, uint32_t id)
{
	for (size_t i = 0; i < s->ndatasets; i++)
		if (s->datasets[i].id == id)
			return s->datasets[i].ds.name;
	return "?";
}

const char *tracker_snapshot_job_name(const struct tracker_snapshot *s, uint32_t id)
{
	for (size_t i = 0; i < s->njobs; i++)
		if (s->jobs[i].id == id)
			return s->jobs[i].job.name;
	return id ? "?" : "(untracked)";
}

struct tandem_trk_counts tracker_snapshot_counts(const struct tracker_snapshot *s,
						 uint32_t job, uint32_t dataset)
{
	struct tandem_trk_counts zero = {};

	for (size_t i = 0; i < s->ncounts; i++)
		if (s->counts[i].key.job == job && s->counts[i].key.dataset == dataset)
			return s->counts[i].c;
	return zero;
}

int tracker_counts_get(struct tracker *t, uint32_t job, uint32_t dataset,
		       struct tandem_trk_counts *c)
{
	struct tandem_trk_ckey key = { .job = job, .dataset = dataset };
	struct tandem_trk_counts *v;
	int err = 0;

	memset(c, 0, sizeof(*c));
	v = calloc(t->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	/* no entry: no event yet, all zero */
	if (bpf_map_lookup_elem(t->counts_fd, &key, v))
		err = errno == ENOENT ? 0 : -errno;
	for (int i = 0; !err && i < t->ncpus; i++) {
		c->miss += v[i].miss;
		c->first_access += v[i].first_access;
		c->own_hit += v[i].own_hit;
		c->shared_hit += v[i].shared_hit;
		c->evict += v[i].evict;
	}
	free(v);
	return err;
}

struct ds_sum {
	uint32_t dataset;
	int ncpus;
	struct tandem_trk_counts *c;
};

static int add_ds_row(void *data, const void *key, const void *values)
{
	const struct tandem_trk_ckey *k = key;
	const struct tandem_trk_counts *v = values;
	struct ds_sum *d = data;

	if (k->dataset != d->dataset)
		return 0;
	for (int i = 0; i < d->ncpus; i++) {
		d->c->miss += v[i].miss;
		d->c->first_access += v[i].first_access;
		d->c->own_hit += v[i].own_hit;
		d->c->shared_hit += v[i].shared_hit;
		d->c->evict += v[i].evict;
	}
	return 0;
}

int tracker_dataset_counts(struct tracker *t, uint32_t dataset, struct tandem_trk_counts *c)
{
	struct ds_sum d = { .dataset = dataset, .ncpus = t->ncpus, .c = c };

	memset(c, 0, sizeof(*c));
	return map_walk(t->counts_fd, sizeof(struct tandem_trk_ckey),
			sizeof(struct tandem_trk_counts), t->ncpus, add_ds_row, &d);
}
