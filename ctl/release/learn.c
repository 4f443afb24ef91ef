// SPDX-License-Identifier: GPL-2.0
/*
 * The prefetch's order (release.h, struct rel_learn): one given in a file
 * (--prefetch-order), or the learned read order (Documentation/model.md):
 * where a run's order is kept, whether the prefetch runs in the one kept
 * there, and after the run whether this run's order is kept, and as stable.
 *
 * With --learn-order FILE always (recording needs CAP_SYS_ADMIN; the
 * prefetch is tandem.ko's, or without it a thread of tandemctl: uprefetch.c);
 * without it only when tandem.ko steers this run's dataset and we are root,
 * in LEARN_DIR under a key of the dataset and the commands.
 * A learned order is prefetched by only once two runs agreed on it, and
 * then as the plan says (plan.c: merged by need or by position, or not at
 * all when the model predicts the run faster without it).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "release/release.h"

#define LEARN_DIR			"/var/lib/tandem/order"
#define LEARN_STABLE_DISPLACEMENT	0.05
#define LEARN_STABLE_COVERAGE		0.9

int rel_prefetch_order_read(const char *path, const struct sample_set *ds, struct file_list *order)
{
	struct file_index ids = { 0 };
	int err;

	err = file_list_read(order, path);
	if (err)
		return err;
	if (!order->n) {
		ctl_err("%s: no files", path);
		return -ENODATA;
	}
	err = file_index_make(&ids, ds->files.devs, ds->files.inos, ds->files.n);
	for (size_t i = 0; i < order->n && !err; i++) {
		if (file_index_find(&ids, order->devs[i], order->inos[i]) < 0) {
			ctl_err("%s: %s is not a file of the dataset %s", path, order->paths[i],
				ds->dir);
			err = -EINVAL;
		}
	}
	file_index_free(&ids);
	return err;
}

/* FNV-1a of s with its terminating NUL, continuing from h */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	do
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	while (*s++);
	return h;
}

/* over the dataset's real path and every instance's words */
static uint64_t learn_key(const struct rel_learn_opts *o, const char *dir)
{
	uint64_t h = fnv1a(0xcbf29ce484222325ULL, dir);

	for (int i = 0; i < o->ncmds; i++) {
		h = (h ^ 0x1e) * 0x100000001b3ULL;	/* instance separator */
		for (char **w = o->cmds[i]; *w; w++)
			h = fnv1a(h, *w);
	}
	return h;
}

/* The learned-order file of this run: l->file, or NULL when not learning. */
static void learn_file(struct rel_learn *l, const struct rel_learn_opts *o)
{
	char real[PATH_MAX];

	if (o->off)
		return;
	if (o->file) {
		snprintf(l->path, sizeof(l->path), "%s", o->file);
	} else {
		if (!o->module || !o->registers || geteuid() || !realpath(o->dataset_dir, real))
			return;
		snprintf(l->path, sizeof(l->path), LEARN_DIR "/%016llx.order",
			 (unsigned long long)learn_key(o, real));
		l->is_default = true;
	}
	l->file = l->path;
}

void rel_learn_setup(struct rel_learn *l, const struct rel_learn_opts *o,
		     const struct sample_set *ds)
{
	l->displacement = l->coverage = NAN;
	learn_file(l, o);
	if (!l->file)
		return;
	l->load_err = rel_order_load(l->file, ds, &l->old);
	if (l->load_err && l->load_err != -ENOENT)
		ctl_err("%s: not a learned read order (%s); it is learned again",
			l->file, strerror(-l->load_err));
	if (l->load_err)
		return;
	if (o->prefetch_given)
		l->unused_why = "--prefetch-order given";
	else if (!l->old.stable)
		l->unused_why = "seen in one run only";
	else if (!o->registers)
		l->unused_why = "tandem.ko not used";
	else if (l->old.seqs.n != o->ncmds)
		l->unused_why = "learned for another number of instances";
	if (l->unused_why)
		return;
	for (int j = 0; j < l->old.seqs.n; j++)
		l->usable |= l->old.seqs.len[j] > 0;
	if (!l->usable)
		l->unused_why = "none of its files is in the dataset";
}

void rel_learn_plan(struct rel_learn *l, const struct rel_plan *plan,
		    const struct sample_set *ds, struct file_list *order)
{
	int err;

	if (!l->usable)
		return;
	if (plan->pf == REL_PF_NONE || !plan->pf_nfiles) {
		l->unused_why = "the model predicts the run faster without the prefetch";
		return;
	}
	err = rel_order_paths(plan->pf_files, plan->pf_nfiles, ds, order);
	if (err) {	/* the jobs run all the same, without the prefetch */
		ctl_err("run: the learned order's prefetch is left out: %s", strerror(-err));
		l->unused_why = "its files could not be listed";
		return;
	}
	l->used = true;
}

/* Why this run's order is not kept, or NULL. */
static const char *learn_unsaved_why(const struct rel_learn *l, const struct rel_run *r)
{
	size_t total = 0;

	for (int j = 0; j < l->rec.seqs.n; j++)
		total += l->rec.seqs.len[j];
	if (!l->rec.recording)
		return "not recorded";
	if (r->interrupted || r->nfailed || r->nskipped)
		return "the run did not complete";
	if (l->rec.incomplete)
		return "open events were lost";
	if (!total)
		return "no instance opened a dataset file";
	return NULL;
}

void rel_learn_finish(struct rel_learn *l, const struct rel_run *r)
{
	const struct sample_set *ds = r->ds.set;
	int err;

	if (!l->file)
		return;
	l->not_saved_why = learn_unsaved_why(l, r);
	if (l->not_saved_why)
		return;
	if (!l->load_err)
		l->displacement = rel_order_displacement(&l->old.seqs, &l->rec.seqs, ds->files.n,
							 &l->coverage);
	l->stable = !isnan(l->displacement) && l->displacement <= LEARN_STABLE_DISPLACEMENT &&
		    l->coverage >= LEARN_STABLE_COVERAGE;
	err = l->is_default ? mkdir_p(LEARN_DIR) : 0;
	if (!err)
		err = rel_order_save(l->file, &l->rec.seqs, ds, l->stable, l->displacement);
	if (err) {
		ctl_err("%s: read order not kept: %s", l->file, strerror(-err));
		l->not_saved_why = "the file could not be written";
	}
	l->saved = !err;
}

void rel_learn_free(struct rel_learn *l)
{
	rel_seqs_free(&l->old.seqs);
	rel_seqs_free(&l->rec.seqs);
}
