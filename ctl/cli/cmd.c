// SPDX-License-Identifier: GPL-2.0
/*
 * The command registry, dispatch and conventions of tandemctl (cmd.h),
 * apart from main() so that host tests can link everything else. Keywords
 * are matched exactly (no abbreviations): scripts stay stable when verbs
 * are added.
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

/* the registry: filled by constructors before main(), read-only afterwards */
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

static void print_cmd(FILE *f, const struct ctl_cmd *c)
{
	fprintf(f, "  tandemctl %s%s%s%s%s\n      %s\n", c->object,
		c->verb ? " " : "", c->verb ? c->verb : "",
		c->args && *c->args ? " " : "", c->args ? c->args : "", c->help);
}

/* verb NULL: every command of object */
static int usage_to(FILE *f, const char *object, const char *verb)
{
	const struct ctl_cmd *c;
	int n = 0;

	fprintf(f, "Usage:\n");
	for (c = cmds; c; c = c->next) {
		if (strcmp(c->object, object))
			continue;
		if (verb && (c->verb ? strcmp(c->verb, verb) : 1))
			continue;
		print_cmd(f, c);
		n++;
	}
	if (!n)
		fprintf(f, "  (no command '%s%s%s')\n", object, verb ? " " : "", verb ? verb : "");
	return n;
}

int ctl_usage(const char *object, const char *verb)
{
	usage_to(stderr, object, verb);
	return CTL_EUSAGE;
}

int ctl_usage_err(const char *object, const char *verb, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctl_err("%s", msg);
	return ctl_usage(object, verb);
}

void ctl_print_help(FILE *f)
{
	const struct ctl_cmd *c;

	fprintf(f,
		"Usage: tandemctl [-j] [-p] OBJECT [VERB] [ARGS...]\n"
		"       tandemctl OBJECT [VERB] --help\n"
		"Options (before OBJECT):\n"
		"  -j, --json      JSON output: one document\n"
		"  -p, --pretty    indented JSON output (implies -j)\n"
		"  -V, --version   print the version\n"
		"  -h, --help      this help\n"
		"Sizes take K, M, G, T (binary: 1K = 1024); rates are sizes per second\n"
		"(50M = 50 MiB/s, also written 50M/s); durations take s, ms, us, m.\n"
		"Commands:\n");
	for (c = cmds; c; c = c->next)
		print_cmd(f, c);
}

int ctl_exit_status(int ret)
{
	if (ret == CTL_EUSAGE)
		return 2;
	if (ret < 0)
		return EXIT_FAILURE;
	return ret;
}

static bool is_global_opt(const char *s)
{
	static const char *const globals[] = { "-j", "-p", "-V", "--json", "--pretty", "--version" };

	for (size_t i = 0; i < sizeof(globals) / sizeof(globals[0]); i++)
		if (!strcmp(s, globals[i]))
			return true;
	return false;
}

const char *opt_name(const struct option *opts, int val)
{
	for (; opts && opts->name; opts++)
		if (opts->val == val)
			return opts->name;
	return "?";
}

int ctl_bad_option(const char *opt, const char *object, const char *verb)
{
	if (is_global_opt(opt))
		return ctl_usage_err(object, verb, "option '%s' goes before the object: "
				     "tandemctl %s %s%s%s ...", opt, opt, object,
				     verb ? " " : "", verb ? verb : "");
	return ctl_usage_err(object, verb, "unknown option '%s'", opt);
}

int ctl_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
	       const char *object, const char *verb)
{
	char spec[64], name[256];
	const char *last;
	int opt;

	/* ':' first: a missing value is ':', not '?', and getopt prints nothing */
	snprintf(spec, sizeof(spec), ":%s", shortopts ? shortopts : "");
	opterr = 0;
	opt = getopt_long(argc, argv, spec, longopts, NULL);
	if (opt != '?' && opt != ':')
		return opt;
	/* a long option is named by its word, a short one by optopt */
	last = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (!strncmp(last, "--", 2))
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(last, "="), last);
	else
		snprintf(name, sizeof(name), "-%c", optopt);
	if (opt == ':')
		return ctl_usage_err(object, verb, "option '%s' needs a value", name);
	return ctl_bad_option(name, object, verb);
}

static bool is_number(const char *s)
{
	double v;

	return !parse_double(s, &v);
}

int ctl_args(int *argc, char **argv, int min, int max, const char *object, const char *verb)
{
	int n = 1;
	bool dash = false;

	/* compact the arguments into argv[1..]: "--" goes, options are refused */
	for (int i = 1; i < *argc; i++) {
		if (!dash && !strcmp(argv[i], "--")) {
			dash = true;
			continue;
		}
		if (!dash && argv[i][0] == '-' && argv[i][1] && !is_number(argv[i]))
			return ctl_bad_option(argv[i], object, verb);
		argv[n++] = argv[i];
	}
	*argc = n;
	if (n - 1 < min)
		return ctl_usage_err(object, verb, "missing argument");
	if (max >= 0 && n - 1 > max)
		return ctl_usage_err(object, verb, "unexpected argument '%s'", argv[1 + max]);
	return 0;
}

/*
 * The command for "object verb": the verb's own entry, else the bare
 * object (which then takes the verb as its first argument).
 */
static const struct ctl_cmd *find_cmd(const char *object, const char *verb,
				      bool *object_known)
{
	const struct ctl_cmd *c, *bare = NULL;

	*object_known = false;
	for (c = cmds; c; c = c->next) {
		if (strcmp(c->object, object))
			continue;
		*object_known = true;
		if (!c->verb)
			bare = c;
		else if (verb && !strcmp(c->verb, verb))
			return c;
	}
	return bare;
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

	c = find_cmd(object, verb, &known);
	/* "OBJECT --help" (or -h) is "OBJECT help" where no bare OBJECT command takes it */
	if (verb && (!strcmp(verb, "--help") || !strcmp(verb, "-h")) && !c)
		verb = "help";
	if (verb && !strcmp(verb, "help") && (!c || !c->verb)) {
		if (!known)
			return ctl_usage_err(object, NULL, "unknown object '%s' (try 'tandemctl --help')",
					     object);
		usage_to(stdout, object, NULL);
		return 0;
	}
	if (!c) {
		if (!known) {
			ctl_err("unknown object '%s' (try 'tandemctl --help')", object);
			return CTL_EUSAGE;
		}
		if (verb)
			return ctl_usage_err(object, NULL, "unknown verb '%s' for '%s'", verb, object);
		return ctl_usage_err(object, NULL, "'%s' needs a verb", object);
	}
	if (c->verb) {
		argc--;
		argv++;
	}
	if (wants_help(argc, argv)) {
		/* a bare object's verbs are all its usage */
		usage_to(stdout, c->object, c->verb);
		return 0;
	}
	err = c->fn(argc, argv);
	if (out_finish() && !err)
		err = -EIO;	/* stdout could not take the output */
	return err;
}

int ctl_split_commands(int argc, char **argv, char ****cmds, int *n)
{
	char ***c;
	int k = 0, start = 0;

	c = calloc(argc + 1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (int i = 0; i <= argc; i++) {
		if (i < argc && strcmp(argv[i], ":::"))
			continue;
		if (i == start) {	/* empty command */
			free(c);
			return -EINVAL;
		}
		c[k] = calloc(i - start + 1, sizeof(char *));
		if (!c[k]) {
			ctl_free_commands(c, k);
			return -ENOMEM;
		}
		memcpy(c[k], argv + start, (i - start) * sizeof(char *));
		k++;
		start = i + 1;
	}
	*cmds = c;
	*n = k;
	return 0;
}

void ctl_free_commands(char ***cmds, int n)
{
	for (int i = 0; i < n && cmds; i++)
		free(cmds[i]);
	free(cmds);
}
