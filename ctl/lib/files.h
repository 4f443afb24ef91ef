/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dataset walk: which files a DIR (or a list of paths) stands for. Every
 * command that takes a dataset directory (run, calibrate, loadgen, dataset
 * add, tracker dataset, track --files, prefetch, the node agent) gets its
 * files from file_list_collect(), so they all see the same files. The rule
 * (Documentation/tandemctl.md, "Datasets: which files a DIR is"):
 *
 *  - a directory is walked recursively, each directory's entries in byte
 *    order of their names (strcmp), depth first: ImageFolder's class folders
 *    and their files come out in the order torchvision lists them;
 *  - names starting with '.' (files and directories: .DS_Store,
 *    .ipynb_checkpoints, editors' and rsync's temporaries) are skipped inside
 *    a walk; a path given explicitly is taken whatever its name;
 *  - symbolic links are followed, to files and to directories, as
 *    torchvision's ImageFolder (os.walk(followlinks=True)) and open(2) do; a
 *    link whose target is missing is skipped;
 *  - only regular files are taken: FIFOs, sockets and devices are skipped
 *    and never opened;
 *  - a file is taken once, at the first path that reaches it (the same inode
 *    through a hard link or a symbolic link is one file: one set of pages in
 *    the page cache), and a directory is walked once (a link back to an
 *    ancestor is not a loop).
 *
 * Paths are absolute, with the directories given resolved (realpath) and the
 * names below them as found; a symbolic link is replaced by its target's
 * real path, so each path names the file itself.
 */
#ifndef TANDEM_CTL_FILES_H
#define TANDEM_CTL_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What a walk left out, and why (all zero for a plain tree of files). */
struct file_skips {
	uint32_t hidden;	/* a name starting with '.' */
	uint32_t special;	/* FIFO, socket, device */
	uint32_t dangling;	/* a symbolic link to nothing */
	uint32_t duplicates;	/* an inode already taken (hard or symbolic link) */
	uint32_t dirs_again;	/* a directory already walked (a link to it) */
};

struct file_list {
	char **paths;
	uint64_t *sizes;	/* st_size of each */
	dev_t *devs;		/* st_dev, st_ino of each (the target's) */
	ino_t *inos;
	size_t n, cap;
	uint64_t bytes;		/* sum of sizes */
	struct file_skips skipped;
	/* inside: the (dev, ino) already taken, files and directories */
	struct file_seen *seen;
	size_t nseen, seen_cap;
};

/*
 * Append the files args stand for, by the rule above. 0 or -errno with one
 * error line printed (ctl_err): a path that does not exist, a directory that
 * cannot be read, memory. fl starts zeroed or as a previous call left it.
 */
int file_list_collect(struct file_list *fl, char **args, int nargs);
/*
 * The lines of the file at path (an order file: one path a line; empty
 * lines and lines starting with # skipped) through file_list_collect(), in
 * order. Errors printed.
 */
int file_list_read(struct file_list *fl, const char *path);
/*
 * Done collecting: free what the walk remembers of the files it took (a
 * hash of every (dev, ino), tens of MiB for a million files). A later
 * collect would take a file again.
 */
void file_list_seal(struct file_list *fl);
void file_list_free(struct file_list *fl);
/*
 * Files by (st_dev, st_ino): sorted once, each lookup a binary search (a
 * million-file dataset is matched without a scan per lookup).
 */
struct file_index {
	size_t n;
	struct file_index_ent { dev_t dev; ino_t ino; size_t idx; } *e;
};

/* The index of n files' (devs[i], inos[i]); 0 or -ENOMEM. */
int file_index_make(struct file_index *ix, const dev_t *devs, const ino_t *inos, size_t n);
/* i of the file (dev, ino) in the arrays given to make, or -1 */
long file_index_find(const struct file_index *ix, dev_t dev, ino_t ino);
void file_index_free(struct file_index *ix);

/* "2 hidden, 1 special, ..." of what was skipped ("" when nothing was) */
const char *file_skips_fmt(const struct file_skips *s, char *buf, size_t len);
/*
 * On the print path (lib/out.h): JSON object "skipped" with every count;
 * text " (skipped: 2 hidden, ...)" only when something was.
 */
void file_skips_print(const struct file_skips *s);

#endif
