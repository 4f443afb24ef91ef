// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl tracker load [--max-pages N] [--max-files N] [--attach KIND] [--verbose]
 * tandemctl tracker unload
 * tandemctl [-j] tracker status
 * tandemctl tracker dataset NAME PATH...
 *
 * The page-cache sharing tracker itself (ctl/tracker/): loaded and pinned
 * in bpffs until unloaded, its state, datasets registered with it alone.
 * `tandemctl track` (cmd/track.c) runs jobs under it; `tandemctl stats`
 * (cmd/stats.c) reads its counters, and prints the state `tracker status`
 * shows.
 */
#include <errno.h>
#include <getopt.h>

#include "cli/cmd.h"
#include "cmd/stats.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/util.h"
#include "tracker/tracker.h"

static int cmd_tracker_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-pages", required_argument, NULL, 'p' },
		{ "max-files", required_argument, NULL, 'f' },
		{ "attach", required_argument, NULL, 'a' },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 }
	};
	struct tracker_load_opts o = {};
	int opt, err;

	optind = 0;
	while ((opt = ctl_getopt(argc, argv, "", opts, "tracker", "load")) != -1) {
		err = 0;
		if (opt == 'p')
			err = parse_u32(optarg, &o.max_pages) ?: (o.max_pages ? 0 : -EINVAL);
		if (opt == 'p')
			o.pages_set = true;	/* kept: registrations never grow it */
		else if (opt == 'f')
			err = parse_u32(optarg, &o.max_files) ?: (o.max_files ? 0 : -EINVAL);
		else if (opt == 'a')
			err = tracker_kind_parse(optarg, &o.prefer);
		else if (opt == 'v')
			o.verbose = true;
		else
			return opt;	/* CTL_EUSAGE, printed */
		if (err)
			return ctl_usage_err("tracker", "load", "bad value '%s'", optarg);
	}
	if (optind < argc)
		return ctl_usage_err("tracker", "load", "unexpected argument '%s'", argv[optind]);
	err = tracker_load(&o);
	if (err)
		return err;
	out_obj_open(NULL);
	out_str("dir", "tracker loaded at %s\n", tracker_dir());
	out_obj_close();
	return 0;
}

TANDEM_CMD(tracker_load, "tracker", "load", cmd_tracker_load,
	   "[--max-pages N] [--max-files N] [--attach auto|tracepoint|fentry|kprobe] [--verbose]",
	   "load the page-cache sharing tracker and pin it (stays loaded after tandemctl exits)");

static int cmd_tracker_unload(int argc, char **argv)
{
	int err;

	err = ctl_args(&argc, argv, 0, 0, "tracker", "unload");
	if (err)
		return err;
	err = tracker_unload();
	if (err == -ENOENT)
		ctl_err("tracker: not loaded (%s)", tracker_dir());
	if (err)
		return err;
	out_obj_open(NULL);
	out_str("dir", "tracker unloaded from %s\n", tracker_dir());
	out_obj_close();
	return 0;
}

TANDEM_CMD(tracker_unload, "tracker", "unload", cmd_tracker_unload, "",
	   "detach the tracker and drop its counters");

static int cmd_tracker_status(int argc, char **argv)
{
	struct tracker_snapshot s;
	struct tracker t;
	int err;

	err = ctl_args(&argc, argv, 0, 0, "tracker", "status");
	if (err)
		return err;
	if (!tracker_is_loaded()) {
		out_obj_open(NULL);
		out_bool("loaded", "tracker loaded: %s\n", false);
		out_obj_close();
		return 0;
	}
	err = tracker_open(&t);
	if (err)
		return err;
	err = tracker_snapshot_read(&t, &s);
	tracker_close(&t);
	if (err)
		return err;
	out_obj_open(NULL);
	out_bool("loaded", "tracker loaded: %s\n", true);
	stats_print_tracker(&s);
	stats_print_dataset_totals(&s, &(struct stats_filter){});
	out_obj_close();
	tracker_snapshot_free(&s);
	return 0;
}

TANDEM_CMD(tracker_status, "tracker", "status", cmd_tracker_status, "",
	   "whether the tracker is loaded, its attach points, map use and datasets");

static int cmd_tracker_dataset(int argc, char **argv)
{
	struct tracker_add_result res;
	struct tracker_fit fit;
	struct tracker t;
	int err;

	err = ctl_args(&argc, argv, 2, -1, "tracker", "dataset");
	if (err)
		return err;
	/* loaded sized for the files, or a loaded one grown */
	err = tracker_register(&t, argv[1], argv + 2, argc - 2, 0, &res, &fit);
	if (err)
		return err;
	tracker_close(&t);
	out_obj_open(NULL);
	out_u64("dataset", "dataset %llu", res.dataset);
	out_str("name", " (%s):", argv[1]);
	out_u64("files_added", " %llu files added", res.added);
	out_u64("pages_added", " (%llu pages)", res.pages);
	out_u64("files_present", ", %llu already registered", res.present);
	file_skips_print(&res.skipped);
	out_bool("tracker_loaded", fit.loaded ? "; tracker loaded" : NULL, fit.loaded);
	out_bool("tracker_grown", fit.grown ? "; tracker reloaded larger" : NULL, fit.grown);
	out_text("\n");
	out_obj_close();
	return 0;
}

TANDEM_CMD(tracker_dataset, "tracker", "dataset", cmd_tracker_dataset,
	   "NAME PATH...",
	   "register files (directories walked) as dataset NAME with the tracker alone (no tandem.ko needed)");
