// SPDX-License-Identifier: GPL-2.0
/*
 * tandem-agent: the node agent. The protocol server (server.c, state.c)
 * with the makespan model deciding (policy_model.c) from the node's tracker
 * and tandem.ko (node.c); Documentation/slurm.md. Runs in the foreground;
 * the systemd unit (agent/tandem-agent.service) supervises it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "lib/log.h"
#include "model/model.h"
#include "policy_model.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tandem-agent [--socket PATH] [--log FILE|-] [--metrics-dir DIR]\n"
		"                    [--profile-dir DIR] [--min-gain F] [--recheck SECONDS]\n"
		"                    [--max-hold SECONDS] [--auto-stagger SECONDS]\n"
		"                    [--no-tracker] [--tracker-pages N] [--no-module]\n"
		"                    [--node NAME] [--max-conns N] [--max-user-conns N]\n"
		"  --socket PATH        UNIX socket (default %s)\n"
		"  --log FILE           per-node decision log, '-' for stderr (default none)\n"
		"  --metrics-dir DIR    write DIR/tandem_agent.prom (node_exporter textfile)\n"
		"  --profile-dir DIR    dataset profiles (DIR/NAME.json, written by tandemctl calibrate),\n"
		"                       matched by the dataset's path (default %s)\n"
		"  --min-gain F         stagger only when the model gains this fraction (default %.2f)\n"
		"  --recheck SECONDS    decide again this often while a task is held (default 1)\n"
		"  --max-hold SECONDS   cap on every hold, 1..86400 (default 3600)\n"
		"  --auto-stagger SECONDS  what auto means on a dataset without a profile (default 0)\n"
		"  --no-tracker         do not load or use the page-cache tracker\n"
		"  --tracker-pages N    page states when the agent loads the tracker (default %d)\n"
		"  --no-module          do not register datasets with tandem.ko\n"
		"  --node NAME          node label in the metrics (default: host name)\n"
		"  --max-conns N        open connections, held tasks included (default 4096);\n"
		"                       users (not root) together get half of them\n"
		"  --max-user-conns N   open connections of one user, not root (default 16)\n",
		TANDEM_AGENT_SOCKET, MODEL_POLICY_PROFILE_DIR, MO_MIN_GAIN, TRACKER_DEFAULT_MAX_PAGES);
}

static int parse_num(const char *opt, const char *s, unsigned long min, unsigned long max,
		     unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (!*s || *end || errno || *out < min || *out > max || *s == '-') {
		fprintf(stderr, "tandem-agent: %s must be a number from %lu to %lu\n", opt, min, max);
		return -1;
	}
	return 0;
}

static int parse_ms(const char *opt, const char *s, uint32_t *ms)
{
	struct tandem_stagger st;

	if (tandem_stagger_parse(s, &st) || st.mode != TANDEM_STAGGER_SECONDS) {
		fprintf(stderr, "tandem-agent: %s must be SECONDS (0 to %d, up to 3 decimals)\n",
			opt, TANDEM_AGENT_HOLD_MAX_S);
		return -1;
	}
	*ms = st.ms;
	return 0;
}

static int parse_model_opt(int c, const char *arg, struct model_policy_opts *m)
{
	unsigned long v;
	uint32_t ms;
	char *end;

	switch (c) {
	case 'P': m->profile_dir = arg; return 0;
	case 'T': m->node.tracker = false; return 0;
	case 'M': m->node.module = false; return 0;
	case 'p':
		if (parse_num("--tracker-pages", arg, 1024, 1u << 26, &v))
			return -1;
		m->node.tracker_pages = (uint32_t)v;
		return 0;
	case 'g':
		m->min_gain = strtod(arg, &end);
		if (!*arg || *end || !(m->min_gain >= 0 && m->min_gain < 1)) {
			fprintf(stderr, "tandem-agent: --min-gain must be a fraction from 0 to 1\n");
			return -1;
		}
		return 0;
	case 'r':
		if (parse_ms("--recheck", arg, &ms) || ms < 100) {
			fprintf(stderr, "tandem-agent: --recheck must be at least 0.1 s\n");
			return -1;
		}
		m->recheck_ms = ms;
		return 0;
	}
	return 1;
}

static const struct option agent_options[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "log", required_argument, NULL, 'l' },
	{ "metrics-dir", required_argument, NULL, 'm' },
	{ "max-hold", required_argument, NULL, 'H' },
	{ "auto-stagger", required_argument, NULL, 'a' },
	{ "node", required_argument, NULL, 'n' },
	{ "max-conns", required_argument, NULL, 'c' },
	{ "max-user-conns", required_argument, NULL, 'u' },
	{ "profile-dir", required_argument, NULL, 'P' },
	{ "min-gain", required_argument, NULL, 'g' },
	{ "recheck", required_argument, NULL, 'r' },
	{ "no-tracker", no_argument, NULL, 'T' },
	{ "tracker-pages", required_argument, NULL, 'p' },
	{ "no-module", no_argument, NULL, 'M' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* one of the agent's own options (parse_model_opt has the model's): 0, or -1 */
static int parse_agent_opt(int c, const char *arg, struct tandem_agent_opts *o)
{
	unsigned long v;

	switch (c) {
	case 's': o->socket_path = arg; return 0;
	case 'l': o->log_path = arg; return 0;
	case 'm': o->metrics_dir = arg; return 0;
	case 'n': o->node = arg; return 0;
	case 'H':
		if (parse_num("--max-hold", arg, 1, TANDEM_AGENT_HOLD_MAX_S, &v))
			return -1;
		o->max_hold_s = (uint32_t)v;
		return 0;
	case 'a':
		return parse_ms("--auto-stagger", arg, &o->auto_ms) ? -1 : 0;
	case 'c':
		if (parse_num("--max-conns", arg, 1, 65536, &v))
			return -1;
		o->max_conns = (unsigned int)v;
		return 0;
	case 'u':
		if (parse_num("--max-user-conns", arg, 1, 65536, &v))
			return -1;
		o->max_user_conns = (unsigned int)v;
		return 0;
	case 'h':
		usage(stdout);
		exit(EXIT_SUCCESS);
	default:
		usage(stderr);
		return -1;
	}
}

static int parse_args(int argc, char **argv, struct tandem_agent_opts *o,
		      struct model_policy_opts *m)
{
	int c, r;

	while ((c = getopt_long(argc, argv, "h", agent_options, NULL)) != -1) {
		r = parse_model_opt(c, optarg, m);
		if (r < 0)
			return -1;
		if (r && parse_agent_opt(c, optarg, o))
			return -1;
	}
	if (optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* the ctl libraries' error lines go to the per-node log */
static void lib_log(void *arg, const char *line, int prefixed)
{
	char e[TANDEM_AGENT_LINE_MAX];

	(void)prefixed;
	if (tandem_agent_escape(line, strlen(line), e, sizeof(e)) < 0)
		snprintf(e, sizeof(e), "(long)");
	tandem_agent_log(arg, "lib", "msg=%s", e);
}

int main(int argc, char **argv)
{
	struct tandem_agent_opts o;
	struct model_policy_opts mo;
	struct model_policy mp;
	struct tandem_agent a;
	char dir[4096], *slash;
	int err;

	tandem_agent_opts_default(&o);
	model_policy_opts_default(&mo);
	if (parse_args(argc, argv, &o, &mo))
		return EXIT_FAILURE;
	/* /run/tandem is made on the first start (the unit's RuntimeDirectory does it too) */
	snprintf(dir, sizeof(dir), "%s", o.socket_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			fprintf(stderr, "tandem-agent: cannot create %s: %s\n", dir, strerror(errno));
			return EXIT_FAILURE;
		}
	}
	err = model_policy_init(&mp, &mo);
	if (err) {
		fprintf(stderr, "tandem-agent: %s\n", strerror(-err));
		return EXIT_FAILURE;
	}
	err = tandem_agent_init(&a, &o, &mp.policy);
	if (err) {
		fprintf(stderr, "tandem-agent: %s: %s\n", o.socket_path,
			err == -EADDRINUSE ? "another agent is listening there" : strerror(-err));
		model_policy_fini(&mp);
		return EXIT_FAILURE;
	}
	ctl_log_set(lib_log, &a);
	tandem_agent_log(&a, "node", "tracker=%s tandem_ko=%s profile_dir=%s min_gain=%.3f "
			 "recheck_ms=%u", !mp.node.trk_open ? "no" : mp.node.trk_loaded_here ?
			 "loaded" : "in_use", mp.node.nl ? "yes" : "no",
			 mo.profile_dir ? mo.profile_dir : "none", mo.min_gain, mo.recheck_ms);
	err = tandem_agent_run(&a);
	tandem_agent_fini(&a);
	ctl_log_set(NULL, NULL);
	model_policy_fini(&mp);
	if (err) {
		fprintf(stderr, "tandem-agent: %s\n", strerror(-err));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
