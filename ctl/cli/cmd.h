/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tandemctl command registry. Each ctl/cmd_<object>.c file registers its
 * verbs with TANDEM_CMD(); no central table needs editing to add one.
 */
#ifndef TANDEM_CTL_CMD_H
#define TANDEM_CTL_CMD_H

#include <stdbool.h>
#include <stdio.h>

struct ctl_cmd {
	const char *object;	/* "dataset" */
	const char *verb;	/* "add", or NULL for a bare object ("status") */
	/* argv[0] is the verb (or the object); return 0 or a negative errno */
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

/* Run "OBJECT [VERB] ARGS..."; 0 or a negative errno. */
int ctl_run(int argc, char **argv);
/* The list of commands, for --help. */
void ctl_print_help(FILE *f);

/* Global options, set by main() before a command runs. */
extern bool opt_json;
extern bool opt_pretty;

/* Print "tandemctl: <msg>" to stderr (the CLI's one error line). */
void ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage of one command, to stderr; returns -EINVAL for "return usage(cmd)". */
int ctl_usage(const char *object, const char *verb);

#endif
