// SPDX-License-Identifier: GPL-2.0
/*
 * tandem-agent: the node agent's protocol server with the fixed policy (see
 * policy_fixed.c and Documentation/slurm.md). Runs in the foreground; the
 * systemd unit (agent/tandem-agent.service) supervises it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tandem-agent [--socket PATH] [--log FILE|-] [--metrics-dir DIR]\n"
		"                    [--max-hold SECONDS] [--auto-stagger SECONDS]\n"
		"                    [--node NAME] [--max-conns N]\n"
		"  --socket PATH        UNIX socket (default %s)\n"
		"  --log FILE           per-node decision log, '-' for stderr (default none)\n"
		"  --metrics-dir DIR    write DIR/tandem_agent.prom (node_exporter textfile)\n"
		"  --max-hold SECONDS   cap on every hold, 1..86400 (default 3600)\n"
		"  --auto-stagger SECONDS  what stagger=auto means until the model decides (default 0)\n"
		"  --node NAME          node label in the metrics (default: host name)\n"
		"  --max-conns N        open connections, held tasks included (default 4096)\n",
		TANDEM_AGENT_SOCKET);
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

static int parse_args(int argc, char **argv, struct tandem_agent_opts *o)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ "metrics-dir", required_argument, NULL, 'm' },
		{ "max-hold", required_argument, NULL, 'H' },
		{ "auto-stagger", required_argument, NULL, 'a' },
		{ "node", required_argument, NULL, 'n' },
		{ "max-conns", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct tandem_stagger st;
	unsigned long v;
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->socket_path = optarg; break;
		case 'l': o->log_path = optarg; break;
		case 'm': o->metrics_dir = optarg; break;
		case 'n': o->node = optarg; break;
		case 'H':
			if (parse_num("--max-hold", optarg, 1, TANDEM_AGENT_HOLD_MAX_S, &v))
				return -1;
			o->max_hold_s = (uint32_t)v;
			break;
		case 'a':
			if (tandem_stagger_parse(optarg, &st) || st.mode != TANDEM_STAGGER_SECONDS) {
				fprintf(stderr, "tandem-agent: --auto-stagger must be SECONDS (0 to %d)\n",
					TANDEM_AGENT_HOLD_MAX_S);
				return -1;
			}
			o->auto_ms = st.ms;
			break;
		case 'c':
			if (parse_num("--max-conns", optarg, 1, 65536, &v))
				return -1;
			o->max_conns = (unsigned int)v;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tandem_agent_opts o;
	struct tandem_agent a;
	char dir[4096], *slash;
	int err;

	tandem_agent_opts_default(&o);
	if (parse_args(argc, argv, &o))
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
	err = tandem_agent_init(&a, &o, &tandem_agent_policy_fixed);
	if (err) {
		fprintf(stderr, "tandem-agent: %s: %s\n", o.socket_path,
			err == -EADDRINUSE ? "another agent is listening there" : strerror(-err));
		return EXIT_FAILURE;
	}
	err = tandem_agent_run(&a);
	tandem_agent_fini(&a);
	if (err) {
		fprintf(stderr, "tandem-agent: %s\n", strerror(-err));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
