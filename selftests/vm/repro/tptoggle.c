// SPDX-License-Identifier: GPL-2.0
/*
 * Not a test: the reproducer of the multi-threaded TCG problem in
 * Documentation/testing.md. Three readers read a file and drop its cache
 * (fadvise DONTNEED) while the two filemap tracepoints are switched on and
 * off in tracefs N times; no Tandem code. tptoggle N FILE
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
static void wr(const char *p, const char *v)
{
	int fd = open(p, O_WRONLY);
	if (fd < 0 || write(fd, v, strlen(v)) < 0) { perror(p); exit(3); }
	close(fd);
}
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	const char *ev[2] = {
		"/sys/kernel/tracing/events/filemap/mm_filemap_delete_from_page_cache/enable",
		"/sys/kernel/tracing/events/filemap/mm_filemap_add_to_page_cache/enable" };
	char buf[1 << 16];
	pid_t r[3];
	for (int k = 0; k < 3; k++) {
		if ((r[k] = fork()) == 0) {
			for (;;) {
				int fd = open(argv[2], O_RDONLY);
				while (read(fd, buf, sizeof(buf)) > 0) ;
				posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
				close(fd);
			}
		}
	}
	for (int i = 0; i < n; i++) {
		wr(ev[0], "1"); wr(ev[1], "1");
		usleep(20000);
		wr(ev[0], "0"); wr(ev[1], "0");
		usleep(20000);
	}
	for (int k = 0; k < 3; k++) kill(r[k], SIGKILL);
	while (wait(NULL) > 0) ;
	printf("tptoggle: %d toggles done\n", n);
	return 0;
}
