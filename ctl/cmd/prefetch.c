// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl prefetch DATASET [--files A,B,...|--order FILE] [--rate RATE] [--no-wait]
 * tandemctl prefetch cancel DATASET
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "module/module.h"

/* "a,b,c" or the lines of an order file -> absolute paths, in order */
static int prefetch_paths(struct file_list *fl, const char *list, const char *order)
{
	char *copy, *tok, *save = NULL;
	int err = 0;

	if (!list)
		return file_list_read(fl, order);
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save))
		err = file_list_collect(fl, &tok, 1);
	free(copy);
	return err;
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Wait for the prefetch to end; Ctrl-C cancels it. */
static int prefetch_wait(struct tnl *nl, uint32_t id, struct dataset_state *st)
{
	const char *term = getenv("TERM");
	bool tty = isatty(STDERR_FILENO) && !out_is_json() && term && strcmp(term, "dumb");
	bool cancelled = false;
	struct sigaction sa = { .sa_handler = on_sigint };
	int err;

	sigaction(SIGINT, &sa, NULL);
	for (;;) {
		err = dataset_state_get(nl, id, st);
		if (err)
			return err;
		if (st->pf_state != TANDEM_PREFETCH_RUNNING)
			break;
		if (interrupted && !cancelled) {
			cancelled = true;
			dataset_prefetch_cancel(nl, id);
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

/* the kernel's unit (KiB/s) from a rate in bytes/s; 1 KiB/s to 100 GiB/s */
static int rate_kbps(const char *arg, uint32_t *kbps)
{
	double bps, k;

	if (units_parse_rate(arg, &bps))
		return -EINVAL;
	k = round(bps / 1024);
	if (k < 1 || k > 104857600)
		return -ERANGE;
	*kbps = (uint32_t)k;
	return 0;
}

struct prefetch_opts {
	const char *list, *order;
	bool wait;
	struct dataset_prefetch req;
};

static int prefetch_parse(int argc, char **argv, struct prefetch_opts *o)
{
	static const struct option opts[] = {
		{ "files", required_argument, NULL, 'f' },
		{ "order", required_argument, NULL, 'o' },
		{ "rate", required_argument, NULL, 'r' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ 0 }
	};
	int opt;

	memset(o, 0, sizeof(*o));
	o->wait = true;
	optind = 0;	/* reinitialise getopt: main() parsed in "+" mode */
	while ((opt = ctl_getopt(argc, argv, "f:o:r:W", opts, "prefetch", NULL)) != -1) {
		switch (opt) {
		case 'f':
			o->list = optarg;
			break;
		case 'o':
			o->order = optarg;
			break;
		case 'r':
			if (rate_kbps(optarg, &o->req.kbps))
				return ctl_usage_err("prefetch", NULL, "--rate: 1K to 100G "
						     "(bytes/s; 50M = 50 MiB/s)");
			o->req.has_kbps = true;
			break;
		case 'W':
			o->wait = false;
			break;
		default:
			return opt;	/* CTL_EUSAGE, printed */
		}
	}
	if (o->list && o->order)
		return ctl_usage_err("prefetch", NULL, "--files or --order, not both");
	if (optind != argc - 1)
		return ctl_usage_err("prefetch", NULL, optind < argc ? "one DATASET" :
				     "missing DATASET");
	return 0;
}

static int prefetch_print(const struct dataset_state *before, const struct dataset_state *st)
{
	uint64_t read = st->cnt[TANDEM_CNT_PREFETCHED] - before->cnt[TANDEM_CNT_PREFETCHED];
	double secs = st->pf_elapsed_ns / 1e9;
	double bps = read * (double)sysconf(_SC_PAGESIZE) / (secs > 0 ? secs : 1e-9);
	char b[32];

	out_obj_open(NULL);
	out_str("state", "prefetch %s:", dataset_prefetch_state_name(st->pf_state));
	out_u64("pages_read", " %llu pages read", read);
	out_u64("pages_cached", ", %llu already cached",
		st->cnt[TANDEM_CNT_PREFETCH_CACHED] - before->cnt[TANDEM_CNT_PREFETCH_CACHED]);
	out_double("seconds", ", %.2f s", secs);
	out_double("read_bps", NULL, bps);
	out_text(" (%s read)\n", units_fmt_rate(bps, b, sizeof(b)));
	out_obj_close();
	if (st->pf_state == TANDEM_PREFETCH_FAILED) {
		ctl_err("prefetch stopped: no free memory on the target node");
		return -ENOMEM;
	}
	return st->pf_state == TANDEM_PREFETCH_CANCELLED ? -ECANCELED : 0;
}

static int cmd_prefetch_cancel(int argc, char **argv)
{
	struct tnl *nl;
	uint32_t id;
	int err;

	err = ctl_args(&argc, argv, 1, 1, "prefetch", "cancel");
	err = err ?: dataset_open(&nl, argv[1], &id);
	if (err)
		return err;
	err = dataset_prefetch_cancel(nl, id);
	tnl_close(nl);
	if (err)
		return err;
	out_obj_open(NULL);
	out_u64("id", "dataset %llu: prefetch cancelled\n", id);
	out_obj_close();
	return 0;
}

static int cmd_prefetch(int argc, char **argv)
{
	struct dataset_state st, before;
	struct file_list fl = { 0 };
	struct prefetch_opts o;
	struct tnl *nl;
	int err;

	err = prefetch_parse(argc, argv, &o);
	err = err ?: dataset_open(&nl, argv[optind], &o.req.id);
	if (err)
		return err;
	if (o.list || o.order)
		err = prefetch_paths(&fl, o.list, o.order);
	o.req.files = &fl;
	err = err ?: dataset_state_get(nl, o.req.id, &before);
	err = err ?: dataset_prefetch(nl, &o.req);
	if (err)
		goto free_fl;
	if (!o.wait) {
		out_obj_open(NULL);
		out_u64("id", "dataset %llu: prefetch started\n", o.req.id);
		out_obj_close();
		goto free_fl;
	}
	err = prefetch_wait(nl, o.req.id, &st);
	err = err ?: prefetch_print(&before, &st);
free_fl:
	file_list_free(&fl);
	tnl_close(nl);
	return err;
}

TANDEM_CMD(prefetch, "prefetch", NULL, cmd_prefetch,
	   "DATASET [--files A,B,...|--order FILE] [--rate RATE] [--no-wait]",
	   "read the dataset into page cache allocated on the CXL node; Ctrl-C cancels");
TANDEM_CMD(prefetch_cancel, "prefetch", "cancel", cmd_prefetch_cancel, "DATASET",
	   "stop the dataset's prefetch");
