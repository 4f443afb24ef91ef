// SPDX-License-Identifier: GPL-2.0
/*
 * The release engine's read-order hook (release.h, struct rel_order) and the
 * learned order it feeds (Documentation/model.md, "The learned read order").
 *
 * While the instances run, fanotify reports every open of a dataset file
 * (FAN_OPEN on each directory that holds one, or on the dataset's mount when
 * there are many); the opening process is mapped to its instance by process
 * group, so an instance's DataLoader workers count as the instance. Each
 * instance's sequence is the dataset files in the order it first opened
 * them: for a job with a seeded shuffle, its first epoch's order.
 *
 * A learned-order file holds those sequences. learn.c saves one after a run
 * that recorded cleanly, compares it with the one it loaded (the mean
 * displacement of a file's position, 0 when the order repeated, about 1/3
 * for two unrelated shuffles), marks it stable when the two agree, and
 * prefetches by a stable one the next time the same instances run: the
 * sequences merged by the time each file is first needed at the planned
 * release times and rates (model/order.c), or, without a plan, each
 * instance's i-th file in turn, as `loadgen order` does for loadgen jobs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "release/release.h"

#define ORDER_MAGIC		"# tandem learned read order v1"

void rel_seqs_free(struct rel_seqs *s)
{
	for (int j = 0; j < REL_MAX_INST; j++)
		free(s->seq[j]);
	memset(s, 0, sizeof(*s));
}

static int seq_push(struct rel_seqs *s, int j, uint32_t idx)
{
	if (s->len[j] == s->cap[j]) {
		size_t cap = s->cap[j] ? 2 * s->cap[j] : 256;
		uint32_t *p = realloc(s->seq[j], cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->seq[j] = p;
		s->cap[j] = cap;
	}
	s->seq[j][s->len[j]++] = idx;
	return 0;
}

/*
 * Whether instance j has file idx already, marking it: a bitmap per
 * instance, made at its first file (only the instances that run pay).
 * -ENOMEM when it cannot be made.
 */
static int seen_test_set(uint64_t **seen, int j, uint32_t idx, uint32_t nfiles)
{
	if (!seen[j] && !(seen[j] = calloc(nfiles / 64 + 1, sizeof(uint64_t))))
		return -ENOMEM;
	if (seen[j][idx / 64] & (1ULL << (idx % 64)))
		return 1;
	seen[j][idx / 64] |= 1ULL << (idx % 64);
	return 0;
}

static void seen_free(uint64_t **seen)
{
	for (int j = 0; j < REL_MAX_INST; j++) {
		free(seen[j]);
		seen[j] = NULL;
	}
}

/* ---- recording ---- */

/* one open (openwatch_drain()): idx the dataset file, pid who opened it */
static void order_event(void *arg, long idx, pid_t pid)
{
	struct rel_order *o = arg;
	pid_t pgid;
	int job = -1, njobs;

	/*
	 * An instance's leader is its group's pid, even once reaped; another
	 * process (a DataLoader worker) by its group, while it exists.
	 */
	pthread_mutex_lock(&o->mu);
	for (int j = 0; j < o->seqs.n && job < 0; j++)
		if (o->pgid[j] == pid)
			job = j;
	pthread_mutex_unlock(&o->mu);
	pgid = job < 0 ? getpgid(pid) : pid;
	if (pgid <= 0)
		return;
	pthread_mutex_lock(&o->mu);
	for (int j = 0; j < o->seqs.n && job < 0; j++)
		if (o->pgid[j] == pgid)
			job = j;
	njobs = o->seqs.n;
	pthread_mutex_unlock(&o->mu);
	if (job < 0)
		return;
	o->opens++;
	switch (seen_test_set(o->seen, job, idx, o->ds->files.n)) {
	case 0:
		break;
	case 1:
		return;
	default:
		o->incomplete = true;
		return;
	}
	if (seq_push(&o->seqs, job, idx))
		o->incomplete = true;
	/*
	 * Every instance (all are forked, so known, before the first release)
	 * has opened every file: later opens (epochs) add nothing, and the
	 * marks go, so that they cost nothing either.
	 */
	if (o->seqs.len[job] == o->ds->files.n && ++o->complete == njobs)
		o->flushed = !openwatch_flush(&o->ow);
}

static void order_drain(struct rel_order *o)
{
	openwatch_drain(&o->ow, &o->ids, order_event, o);
	if (o->ow.lost)
		o->incomplete = true;
}

static void *order_thread(void *arg)
{
	struct rel_order *o = arg;
	struct pollfd pf[2] = { { .fd = o->ow.fan, .events = POLLIN },
				{ .fd = o->stop[0], .events = POLLIN } };

	for (;;) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			o->incomplete = true;
			break;
		}
		if (pf[0].revents & POLLIN)
			order_drain(o);
		if (pf[1].revents)
			break;
	}
	order_drain(o);		/* what was queued before the stop */
	return NULL;
}

static void order_close(struct rel_order *o)
{
	if (o->thread) {
		char c = 0;

		if (write(o->stop[1], &c, 1) != 1)
			pthread_cancel(o->tid);
		pthread_join(o->tid, NULL);
		o->thread = false;
	}
	for (int k = 0; k < 2; k++)
		if (o->stop[k] >= 0)
			close(o->stop[k]);
	openwatch_close(&o->ow);
	o->stop[0] = o->stop[1] = -1;
	file_index_free(&o->ids);
	seen_free(o->seen);
}

static int order_register(void *state, const struct rel_dataset *d)
{
	struct rel_order *o = state;
	const struct sample_set *ds = d->set;
	sigset_t all, old;
	int err;

	o->ow.fan = o->stop[0] = o->stop[1] = -1;
	o->ds = ds;
	o->recording = false;
	memset(&o->seqs, 0, sizeof(o->seqs));
	o->complete = 0;
	o->flushed = false;
	memset(o->seen, 0, sizeof(o->seen));
	err = file_index_make(&o->ids, ds->files.devs, ds->files.inos, ds->files.n);
	if (err)
		goto fail;
	err = openwatch_init(&o->ow, &ds->files, d->dir);
	if (err)
		goto fail;
	if (pipe2(o->stop, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	pthread_mutex_init(&o->mu, NULL);
	/* every signal blocked in the thread: the engine takes them with sigtimedwait() */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&o->tid, NULL, order_thread, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	o->thread = true;
	o->recording = true;
	return 0;
fail:
	snprintf(o->why, sizeof(o->why), "%s%s", strerror(-err),
		 err == -EPERM ? " (fanotify needs CAP_SYS_ADMIN)" : "");
	order_close(o);
	return err;
}

static int order_job_start(void *state, int idx, const char *name, pid_t pgid)
{
	struct rel_order *o = state;

	(void)name;
	if (idx < 0 || idx >= REL_MAX_INST)
		return 0;
	pthread_mutex_lock(&o->mu);
	o->pgid[idx] = pgid;
	if (idx >= o->seqs.n)
		o->seqs.n = idx + 1;
	pthread_mutex_unlock(&o->mu);
	return 0;
}

static void order_finish(void *state)
{
	struct rel_order *o = state;

	if (o->thread)
		pthread_mutex_destroy(&o->mu);
	order_close(o);
}

const struct rel_ops rel_order_ops = {
	.name = "read order",
	.dataset_register = order_register,
	.job_start = order_job_start,
	.finish = order_finish,
};

/* ---- learned-order files ---- */

/* Index of path among ds's files by name: ds->files.paths sorted once. */
struct path_index {
	size_t n;
	struct path_ent { const char *path; uint32_t idx; } *e;
};

static int pent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct path_ent *)a)->path, ((const struct path_ent *)b)->path);
}

static int path_index_make(const struct sample_set *ds, struct path_index *pi)
{
	pi->n = ds->files.n;
	pi->e = calloc(pi->n ? pi->n : 1, sizeof(*pi->e));
	if (!pi->e)
		return -ENOMEM;
	for (uint32_t f = 0; f < ds->files.n; f++)
		pi->e[f] = (struct path_ent){ ds->files.paths[f], f };
	qsort(pi->e, pi->n, sizeof(*pi->e), pent_cmp);
	return 0;
}

/* A learned-order file being read: the dataset's files by path, what is read. */
struct order_reader {
	const struct sample_set *ds;
	struct rel_learned *l;
	struct path_index pi;
	uint64_t *seen[REL_MAX_INST];	/* per instance, a bit per file */
	size_t lineno;
};

/* One line "INSTANCE PATH" (or the magic, a comment, "# stable ..."): -EINVAL if neither. */
static int order_line(struct order_reader *rd, char *line, ssize_t len)
{
	struct rel_learned *l = rd->l;
	struct path_ent key, *hit;
	char *end;
	long j;
	int err;

	if (line[len - 1] == '\n')
		line[--len] = 0;
	if (++rd->lineno == 1 && strcmp(line, ORDER_MAGIC))
		return -EINVAL;
	if (!strncmp(line, "# stable ", 9)) {
		l->stable = line[9] == '1';
		sscanf(line + 10, " displacement %lf", &l->displacement);
	}
	if (!len || line[0] == '#')
		return 0;
	errno = 0;
	j = strtol(line, &end, 10);
	if (errno || end == line || *end != ' ' || j < 0 || j >= REL_MAX_INST)
		return -EINVAL;
	key.path = end + 1;
	hit = bsearch(&key, rd->pi.e, rd->pi.n, sizeof(key), pent_cmp);
	if (!hit) {
		l->dropped++;	/* no longer a file of the dataset */
		return 0;
	}
	err = seen_test_set(rd->seen, (int)j, hit->idx, rd->ds->files.n);
	if (err == 1)
		return 0;	/* a file again: its first place counts */
	if (!err)
		err = seq_push(&l->seqs, (int)j, hit->idx);
	if (j >= l->seqs.n)
		l->seqs.n = (int)j + 1;
	return err;
}

int rel_order_load(const char *path, const struct sample_set *ds, struct rel_learned *l)
{
	struct order_reader rd = { .ds = ds, .l = l };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int err;

	memset(l, 0, sizeof(*l));
	l->displacement = NAN;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = path_index_make(ds, &rd.pi);
	while (!err && (len = getline(&line, &cap, f)) > 0)
		err = order_line(&rd, line, len);
	if (!err && ferror(f))
		err = -EIO;
	if (!err && rd.lineno == 0)
		err = -EINVAL;
	if (err)
		rel_seqs_free(&l->seqs);
	seen_free(rd.seen);
	free(line);
	free(rd.pi.e);
	fclose(f);
	return err;
}

int rel_order_paths(const uint32_t *files, size_t n, const struct sample_set *ds,
		    struct file_list *fl)
{
	memset(fl, 0, sizeof(*fl));
	fl->paths = calloc(n ? n : 1, sizeof(*fl->paths));
	if (!fl->paths)
		return -ENOMEM;
	fl->cap = n;
	for (size_t k = 0; k < n; k++) {
		fl->paths[k] = strdup(ds->files.paths[files[k]]);
		if (!fl->paths[k]) {
			file_list_free(fl);
			return -ENOMEM;
		}
		fl->bytes += ds->files.sizes[files[k]];
		fl->n++;
	}
	return 0;
}

int rel_order_merge(const struct rel_seqs *s, const struct sample_set *ds, const double *first,
		    const double *rate, struct file_list *fl)
{
	struct mo_seq seqs[REL_MAX_INST];
	uint32_t *files = malloc((ds->files.n ? ds->files.n : 1) * sizeof(*files));
	size_t n;
	int err;

	memset(fl, 0, sizeof(*fl));
	if (!files)
		return -ENOMEM;
	for (int j = 0; j < s->n; j++)
		seqs[j] = (struct mo_seq){ .files = s->seq[j], .len = s->len[j],
					   .first = first ? first[j] : 0, .rate = rate ? rate[j] : 1 };
	err = first && rate ? mo_merge_by_need(seqs, s->n, ds->files.sizes, ds->files.n, files, NULL, &n)
			    : mo_merge_by_position(seqs, s->n, ds->files.n, files, &n);
	if (!err)
		err = rel_order_paths(files, n, ds, fl);
	free(files);
	return err;
}

double rel_order_displacement(const struct rel_seqs *a, const struct rel_seqs *b,
			      uint32_t nfiles, double *coverage)
{
	int32_t *pos = malloc((nfiles ? nfiles : 1) * sizeof(*pos));
	double sum = 0;
	size_t common = 0, total = 0;

	*coverage = 0;
	if (!pos || a->n != b->n) {
		free(pos);
		return NAN;
	}
	for (int j = 0; j < a->n; j++) {
		for (uint32_t f = 0; f < nfiles; f++)
			pos[f] = -1;
		for (size_t k = 0; k < a->len[j]; k++)
			pos[a->seq[j][k]] = (int32_t)k;
		total += b->len[j];
		for (size_t k = 0; k < b->len[j]; k++) {
			int32_t p = pos[b->seq[j][k]];

			if (p < 0)
				continue;
			sum += fabs((double)p / a->len[j] - (double)k / b->len[j]);
			common++;
		}
	}
	free(pos);
	if (!total || !common)
		return NAN;
	*coverage = (double)common / total;
	return sum / common;
}

int rel_order_save(const char *path, const struct rel_seqs *s, const struct sample_set *ds,
		   bool stable, double displacement)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%s\n# dataset %s\n# instances %d\n", ORDER_MAGIC, ds->dir, s->n);
	if (isnan(displacement))
		fprintf(f, "# stable %d\n", stable);
	else
		fprintf(f, "# stable %d displacement %.6f\n", stable, displacement);
	for (int j = 0; j < s->n; j++)
		for (size_t k = 0; k < s->len[j]; k++)
			if (!strchr(ds->files.paths[s->seq[j][k]], '\n'))	/* a line per path */
				fprintf(f, "%d %s\n", j, ds->files.paths[s->seq[j][k]]);
	return file_commit(f, tmp, path);
}
