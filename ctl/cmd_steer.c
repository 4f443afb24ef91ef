// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl steer DATASET [--node N] [--no-wait] [--timeout S]
 * tandemctl prefetch DATASET [--files A,B,...|--order FILE] [--rate MB/s] [--no-wait]
 * tandemctl prefetch cancel DATASET
 * tandemctl residency [DATASET]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "dataset.h"
#include "files.h"
#include "nl.h"
#include "out.h"
#include "util.h"

static const char *const counter_names[__TANDEM_CNT_MAX] = {
	"steered", "prefetched", "prefetch_cached", "migrate_failed", "skip_locked",
	"skip_truncated", "skip_not_uptodate", "skip_dirty", "skip_writeback",
	"skip_mapped", "skip_pinned", "skip_private", "skip_large", "skip_target_full",
	"steered_large",
};

static const char *const prefetch_states[] = {
	"idle", "running", "done", "cancelled", "failed",
};

static int put_id(struct nl_msg *msg, const void *in)
{
	return nla_put_u32(msg, TANDEM_A_DATASET_ID, *(const uint32_t *)in) ? -EMSGSIZE : 0;
}

static void get_nest_u64(struct nlattr *nest, uint64_t *v, int n)
{
	struct nlattr *a;
	int rem;

	memset(v, 0, sizeof(*v) * n);
	if (!nest)
		return;
	nla_for_each_nested(a, nest, rem)
		if (nla_type(a) >= 1 && nla_type(a) <= n && nla_len(a) == 8)
			v[nla_type(a) - 1] = nla_get_u64(a);
}

static int residency_parse(struct nlattr **tb, void *out)
{
	struct dataset_state *st = out;

	if (!tb[TANDEM_A_DATASET_ID] || !tb[TANDEM_A_DATASET_NAME])
		return -EBADMSG;
	memset(st, 0, sizeof(*st));
	st->id = nla_get_u32(tb[TANDEM_A_DATASET_ID]);
	snprintf(st->name, sizeof(st->name), "%s", nla_get_string(tb[TANDEM_A_DATASET_NAME]));
	if (tb[TANDEM_A_DATASET_PAGES_CACHED])
		st->pages_cached = nla_get_u64(tb[TANDEM_A_DATASET_PAGES_CACHED]);
	st->node = tb[TANDEM_A_DATASET_NODE] ? (int32_t)nla_get_u32(tb[TANDEM_A_DATASET_NODE]) : -1;
	st->steer_pending = tb[TANDEM_A_STEER_PENDING] ? nla_get_u32(tb[TANDEM_A_STEER_PENDING]) : 0;
	get_nest_u64(tb[TANDEM_A_DATASET_COUNTERS], st->cnt, __TANDEM_CNT_MAX);
	get_nest_u64(tb[TANDEM_A_DATASET_NODE_PAGES], st->node_pages, DATASET_MAX_NODES);
	if (tb[TANDEM_A_PREFETCH_STATE])
		st->pf_state = nla_get_u8(tb[TANDEM_A_PREFETCH_STATE]);
	if (tb[TANDEM_A_PREFETCH_PAGES_DONE])
		st->pf_done = nla_get_u64(tb[TANDEM_A_PREFETCH_PAGES_DONE]);
	if (tb[TANDEM_A_PREFETCH_PAGES_TOTAL])
		st->pf_total = nla_get_u64(tb[TANDEM_A_PREFETCH_PAGES_TOTAL]);
	if (tb[TANDEM_A_PREFETCH_ELAPSED_NS])
		st->pf_elapsed_ns = nla_get_u64(tb[TANDEM_A_PREFETCH_ELAPSED_NS]);
	return 0;
}

int dataset_state_get(uint32_t id, struct dataset_state *st)
{
	struct tnl_req req = {
		.cmd = TANDEM_CMD_DATASET_GET, .build = put_id, .in = &id,
		.parse = residency_parse, .out = st,
	};

	return tnl_request(&req);
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
		if (!opt_json && !st->cnt[i] && i > TANDEM_CNT_PREFETCHED)
			continue;
		out_text(" %s=", counter_names[i]);
		out_u64(counter_names[i], "%llu", st->cnt[i]);
	}
	out_obj_close();
	out_u64("steer_pending", "\n  steering queue: %llu files\n", st->steer_pending);
	out_obj_open("prefetch");
	out_str("state", "  prefetch: %s", prefetch_states[st->pf_state < 5 ? st->pf_state : 0]);
	out_u64("pages_done", ", %llu", st->pf_done);
	out_u64("pages_total", " of %llu pages", st->pf_total);
	out_double("seconds", " in %.2f s\n", st->pf_elapsed_ns / 1e9);
	out_obj_close();
	out_obj_close();
}

struct steer_req {
	uint32_t id;
	int32_t node;
	bool has_node;
};

static int steer_build(struct nl_msg *msg, const void *in)
{
	const struct steer_req *r = in;

	if (nla_put_u32(msg, TANDEM_A_DATASET_ID, r->id) ||
	    (r->has_node && nla_put_s32(msg, TANDEM_A_DATASET_NODE, r->node)))
		return -EMSGSIZE;
	return 0;
}

/* Poll until the dataset's steering queue is empty; seconds taken, or <0. */
static double steer_wait(uint32_t id, double timeout, struct dataset_state *st)
{
	double t0 = now_s();
	int err;

	for (;;) {
		err = dataset_state_get(id, st);
		if (err)
			return err;
		if (!st->steer_pending)
			return now_s() - t0;
		if (now_s() - t0 > timeout) {
			ctl_err("steering still has %u files queued after %.0f s",
				st->steer_pending, timeout);
			return -ETIMEDOUT;
		}
		usleep(10000);
	}
}

static int cmd_steer(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node", required_argument, NULL, 'n' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ "timeout", required_argument, NULL, 't' },
		{ 0 }
	};
	struct steer_req r = { 0 };
	struct tnl_req req = { .cmd = TANDEM_CMD_STEER, .build = steer_build, .in = &r };
	struct dataset_state before, after;
	double timeout = 600, secs;
	unsigned long long failed;
	bool wait = true;
	int64_t v;
	int opt, err;

	optind = 0;	/* reinitialise getopt: main() parsed in "+" mode */
	while ((opt = getopt_long(argc, argv, "n:Wt:", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (parse_s64(optarg, -1, 1023, &v))
				return ctl_err("--node: a node id, or -1 for cxl_node"), -EINVAL;
			r.node = (int32_t)v;
			r.has_node = true;
			break;
		case 'W':
			wait = false;
			break;
		case 't':
			if (parse_double(optarg, &timeout) || timeout <= 0)
				return ctl_err("--timeout: seconds"), -EINVAL;
			break;
		default:
			return ctl_usage("steer", NULL);
		}
	}
	if (optind != argc - 1)
		return ctl_usage("steer", NULL);
	err = dataset_resolve(argv[optind], &r.id);
	if (!err)
		err = dataset_state_get(r.id, &before);
	if (!err)
		err = tnl_request(&req);
	if (err || !wait)
		return err;
	secs = steer_wait(r.id, timeout, &after);
	if (secs < 0)
		return (int)secs;
	out_obj_open(NULL);
	out_u64("pages_steered", "steered %llu pages",
		after.cnt[TANDEM_CNT_STEERED] - before.cnt[TANDEM_CNT_STEERED]);
	out_double("seconds", " in %.3f s", secs);
	out_double("gb_per_s", " (%.3f GB/s)\n", (after.cnt[TANDEM_CNT_STEERED] -
				     before.cnt[TANDEM_CNT_STEERED]) * (double)sysconf(_SC_PAGESIZE) /
		   1e9 / (secs > 0 ? secs : 1e-9));
	failed = after.cnt[TANDEM_CNT_MIGRATE_FAILED] - before.cnt[TANDEM_CNT_MIGRATE_FAILED] +
		 after.cnt[TANDEM_CNT_SKIP_TARGET_FULL] - before.cnt[TANDEM_CNT_SKIP_TARGET_FULL];
	out_u64("pages_failed", failed ?
		"%llu pages left where they are: the target node is full\n" : NULL, failed);
	dataset_state_print("dataset", &after);
	out_obj_close();
	return 0;
}

struct prefetch_req {
	uint32_t id;
	uint32_t kbps;
	bool has_kbps;
	struct file_list fl;
};

static int prefetch_build(struct nl_msg *msg, const void *in)
{
	const struct prefetch_req *r = in;

	if (nla_put_u32(msg, TANDEM_A_DATASET_ID, r->id) ||
	    (r->has_kbps && nla_put_u32(msg, TANDEM_A_PREFETCH_KBPS, r->kbps)))
		return -EMSGSIZE;
	for (size_t i = 0; i < r->fl.n; i++)
		if (nla_put_string(msg, TANDEM_A_FILE_PATH, r->fl.paths[i]))
			return -EMSGSIZE;
	return 0;
}

/* "a,b,c" or the lines of an order file -> absolute paths, in order */
static int prefetch_paths(struct prefetch_req *r, const char *list, const char *order)
{
	char *copy, *tok, *save = NULL, line[4096];
	FILE *f;
	int err = 0;

	if (list) {
		copy = strdup(list);
		if (!copy)
			return -ENOMEM;
		for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save))
			err = file_list_collect(&r->fl, &tok, 1);
		free(copy);
		return err;
	}
	f = fopen(order, "r");
	if (!f) {
		err = -errno;
		ctl_err("%s: %s", order, strerror(errno));
		return err;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *p = line;

		line[strcspn(line, "\n")] = 0;
		if (*line && *line != '#')
			err = file_list_collect(&r->fl, &p, 1);
	}
	fclose(f);
	return err;
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int prefetch_cancel(uint32_t id)
{
	struct tnl_req req = { .cmd = TANDEM_CMD_PREFETCH_CANCEL, .build = put_id, .in = &id };

	return tnl_request(&req);
}

/* Wait for the prefetch to end; Ctrl-C cancels it. */
static int prefetch_wait(uint32_t id, struct dataset_state *st)
{
	const char *term = getenv("TERM");
	bool tty = isatty(STDERR_FILENO) && !opt_json && term && strcmp(term, "dumb");
	bool cancelled = false;
	struct sigaction sa = { .sa_handler = on_sigint };
	int err;

	sigaction(SIGINT, &sa, NULL);
	for (;;) {
		err = dataset_state_get(id, st);
		if (err)
			return err;
		if (st->pf_state != TANDEM_PREFETCH_RUNNING)
			break;
		if (interrupted && !cancelled) {
			cancelled = true;
			prefetch_cancel(id);
		}
		if (tty)
			fprintf(stderr, "\rprefetch: %llu of %llu pages",
				(unsigned long long)st->pf_done, (unsigned long long)st->pf_total);
		usleep(50000);
	}
	if (tty)
		fputc('\n', stderr);
	return 0;
}

static int cmd_prefetch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "files", required_argument, NULL, 'f' },
		{ "order", required_argument, NULL, 'o' },
		{ "rate", required_argument, NULL, 'r' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ 0 }
	};
	struct prefetch_req r = { 0 };
	struct tnl_req req = {
		.cmd = TANDEM_CMD_PREFETCH, .size = 256 * 1024, .build = prefetch_build, .in = &r,
	};
	const char *list = NULL, *order = NULL;
	struct dataset_state st, before;
	bool wait = true;
	double mbs, secs;
	int opt, err;

	if (argc == 3 && !strcmp(argv[1], "cancel")) {
		err = dataset_resolve(argv[2], &r.id);
		return err ? err : prefetch_cancel(r.id);
	}
	optind = 0;	/* reinitialise getopt: main() parsed in "+" mode */
	while ((opt = getopt_long(argc, argv, "f:o:r:W", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			list = optarg;
			break;
		case 'o':
			order = optarg;
			break;
		case 'r':
			if (parse_double(optarg, &mbs) || mbs <= 0 || mbs * 1e6 / 1024 > 104857600)
				return ctl_err("--rate: MB/s, more than 0"), -EINVAL;
			r.kbps = (uint32_t)(mbs * 1e6 / 1024 + 0.5);
			r.has_kbps = true;
			break;
		case 'W':
			wait = false;
			break;
		default:
			return ctl_usage("prefetch", NULL);
		}
	}
	if (optind != argc - 1 || (list && order))
		return ctl_usage("prefetch", NULL);
	err = dataset_resolve(argv[optind], &r.id);
	if (!err && (list || order))
		err = prefetch_paths(&r, list, order);
	if (!err)
		err = dataset_state_get(r.id, &before);
	if (!err)
		err = tnl_request(&req);
	file_list_free(&r.fl);
	if (err || !wait)
		return err;
	err = prefetch_wait(r.id, &st);
	if (err)
		return err;
	secs = st.pf_elapsed_ns / 1e9;
	out_obj_open(NULL);
	out_str("state", "prefetch %s:", prefetch_states[st.pf_state < 5 ? st.pf_state : 0]);
	out_u64("pages_read", " %llu pages read",
		st.cnt[TANDEM_CNT_PREFETCHED] - before.cnt[TANDEM_CNT_PREFETCHED]);
	out_u64("pages_cached", ", %llu already cached",
		st.cnt[TANDEM_CNT_PREFETCH_CACHED] - before.cnt[TANDEM_CNT_PREFETCH_CACHED]);
	out_double("seconds", ", %.2f s", secs);
	out_double("mb_per_s", " (%.1f MB/s read)\n",
		   (st.cnt[TANDEM_CNT_PREFETCHED] - before.cnt[TANDEM_CNT_PREFETCHED]) *
		   (double)sysconf(_SC_PAGESIZE) / 1e6 / (secs > 0 ? secs : 1e-9));
	out_obj_close();
	if (st.pf_state == TANDEM_PREFETCH_FAILED) {
		ctl_err("prefetch stopped: no free memory on the target node");
		return -ENOMEM;
	}
	return st.pf_state == TANDEM_PREFETCH_CANCELLED ? -ECANCELED : 0;
}

static int residency_all(struct nlattr **tb, void *out)
{
	struct dataset_state st;
	int err = residency_parse(tb, &st);

	(void)out;
	if (!err)
		dataset_state_print(NULL, &st);
	return err;
}

int dataset_residency_print_all(void)
{
	struct tnl_req req = {
		.cmd = TANDEM_CMD_DATASET_GET, .dump = true, .parse = residency_all,
	};
	int err;

	out_arr_open("datasets");
	err = tnl_request(&req);
	out_arr_close();
	return err;
}

static int cmd_residency(int argc, char **argv)
{
	struct dataset_state st;
	uint32_t id;
	int err;

	if (argc > 2)
		return ctl_usage("residency", NULL);
	if (argc == 1) {
		out_obj_open(NULL);
		err = dataset_residency_print_all();
		out_obj_close();
		return err;
	}
	err = dataset_resolve(argv[1], &id);
	if (!err)
		err = dataset_state_get(id, &st);
	if (!err)
		dataset_state_print(NULL, &st);
	return err;
}

TANDEM_CMD(steer, "steer", NULL, cmd_steer, "DATASET [--node N] [--no-wait] [--timeout S]",
	   "migrate the dataset's cached pages to the CXL node (or N) and wait; prints GB/s");
TANDEM_CMD(prefetch, "prefetch", NULL, cmd_prefetch,
	   "DATASET [--files A,B,...|--order FILE] [--rate MB/s] [--no-wait] | cancel DATASET",
	   "read the dataset into page cache allocated on the CXL node; Ctrl-C cancels");
TANDEM_CMD(residency, "residency", NULL, cmd_residency, "[DATASET]",
	   "per dataset: cached pages per node, steered/prefetched pages, skips by reason");
