// SPDX-License-Identifier: GPL-2.0
/*
 * steerbench: the userspace side of the steering benchmarks (bench/steer/),
 * run inside the VM rig. Statically linked so the busybox image needs no
 * libraries.
 *
 *   steerbench nodes PATH...              cached pages per node (ground truth)
 *   steerbench movepages --node N PATH... the baseline: mmap + move_pages(2)
 *   steerbench waitsteer DSDIR -- CMD...  run CMD, wait for DSDIR/steer_pending 0
 *   steerbench prefer NODE -- CMD...      exec CMD with MPOL_PREFERRED NODE:
 *                                         its page-cache reads allocate there
 *   steerbench hog MIB [--grow MIB] [--bind-grow NODE] [--ready FILE]
 *                  [--touch PCT --step-ms MS] [--report-s S]
 *                                         the "model": anonymous memory held;
 *                                         with --touch, a training step every
 *                                         MS ms writes PCT% of it (one word per
 *                                         cache line, in turn over all of it,
 *                                         as weights and optimizer state are)
 *   steerbench zeros DIR N MIB            write DIR/sample-000001.bin ... N: MIB
 *                                         MiB of zeros each, one write(2) per
 *                                         file (what dd if=/dev/zero bs=MIBM
 *                                         count=1 does, without a process each)
 *   steerbench copy --node N MIB          the copy alone: MIB of memory on node 0
 *                                         copied 4 KiB at a time (rep movsq, and
 *                                         8 words at a time through registers:
 *                                         the two ways of x86-64 copy_page()) into memory
 *                                         on node N, both faulted in before
 *                                         (huge pages where THP allows);
 *                                         the floor of any migration that copies
 *
 * PATH is a file or a directory (its regular files, by name). Output is one
 * line of key=value pairs per command, for the scripts to pick apart.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/residency.h"

#define MAXNODE		8
#define MPOL_BIND_	2

static long pg;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct paths {
	char **v;
	int n, cap;
};

static int paths_push(struct paths *p, const char *dir, const char *name)
{
	char *s;

	if (p->n == p->cap) {
		char **v = realloc(p->v, sizeof(*v) * (p->cap ? p->cap * 2 : 64));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = p->cap ? p->cap * 2 : 64;
	}
	if (asprintf(&s, "%s%s%s", dir, dir[0] ? "/" : "", name) < 0)
		return -ENOMEM;
	p->v[p->n++] = s;
	return 0;
}

static int skip_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Files named by args: files as given, directories' regular files by name. */
static int paths_collect(struct paths *p, char **args, int n)
{
	struct dirent **ents;
	struct stat st;
	int k, m, err = 0;

	for (k = 0; k < n && !err; k++) {
		if (stat(args[k], &st))
			return fprintf(stderr, "steerbench: %s: %s\n", args[k], strerror(errno)), -errno;
		if (!S_ISDIR(st.st_mode)) {
			err = paths_push(p, "", args[k]);
			continue;
		}
		m = scandir(args[k], &ents, skip_dot, alphasort);
		if (m < 0)
			return -errno;
		for (int i = 0; i < m; i++) {
			if (!err && ents[i]->d_type == DT_REG)
				err = paths_push(p, args[k], ents[i]->d_name);
			free(ents[i]);
		}
		free(ents);
	}
	return err;
}

struct tally {
	struct residency r;
	double total_s;
};

/*
 * One file's cached pages (only those mincore says are cached, so no I/O is
 * done) moved to `node` when node >= 0, else just asked where they are:
 * ctl/lib/residency.c, the scan tandemctl and the VM tests use too.
 */
static int file_pages(const char *path, int node, struct tally *t)
{
	double t0 = now_s();
	int err = residency_file(path, node >= 0 ? RESIDENCY_MOVE : RESIDENCY_NODES, node, &t->r);

	t->total_s += now_s() - t0;
	return err;
}

static void tally_print(const struct tally *t)
{
	long other = t->r.other;

	for (int i = MAXNODE; i < RESIDENCY_MAX_NODES; i++)
		other += t->r.nodes[i];
	printf("pages=%ld cached=%ld", t->r.pages, t->r.cached);
	for (int i = 0; i < MAXNODE; i++)
		if (t->r.nodes[i] || i < 2)
			printf(" node%d=%ld", i, t->r.nodes[i]);
	printf(" other=%ld failed=%ld", other, t->r.failed);
}

static int cmd_pages(int argc, char **argv)
{
	struct tally t = { 0 };
	struct paths p = { 0 };
	int node = -1, err, k;

	if (argc > 2 && !strcmp(argv[0], "--node")) {
		node = atoi(argv[1]);
		argc -= 2;
		argv += 2;
	}
	err = paths_collect(&p, argv, argc);
	for (k = 0; k < p.n && !err; k++) {
		err = file_pages(p.v[k], node, &t);
		if (err)
			fprintf(stderr, "steerbench: %s: %s\n", p.v[k], strerror(-err));
	}
	for (k = 0; k < p.n; k++)
		free(p.v[k]);
	free(p.v);
	if (err)
		return 1;
	printf("files=%d ", p.n);
	tally_print(&t);
	if (node >= 0)
		printf(" total_s=%.4f move_s=%.4f gbps_total=%.4f gbps_move=%.4f",
		       t.total_s, t.r.move_s, t.r.cached * pg / 1e9 / t.total_s,
		       t.r.cached * pg / 1e9 / t.r.move_s);
	printf("\n");
	return 0;
}

static long read_long(const char *dir, const char *name)
{
	char path[512], buf[64];
	long v = -1;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = 0;
		v = strtol(buf, NULL, 10);
	}
	close(fd);
	return v;
}

/*
 * Time a steering pass as the module sees it: from the request to the moment
 * its queue is empty, polling one cheap sysfs value every millisecond (the
 * CLI's own wait polls the netlink dataset state, which walks the cache).
 */
static int cmd_waitsteer(int argc, char **argv)
{
	const char *ds = argv[0];
	long before, after, pending;
	double t0, t1;
	int st;
	pid_t pid;

	if (argc < 3 || strcmp(argv[1], "--"))
		return fprintf(stderr, "usage: steerbench waitsteer DSDIR -- CMD...\n"), 2;
	before = read_long(ds, "counters/steered");
	t0 = now_s();
	pid = fork();
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return fprintf(stderr, "steerbench: %s failed\n", argv[2]), 1;
	while ((pending = read_long(ds, "steer_pending")) > 0)
		usleep(1000);
	t1 = now_s();
	if (pending < 0)
		return fprintf(stderr, "steerbench: %s/steer_pending unreadable\n", ds), 1;
	after = read_long(ds, "counters/steered");
	printf("pages_steered=%ld seconds=%.4f gbps=%.4f\n", after - before, t1 - t0,
	       (after - before) * pg / 1e9 / (t1 - t0));
	return 0;
}

static volatile sig_atomic_t grow_req, stop_req;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		grow_req = 1;
	else
		stop_req = 1;
}

/*
 * The process's anonymous pages per node, from /proc/self/numa_maps (the
 * new mapping may merge with the old one, so count them all). Not
 * move_pages(2): on 6.1 it answers -ENOENT for pages whose PTEs NUMA
 * balancing has made PROT_NONE for a hinting fault (fixed in 6.6 by
 * FOLL_HONOR_NUMA_FAULT), and the model's pages get scanned.
 */
static int hog_place(struct tally *t)
{
	FILE *f = fopen("/proc/self/numa_maps", "r");
	char line[1024];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		if (!strstr(line, " anon="))
			continue;
		while ((p = strstr(p, " N"))) {
			int node;
			long n;

			if (sscanf(p, " N%d=%ld", &node, &n) == 2 && node >= 0 && node < MAXNODE)
				t->r.nodes[node] += n;
			p += 2;
		}
	}
	fclose(f);
	return 0;
}

static struct tally held;	/* the model's pages per node so far */

#define HOG_MAXREG	8
static struct { char *mem; long n; } hog_reg[HOG_MAXREG];	/* its mappings */
static int hog_nreg;
static long hog_pages;

/* Allocate and touch mib MiB (bound to node when node >= 0); print placement. */
static int hog_alloc(long mib, int node, const char *what)
{
	long n = mib * (1L << 20) / pg, k;
	struct tally t = { 0 };
	unsigned long mask = 1UL << (node >= 0 ? node : 0);
	char *mem;
	int err;

	mem = mmap(NULL, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	if (node >= 0 && syscall(SYS_mbind, mem, n * pg, MPOL_BIND_, &mask, MAXNODE + 1, 0))
		return -errno;
	for (k = 0; k < n; k++)
		mem[k * pg] = (char)(k | 1);	/* a real page, not the zero page */
	if (hog_nreg < HOG_MAXREG) {
		hog_reg[hog_nreg].mem = mem;
		hog_reg[hog_nreg++].n = n;
		hog_pages += n;
	}
	err = hog_place(&t);
	if (err)
		return err;
	printf("hog: %s %ld MiB%s: node0_mib=%.1f node1_mib=%.1f; now holds node0_mib=%.1f node1_mib=%.1f (numa_maps)\n",
	       what, mib, node >= 0 ? " bound to the node" : "",
	       (t.r.nodes[0] - held.r.nodes[0]) * pg / 1048576.0,
	       (t.r.nodes[1] - held.r.nodes[1]) * pg / 1048576.0,
	       t.r.nodes[0] * pg / 1048576.0, t.r.nodes[1] * pg / 1048576.0);
	held = t;
	return 0;
}

static double boot_s(void)	/* the clock of /proc/uptime, for the scripts */
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One step: write one word per cache line of the next `npg` pages, in turn. */
static void hog_touch(long npg, long *next)
{
	for (long k = 0; k < npg && hog_pages; k++, (*next)++) {
		long i = *next % hog_pages;
		int r = 0;

		while (i >= hog_reg[r].n)
			i -= hog_reg[r++].n;
		for (long o = 0; o < pg; o += 64)
			*(volatile uint64_t *)(hog_reg[r].mem + i * pg + o) += 1;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the steps since the last report: their touch times, where the model is */
static int hog_report(double *ms, int n)
{
	struct tally t = { 0 };
	int err;

	if (!n)
		return 0;
	err = hog_place(&t);
	if (err)
		return err;
	qsort(ms, n, sizeof(*ms), cmp_double);
	printf("hog: step t=%.2f steps=%d touch_ms_p50=%.3f touch_ms_p90=%.3f touch_ms_max=%.3f node0_mib=%.1f node1_mib=%.1f\n",
	       boot_s(), n, ms[n / 2], ms[n * 9 / 10], ms[n - 1],
	       t.r.nodes[0] * pg / 1048576.0, t.r.nodes[1] * pg / 1048576.0);
	return 0;
}

/*
 * Hold mib MiB until SIGTERM; on SIGUSR1 take `grow` MiB more (bound to a
 * node if asked: a model whose framework binds its memory to local DRAM).
 * With --touch, one step every step-ms writes touch% of the model's pages;
 * every report-s a line gives the steps' touch times and the placement.
 * The signals stay blocked and are taken by sigtimedwait(), so none is lost.
 */
static int cmd_hog(int argc, char **argv)
{
	long mib = atol(argv[0]), grow = 0, next = 0;
	double touch = 0, step_ms = 100, report_s = 2, *ms = NULL, t_step, t_rep;
	const char *ready = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;
	int bind = -1, err, fd, nms = 0, cap = 0;

	for (int k = 1; k + 1 < argc; k += 2)
		if (!strcmp(argv[k], "--grow"))
			grow = atol(argv[k + 1]);
		else if (!strcmp(argv[k], "--bind-grow"))
			bind = atoi(argv[k + 1]);
		else if (!strcmp(argv[k], "--ready"))
			ready = argv[k + 1];
		else if (!strcmp(argv[k], "--touch"))
			touch = atof(argv[k + 1]);
		else if (!strcmp(argv[k], "--step-ms"))
			step_ms = atof(argv[k + 1]);
		else if (!strcmp(argv[k], "--report-s"))
			report_s = atof(argv[k + 1]);
	if (touch < 0 || touch > 100 || !(step_ms > 0) || !(report_s > 0))
		return fprintf(stderr, "steerbench hog: --touch 0-100, --step-ms and --report-s > 0\n"), 2;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = hog_alloc(mib, -1, "holds");
	if (!err && ready) {
		fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0)
			close(fd);
	}
	t_step = t_rep = now_s();
	while (!err && !stop_req) {
		if (touch > 0) {
			double wait = t_step + step_ms / 1e3 - now_s();
			struct timespec ts = { 0 };
			int sig;

			if (wait > 0) {
				ts.tv_sec = (time_t)wait;
				ts.tv_nsec = (long)((wait - ts.tv_sec) * 1e9);
			}
			sig = sigtimedwait(&block, NULL, &ts);
			if (sig > 0)
				on_signal(sig);
			else {
				double a = now_s();

				t_step = a;
				hog_touch((long)(hog_pages * touch / 100), &next);
				if (nms == cap) {
					double *m2 = realloc(ms, (cap = cap ? 2 * cap : 256) * sizeof(*ms));

					if (!m2) {
						err = -ENOMEM;
						break;
					}
					ms = m2;
				}
				ms[nms++] = (now_s() - a) * 1e3;
				if (now_s() - t_rep >= report_s) {
					err = hog_report(ms, nms);
					nms = 0;
					t_rep = now_s();
				}
			}
		} else {
			sigsuspend(&old);
		}
		if (grow_req && grow) {
			grow_req = 0;
			err = hog_alloc(grow, bind, "grew by");
		}
	}
	if (!err)
		err = hog_report(ms, nms);
	free(ms);
	if (err)
		fprintf(stderr, "steerbench hog: %s\n", strerror(-err));
	return err ? 1 : 0;
}

#define MPOL_PREFERRED_	1

/* exec argv[2..] preferring node argv[0] for its allocations, page cache included */
static int cmd_prefer(int argc, char **argv)
{
	unsigned long mask;
	int node = atoi(argv[0]);

	if (argc < 3 || strcmp(argv[1], "--") || node < 0 || node >= MAXNODE)
		return fprintf(stderr, "usage: steerbench prefer NODE -- CMD...\n"), 2;
	mask = 1UL << node;
	if (syscall(SYS_set_mempolicy, MPOL_PREFERRED_, &mask, MAXNODE + 1))
		return fprintf(stderr, "steerbench prefer: set_mempolicy: %s\n", strerror(errno)), 1;
	execvp(argv[2], argv + 2);
	fprintf(stderr, "steerbench prefer: %s: %s\n", argv[2], strerror(errno));
	return 127;
}

/*
 * One page, 8 words at a time through registers, as the kernel's
 * copy_page_regs() (what x86-64 copy_page() runs without REP_GOOD); not
 * vectorised, so the copy is the same instructions under TCG
 */
__attribute__((optimize("no-tree-vectorize")))
static void copy_regs(uint64_t *d, const uint64_t *s, size_t words)
{
	for (size_t i = 0; i < words; i += 8) {
		uint64_t a = s[i], b = s[i + 1], c = s[i + 2], e = s[i + 3];
		uint64_t f = s[i + 4], g = s[i + 5], h = s[i + 6], k = s[i + 7];

		d[i] = a; d[i + 1] = b; d[i + 2] = c; d[i + 3] = e;
		d[i + 4] = f; d[i + 5] = g; d[i + 6] = h; d[i + 7] = k;
	}
}

static void copy_rep(void *d, const void *s, size_t words)
{
#if defined(__x86_64__)
	__asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(words) : : "memory");
#else
	memcpy(d, s, words * 8);
#endif
}

/* seconds to copy len bytes page by page with one of the two */
static double copy_timed(char *dst, const char *src, size_t len, bool rep)
{
	double t0 = now_s();

	for (size_t off = 0; off < len; off += (size_t)pg) {
		if (rep)
			copy_rep(dst + off, src + off, (size_t)pg / 8);
		else
			copy_regs((uint64_t *)(dst + off), (const uint64_t *)(src + off), (size_t)pg / 8);
	}
	return now_s() - t0;
}

/*
 * MIB on node 0 copied page by page into MIB on node, both ways the kernel's
 * copy_page() may copy: seconds and GB/s of each, and of the faster
 */
static int cmd_copy(int node, long mib)
{
	size_t len = (size_t)mib << 20;
	unsigned long m0 = 1UL, m1 = 1UL << node;
	double t_rep, t_regs;
	char *src, *dst;

	if (node < 0 || node >= MAXNODE || mib <= 0)
		return fprintf(stderr, "usage: steerbench copy --node N MIB\n"), 2;
	src = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || dst == MAP_FAILED ||
	    syscall(SYS_mbind, src, len, MPOL_BIND_, &m0, MAXNODE + 1, 0) ||
	    syscall(SYS_mbind, dst, len, MPOL_BIND_, &m1, MAXNODE + 1, 0))
		return fprintf(stderr, "steerbench copy: %s\n", strerror(errno)), 1;
	/*
	 * Huge pages where the kernel gives them, as its direct map has: under
	 * TCG every new 4 KiB page of a mapping costs a soft-TLB refill that
	 * the kernel's own copies do not pay
	 */
	madvise(src, len, MADV_HUGEPAGE);
	madvise(dst, len, MADV_HUGEPAGE);
	memset(src, 0x5a, len);		/* faulted in, so only the copies are timed */
	memset(dst, 0, len);
	t_rep = copy_timed(dst, src, len, true);
	memset(dst, 0, len);
	t_regs = copy_timed(dst, src, len, false);
	if (memcmp(src, dst, len))
		return fprintf(stderr, "steerbench copy: copy differs\n"), 1;
	printf("pages=%zu rep_s=%.3f regs_s=%.3f seconds=%.3f gbps=%.4f\n", len / (size_t)pg,
	       t_rep, t_regs, t_rep < t_regs ? t_rep : t_regs,
	       len / (t_rep < t_regs ? t_rep : t_regs) / 1e9);
	return 0;
}

/* the whole of len bytes of buf to fd, however many write(2) calls it takes */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* n files of mib MiB of zeros in dir: bench/steer/vm-capacity.sh's dataset */
static int cmd_zeros(const char *dir, long n, long mib)
{
	size_t len = (size_t)mib << 20;
	double t0 = now_s();
	char path[4096];
	char *buf;
	long i;

	if (n <= 0 || mib <= 0)
		return fprintf(stderr, "usage: steerbench zeros DIR N MIB\n"), 2;
	buf = calloc(1, len);
	if (!buf)
		return fprintf(stderr, "steerbench zeros: %s\n", strerror(errno)), 1;
	for (i = 1; i <= n; i++) {
		int fd, rc;

		snprintf(path, sizeof(path), "%s/sample-%06ld.bin", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			goto fail;
		rc = write_all(fd, buf, len);
		if (close(fd) || rc)
			goto fail;
	}
	free(buf);
	printf("files=%ld bytes=%zu seconds=%.3f\n", n, (size_t)n * len, now_s() - t0);
	return 0;
fail:
	fprintf(stderr, "steerbench zeros: %s: %s\n", path, strerror(errno));
	free(buf);
	return 1;
}

int main(int argc, char **argv)
{
	pg = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "nodes"))
		return cmd_pages(argc - 2, argv + 2);
	if (argc >= 5 && !strcmp(argv[1], "movepages") && !strcmp(argv[2], "--node"))
		return cmd_pages(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "prefer"))
		return cmd_prefer(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "waitsteer"))
		return cmd_waitsteer(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "hog"))
		return cmd_hog(argc - 2, argv + 2);
	if (argc == 5 && !strcmp(argv[1], "zeros"))
		return cmd_zeros(argv[2], atol(argv[3]), atol(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "copy") && !strcmp(argv[2], "--node"))
		return cmd_copy(atoi(argv[3]), atol(argv[4]));
	fprintf(stderr, "usage: steerbench nodes PATH... | movepages --node N PATH... |\n"
		"       waitsteer DSDIR -- CMD... | hog MIB [--grow MIB] [--bind-grow NODE] [--ready FILE]\n"
		"       [--touch PCT --step-ms MS] [--report-s S] | prefer NODE -- CMD... |\n"
		"       zeros DIR N MIB | copy --node N MIB\n");
	return 2;
}
