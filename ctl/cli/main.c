// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl [OPTIONS] OBJECT [VERB] [ARGS...]
 *
 * Global options, then the commands registered with TANDEM_CMD() in
 * ctl/cmd/<object>.c (dispatch and conventions in ctl/cli/cmd.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cmd.h"
#include "lib/out.h"
#include "lib/util.h"

#ifndef TANDEM_VERSION
#define TANDEM_VERSION "0.1.0"
#endif

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt;

	/* '+': stop at the first non-option, the object keyword */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+jpVh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			opt_json = true;
			break;
		case 'p':
			opt_json = opt_pretty = true;	/* indented JSON is JSON */
			break;
		case 'V':
			printf("tandemctl %s\n", TANDEM_VERSION);
			return EXIT_SUCCESS;
		case 'h':
			ctl_print_help(stdout);
			return EXIT_SUCCESS;
		default:
			if (optopt)
				ctl_err("unknown option '-%c'", optopt);
			else
				ctl_err("unknown option '%s'", argv[optind - 1]);
			ctl_print_help(stderr);
			return ctl_exit_status(CTL_EUSAGE);
		}
	}
	if (optind >= argc) {
		ctl_print_help(stderr);
		return ctl_exit_status(CTL_EUSAGE);
	}
	out_init(stdout, opt_json, opt_pretty);
	return ctl_exit_status(ctl_run(argc - optind, argv + optind));
}
