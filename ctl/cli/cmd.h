/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tandemctl's command registry and conventions. Each ctl/cmd/<object>.c
 * file registers its verbs with TANDEM_CMD(); no central table needs
 * editing to add one. Every verb follows the same rules
 * (Documentation/tandemctl.md, "Conventions"; selftests/host/cli_conventions.sh):
 *   - `OBJECT [VERB] --help` (or `OBJECT help`): usage on stdout, exit 0;
 *   - a usage error (unknown or misplaced option, bad value, missing
 *     argument): one line naming it and the usage on stderr, exit 2;
 *   - success: at least one line of text, or exactly one JSON document
 *     with -j (-p implies -j); any other error: one line, exit 1.
 */
#ifndef TANDEM_CTL_CMD_H
#define TANDEM_CTL_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "lib/log.h"

/*
 * What a command returns: 0, a negative errno (exit 1), CTL_EUSAGE (exit 2)
 * or a positive exit status to pass on (track: its command's).
 */
#define CTL_EUSAGE	(-4096)

struct ctl_cmd {
	const char *object;	/* "dataset" */
	const char *verb;	/* "add", or NULL for a bare object ("status") */
	/* argv[0] is the verb (or the object) */
	int (*fn)(int argc, char **argv);
	const char *args;	/* usage of the arguments, "NAME PATH..." */
	const char *help;	/* one line */
	struct ctl_cmd *next;
};

void ctl_cmd_register(struct ctl_cmd *cmd);

#define TANDEM_CMD(id, obj, vb, func, argstr, helpstr)			\
	static struct ctl_cmd tandem_cmd_##id = {			\
		.object = obj, .verb = vb, .fn = func,			\
		.args = argstr, .help = helpstr,			\
	};								\
	__attribute__((constructor)) static void tandem_cmd_reg_##id(void) \
	{								\
		ctl_cmd_register(&tandem_cmd_##id);			\
	}

/*
 * Split "CMD_A ::: CMD_B ::: ..." (argv after "--", run and calibrate) into
 * n argv arrays; -EINVAL for an empty command, -ENOMEM.
 */
int ctl_split_commands(int argc, char **argv, char ****cmds, int *n);
void ctl_free_commands(char ***cmds, int n);

/* Run "OBJECT [VERB] ARGS..."; what the command returned (above). */
int ctl_run(int argc, char **argv);
/* The exit status for what ctl_run() returned. */
int ctl_exit_status(int ret);
/* The list of commands, for --help. */
void ctl_print_help(FILE *f);

/* Global options, set by main() before a command runs. */
extern bool opt_json;
extern bool opt_pretty;

/* Usage of one command (every verb of object when verb is NULL) to stderr; CTL_EUSAGE. */
int ctl_usage(const char *object, const char *verb);
/* "tandemctl: <msg>", then the usage; CTL_EUSAGE */
int ctl_usage_err(const char *object, const char *verb, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* the long name of option val in opts ("?" when none) */
const char *opt_name(const struct option *opts, int val);
/* "unknown option 'X'" (or where a global option goes), then the usage; CTL_EUSAGE */
int ctl_bad_option(const char *opt, const char *object, const char *verb);
/*
 * getopt_long() with the conventions: returns the next option, -1 at the
 * end (then the arguments are argv[optind..argc)), or CTL_EUSAGE after
 * naming an unknown or misplaced option or one without its value. Set
 * optind = 0 before the first call; options may follow arguments, "--"
 * ends them.
 */
int ctl_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
	       const char *object, const char *verb);
/*
 * For a command without options: min..max arguments (max < 0: any number),
 * none of them an option ("--" first lets one start with '-'; a negative
 * number is an argument). On success the arguments are argv[1..*argc).
 */
int ctl_args(int *argc, char **argv, int min, int max, const char *object, const char *verb);

#endif
