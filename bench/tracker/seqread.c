// SPDX-License-Identifier: GPL-2.0
/*
 * seqread FILE PASSES [BUFSIZE]: read FILE sequentially PASSES times with
 * read() into one page-aligned buffer (1 MiB by default) and print one line
 * per pass:
 * "pass N bytes B seconds S cpu C GBps G cpuGBps H": wall-clock and CPU
 * (user + system, this process) time. The bench runs it on cached files, so
 * the time is the kernel's page-cache copy plus whatever a tracer adds; CPU
 * time is the less noisy of the two on a shared machine, since a tracer's
 * BPF programs run, and are charged, in the reader's context.
 *
 * seqread --drop FILE...: drop the files' clean pages from the page cache
 * (POSIX_FADV_DONTNEED), what `dd iflag=nocache` does, which busybox lacks.
 * seqread --spin: a busy loop until killed (the bench's CPU-loaded case).
 * Static, so that the VM rig's busybox image runs it as it is.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int drop(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		int err;

		if (fd < 0) {
			perror(argv[i]);
			return 1;
		}
		err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
		if (err) {
			fprintf(stderr, "%s: fadvise: %s\n", argv[i], strerror(err));
			return 1;
		}
	}
	return 0;
}

static int spin(void)
{
	volatile unsigned long n = 0;

	for (;;)
		n++;
	return 0;
}

int main(int argc, char **argv)
{
	size_t bufsize = argc > 3 ? strtoul(argv[3], NULL, 0) : 1 << 20;
	int passes = argc > 2 ? atoi(argv[2]) : 1;
	char *buf;

	if (argc > 1 && !strcmp(argv[1], "--drop"))
		return drop(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "--spin"))
		return spin();
	if (argc < 3 || !bufsize || passes <= 0) {
		fprintf(stderr, "usage: seqread FILE PASSES [BUFSIZE]\n");
		return 2;
	}
	/*
	 * Page-aligned: on the host (6.18) a read into a buffer 16 bytes past
	 * a page (what malloc returns) copies at 2 GB/s, into an aligned one
	 * at 11-14 GB/s; the bench wants the fastest reader, where a tracer's
	 * share of the CPU time is largest.
	 */
	if (posix_memalign((void **)&buf, 4096, bufsize))
		return 1;
	for (int p = 0; p < passes; p++) {
		long long total = 0;
		ssize_t n;
		double t0, t1, c0, c1;
		int fd = open(argv[1], O_RDONLY);

		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		t0 = now();
		c0 = cpu_now();
		while ((n = read(fd, buf, bufsize)) > 0)
			total += n;
		t1 = now();
		c1 = cpu_now();
		close(fd);
		if (n < 0) {
			perror("read");
			return 1;
		}
		printf("pass %d bytes %lld seconds %.6f cpu %.6f GBps %.3f cpuGBps %.3f\n",
		       p, total, t1 - t0, c1 - c0, total / (t1 - t0) / 1e9,
		       c1 > c0 ? total / (c1 - c0) / 1e9 : 0.0);
	}
	free(buf);
	return 0;
}
