// SPDX-License-Identifier: GPL-2.0
/* A dataset's residency and counters on the text/JSON print path (module.h). */
#include "lib/out.h"
#include "module/module.h"

static const char *const counter_names[__TANDEM_CNT_MAX] = {
	"steered", "prefetched", "prefetch_cached", "migrate_failed", "skip_locked",
	"skip_truncated", "skip_not_uptodate", "skip_dirty", "skip_writeback",
	"skip_mapped", "skip_pinned", "skip_private", "skip_large", "skip_target_full",
	"steered_large",
};

static const char *const prefetch_states[] = {
	"idle", "running", "done", "cancelled", "failed",
};

const char *dataset_prefetch_state_name(uint8_t state)
{
	return prefetch_states[state < 5 ? state : 0];
}

void dataset_state_print(const char *key, const struct dataset_state *st)
{
	int last = 0;

	for (int i = 0; i < DATASET_MAX_NODES; i++)
		if (st->node_pages[i])
			last = i + 1;
	out_obj_open(key);
	out_u64("id", "dataset %llu", st->id);
	out_str("name", " (%s):", st->name);
	out_u64("pages_cached", " %llu pages cached", st->pages_cached);
	out_s64("target_node", ", target node %lld", st->node);
	out_text("%s\n", st->node < 0 ? " (= cxl_node)" : "");
	out_text("  pages per node:");
	out_arr_open("node_pages");
	for (int i = 0; i < last; i++) {
		out_text(" node%d=", i);
		out_u64(NULL, "%llu", st->node_pages[i]);
	}
	out_arr_close();
	out_text("\n  counters:");
	out_obj_open("counters");
	for (int i = 0; i < __TANDEM_CNT_MAX; i++) {
		if (!out_is_json() && !st->cnt[i] && i > TANDEM_CNT_PREFETCHED)
			continue;
		out_text(" %s=", counter_names[i]);
		out_u64(counter_names[i], "%llu", st->cnt[i]);
	}
	out_obj_close();
	out_u64("steer_pending", "\n  steering queue: %llu files\n", st->steer_pending);
	out_obj_open("prefetch");
	out_str("state", "  prefetch: %s", dataset_prefetch_state_name(st->pf_state));
	out_u64("pages_done", ", %llu", st->pf_done);
	out_u64("pages_total", " of %llu pages", st->pf_total);
	out_double("seconds", " in %.2f s\n", st->pf_elapsed_ns / 1e9);
	out_obj_close();
	out_obj_close();
}

static int print_one(void *arg, const struct dataset_state *st)
{
	(void)arg;
	dataset_state_print(NULL, st);
	return 0;
}

int dataset_state_print_all(struct tnl *nl)
{
	int err;

	out_arr_open("datasets");
	err = dataset_state_each(nl, print_one, NULL);
	out_arr_close();
	return err;
}
