// SPDX-License-Identifier: GPL-2.0
/*
 * The release engine's tandem.ko hook (release.h, struct rel_module): the
 * run's dataset is found or created under its name and gets the run's
 * files, so tandem.ko steers it; with --prefetch-order, tandem.ko prefetches
 * it in that order from just before the first release (and a prefetch still
 * running when the run ends is cancelled, when it is this run's); after the run its per-node
 * residency and counters go to the report. Without the module loaded the hook stays out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "release/release.h"

#define MOD_PREFETCH_SLACK_S	0.25	/* our request to the module's clock, at most */

/* tandem.ko wants absolute paths */
static int abs_paths(const struct sample_set *ds, struct file_list *fl)
{
	fl->paths = calloc(ds->files.n ? ds->files.n : 1, sizeof(char *));
	if (!fl->paths)
		return -ENOMEM;
	fl->cap = ds->files.n;
	for (fl->n = 0; fl->n < ds->files.n; fl->n++) {
		fl->paths[fl->n] = realpath(ds->files.paths[fl->n], NULL);
		if (!fl->paths[fl->n])
			return -errno;
	}
	return 0;
}

static int mod_register(void *state, const struct rel_dataset *d)
{
	struct rel_module *m = state;
	struct file_list fl = { 0 };
	int err;

	m->registered = false;
	m->own_nl = !m->nl;
	if (m->own_nl && tnl_open(&m->nl, true)) {
		m->nl = NULL;
		return -ENOENT;	/* not loaded: nothing to register with */
	}
	err = abs_paths(d->set, &fl);
	if (!err)
		err = dataset_find_or_create(m->nl, d->name, &m->id, &m->created);
	if (!err)
		err = dataset_add_files(m->nl, m->id, &fl, &m->files_added, &m->files_present);
	if (err && m->created)
		dataset_del(m->nl, m->id);	/* a half-registered dataset is worse than none */
	if (err)
		ctl_err("tandem.ko: dataset %s not registered (%s); running without steering",
			d->name, strerror(-err));
	m->registered = !err;
	file_list_free(&fl);
	m->prefetch_started = false;
	m->pf_have = false;
	if (!err && m->prefetch) {
		struct dataset_prefetch req = { .id = m->id, .files = m->prefetch };
		int ret;

		m->prefetch_t0 = m->pf_request = now_s();
		ret = dataset_prefetch(m->nl, &req);

		if (ret)
			ctl_err("tandem.ko: prefetch of dataset %s not started (%s); running without it",
				d->name, strerror(-ret));
		m->prefetch_started = !ret;
	}
	return err;
}

static int mod_residency(void *state, double *bytes, int max_nodes, int *nnodes)
{
	struct rel_module *m = state;
	long psz = sysconf(_SC_PAGESIZE);
	struct dataset_state st;
	int err = dataset_state_get(m->nl, m->id, &st);

	if (err)
		return err;
	*nnodes = 0;
	for (int i = 0; i < DATASET_MAX_NODES && i < max_nodes; i++) {
		bytes[i] = (double)st.node_pages[i] * psz;
		if (st.node_pages[i])
			*nnodes = i + 1;
	}
	m->steered = st.cnt[TANDEM_CNT_STEERED];
	m->prefetched = st.cnt[TANDEM_CNT_PREFETCHED];
	return 0;
}

static void mod_finish(void *state)
{
	struct rel_module *m = state;
	struct dataset_state st;

	/* the prefetch's own figures, for the report, as the jobs left it */
	if (m->prefetch_started && !dataset_state_get(m->nl, m->id, &st)) {
		m->pf_have = true;
		m->pf_state = st.pf_state;
		m->pf_done = st.pf_done;
		m->pf_total = st.pf_total;
		m->pf_seconds = st.pf_elapsed_ns / 1e9;
	}
	/*
	 * The jobs are gone: a prefetch for them has nothing left to do. Only
	 * ours is cancelled: one per dataset, so a prefetch that started after
	 * ours (another run's, once ours ended) has run for less time than has
	 * passed since our request (the module starts its clock in the request).
	 */
	if (m->prefetch_started && !dataset_state_get(m->nl, m->id, &st) &&
	    st.pf_state == TANDEM_PREFETCH_RUNNING &&
	    st.pf_elapsed_ns / 1e9 >= now_s() - m->prefetch_t0 - MOD_PREFETCH_SLACK_S)
		dataset_prefetch_cancel(m->nl, m->id);

	if (m->own_nl) {
		tnl_close(m->nl);
		m->nl = NULL;
	}
	m->own_nl = false;
}

const struct rel_ops rel_module_ops = {
	.name = "tandem.ko",
	.dataset_register = mod_register,
	.residency = mod_residency,
	.finish = mod_finish,
};
