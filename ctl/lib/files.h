/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TANDEM_CTL_FILES_H
#define TANDEM_CTL_FILES_H

#include <stddef.h>

/* Absolute paths of regular files, in a stable (sorted per directory) order. */
struct file_list {
	char **paths;
	size_t n, cap;
};

/*
 * Append the regular files named by args: files as given (symlinks followed),
 * directories walked recursively (symlinks inside are not followed, other
 * file types skipped). 0 or -errno with one error line printed.
 */
int file_list_collect(struct file_list *fl, char **args, int nargs);
void file_list_free(struct file_list *fl);

#endif
