// SPDX-License-Identifier: GPL-2.0
/*
 * The command registry and dispatch of tandemctl, apart from main() so that
 * host tests can link everything else. Keywords are matched exactly (no
 * abbreviations): scripts stay stable when verbs are added.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "lib/out.h"
#include "lib/util.h"

bool opt_json;
bool opt_pretty;

static struct ctl_cmd *cmds;

void ctl_cmd_register(struct ctl_cmd *cmd)
{
	struct ctl_cmd **p = &cmds;

	/* keep the list sorted by object then verb for help output */
	while (*p) {
		int c = strcmp((*p)->object, cmd->object);

		if (!c)
			c = strcmp((*p)->verb ? (*p)->verb : "",
				   cmd->verb ? cmd->verb : "");
		if (c > 0)
			break;
		p = &(*p)->next;
	}
	cmd->next = *p;
	*p = cmd;
}

void ctl_err(const char *fmt, ...)
{
	va_list ap;

	fputs("tandemctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void print_cmd(FILE *f, const struct ctl_cmd *c)
{
	fprintf(f, "  tandemctl %s%s%s%s%s\n      %s\n", c->object,
		c->verb ? " " : "", c->verb ? c->verb : "",
		c->args && *c->args ? " " : "", c->args ? c->args : "", c->help);
}

int ctl_usage(const char *object, const char *verb)
{
	const struct ctl_cmd *c;
	int n = 0;

	fprintf(stderr, "Usage:\n");
	for (c = cmds; c; c = c->next) {
		if (strcmp(c->object, object))
			continue;
		if (verb && c->verb && strcmp(c->verb, verb))
			continue;
		print_cmd(stderr, c);
		n++;
	}
	if (!n)
		fprintf(stderr, "  (no command '%s%s%s')\n", object,
			verb ? " " : "", verb ? verb : "");
	return -EINVAL;
}

void ctl_print_help(FILE *f)
{
	const struct ctl_cmd *c;

	fprintf(f,
		"Usage: tandemctl [-j] [-p] OBJECT [VERB] [ARGS...]\n"
		"       tandemctl OBJECT [VERB] --help\n"
		"Options:\n"
		"  -j, --json      JSON output\n"
		"  -p, --pretty    indent JSON output\n"
		"  -V, --version   print the version\n"
		"  -h, --help      this help\n"
		"Commands:\n");
	for (c = cmds; c; c = c->next)
		print_cmd(f, c);
}

static const struct ctl_cmd *find_cmd(const char *object, const char *verb,
					 bool *object_known)
{
	const struct ctl_cmd *c;

	*object_known = false;
	for (c = cmds; c; c = c->next) {
		if (strcmp(c->object, object))
			continue;
		*object_known = true;
		if (!c->verb)
			return c;
		if (verb && !strcmp(c->verb, verb))
			return c;
	}
	return NULL;
}

static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

int ctl_run(int argc, char **argv)
{
	const char *object = argv[0], *verb = argc > 1 ? argv[1] : NULL;
	const struct ctl_cmd *c;
	bool known;
	int err;

	if (argc > 1 && is_help(verb) && !find_cmd(object, "help", &known))
		return ctl_usage(object, NULL), 0;
	c = find_cmd(object, verb, &known);
	if (!c) {
		if (!known) {
			ctl_err("unknown object '%s' (try 'tandemctl --help')", object);
			return -EINVAL;
		}
		if (verb)
			ctl_err("unknown verb '%s' for '%s'", verb, object);
		else
			ctl_err("'%s' needs a verb", object);
		return ctl_usage(object, NULL);
	}
	if (c->verb) {
		argc--;
		argv++;
	}
	if (wants_help(argc, argv)) {
		ctl_usage(c->object, c->verb);
		return 0;
	}
	err = c->fn(argc, argv);
	out_finish();
	return err;
}

