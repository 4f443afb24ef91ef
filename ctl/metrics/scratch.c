// SPDX-License-Identifier: GPL-2.0
/*
 * The node's scratch spaces (scratch/scratch.h) as Prometheus families: per
 * scratch its size, the bytes in use on its tmpfs, the files and bytes
 * waiting to drain, the files made durable so far and when the last one
 * became durable, and whether its drainer runs. The same numbers as
 * `tandemctl -j scratch show`, read the same way (statfs of the tmpfs, a
 * walk of it against drained.log).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/internal.h"
#include "scratch/scratch.h"

struct scratch_row {
	struct scratch_cfg c;
	struct scratch_status st;
	int have_status;		/* the walk worked (root or the owner) */
	char numa[16];
};

enum {
	SF_SIZE, SF_USED, SF_PENDING_BYTES, SF_PENDING_FILES, SF_DURABLE, SF_LAST, SF_DRAINER,
	SF_N
};

static const struct {
	const char *name, *help;
	enum tandem_prom_type type;
	int needs_status;
} scratch_families[SF_N] = {
	{ "tandem_scratch_size_bytes", "The scratch's size (its tmpfs's size= option).",
	  TANDEM_PROM_GAUGE, 0 },
	{ "tandem_scratch_used_bytes", "Bytes in use on the scratch's tmpfs (statfs).",
	  TANDEM_PROM_GAUGE, 0 },
	{ "tandem_scratch_pending_bytes",
	  "Bytes of the files in the scratch whose current content is not durable yet.",
	  TANDEM_PROM_GAUGE, 1 },
	{ "tandem_scratch_pending_files",
	  "Files in the scratch whose current content is not durable yet.", TANDEM_PROM_GAUGE, 1 },
	{ "tandem_scratch_drained_files_total",
	  "Files the drainer made durable at the destination (lines of drained.log).",
	  TANDEM_PROM_COUNTER, 1 },
	{ "tandem_scratch_last_durable_timestamp_seconds",
	  "Unix time the last drained file became durable (after fsync and rename).",
	  TANDEM_PROM_GAUGE, 1 },
	{ "tandem_scratch_drainer_running", "1 while the scratch's drainer process runs.",
	  TANDEM_PROM_GAUGE, 0 },
};

static double row_value(const struct scratch_row *r, int f)
{
	switch (f) {
	case SF_SIZE: return (double)r->c.size;
	case SF_USED: return (double)scratch_used_bytes(&r->c);
	case SF_PENDING_BYTES: return (double)r->st.pending_bytes;
	case SF_PENDING_FILES: return (double)r->st.pending_files;
	case SF_DURABLE: return (double)r->st.durable_files;
	case SF_LAST: return r->st.last_durable;
	default: return scratch_drainer_pid(&r->c) ? 1 : 0;
	}
}

/* the scratch's config and, where this process may walk its tmpfs, its status */
static int row_load(struct scratch_row *r, const char *name)
{
	int err = scratch_cfg_load(name, &r->c);

	if (err) {
		r->c.name[0] = 0;	/* gone meanwhile, or unreadable (said): no samples */
		return err;
	}
	snprintf(r->numa, sizeof(r->numa), "%d", r->c.node);
	/* another user's scratch: its size and use only (statfs), no error line */
	if (access(r->c.mnt, R_OK | X_OK))
		return 0;
	err = scratch_status_get(&r->c, &r->st);
	r->have_status = !err;
	return err;
}

static void write_rows(struct tandem_prom *p, const char *node, const struct scratch_row *rows,
		       size_t n)
{
	for (int f = 0; f < SF_N; f++) {
		tandem_prom_family(p, scratch_families[f].name, scratch_families[f].type,
				   scratch_families[f].help);
		for (size_t i = 0; i < n; i++) {
			const struct scratch_row *r = &rows[i];
			struct tandem_prom_label l[] = { { "node", node }, { "scratch", r->c.name },
							 { "numa_node", r->numa } };

			if (!r->c.name[0] || (scratch_families[f].needs_status && !r->have_status))
				continue;
			if (f == SF_LAST && !r->st.last_durable)
				continue;
			tandem_prom_sample(p, l, 3, row_value(r, f));
		}
	}
}

int metrics_scratch_write(struct tandem_prom *p, const char *node, size_t *nscratch)
{
	struct scratch_row *rows = NULL;
	char **names;
	size_t n = 0;
	int err, e;

	err = scratch_names(&names, &n);
	if (!err && n) {
		rows = calloc(n, sizeof(*rows));
		err = rows ? 0 : -ENOMEM;
	}
	for (size_t i = 0; rows && i < n; i++) {
		e = row_load(&rows[i], names[i]);
		err = err ? err : e;
	}
	write_rows(p, node, rows, rows ? n : 0);
	for (size_t i = 0; rows && i < n; i++)
		scratch_status_free(&rows[i].st);
	free(rows);
	scratch_names_free(names, n);
	if (nscratch)
		*nscratch = n;
	return err;
}
