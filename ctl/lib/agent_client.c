// SPDX-License-Identifier: GPL-2.0
/*
 * The node agent's client (agent_client.h): a non-blocking UNIX socket
 * driven by poll() against deadlines. libc only: the SPANK plugin links it.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/agent_client.h"

uint64_t tandem_agent_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void tandem_agent_client_init(struct tandem_agent_client *c, int sfd)
{
	c->fd = -1;
	c->sfd = sfd;
	c->len = 0;
}

int tandem_agent_client_connect(struct tandem_agent_client *c, const char *path,
				uint64_t deadline)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd p;
	socklen_t sl = sizeof(int);
	int err = 0;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		return -errno;
	if (!connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	p = (struct pollfd){ .fd = c->fd, .events = POLLOUT };
	if (poll(&p, 1, (int)(deadline - tandem_agent_mono_ms())) != 1)
		return -ETIMEDOUT;
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &sl) || err)
		return err ? -err : -errno;
	return 0;
}

int tandem_agent_client_send(struct tandem_agent_client *c, const char *buf, size_t n,
			     uint64_t deadline)
{
	while (n) {
		struct pollfd p = { .fd = c->fd, .events = POLLOUT };
		ssize_t w = send(c->fd, buf, n, MSG_NOSIGNAL);
		uint64_t now;

		if (w > 0) {
			buf += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		now = tandem_agent_mono_ms();
		if (now >= deadline || poll(&p, 1, (int)(deadline - now)) == 0)
			return -ETIMEDOUT;
	}
	return 0;
}

/* a signal on sfd: 1 and *signo */
static int client_signal(struct tandem_agent_client *c, int *signo)
{
	struct signalfd_siginfo si;

	if (read(c->sfd, &si, sizeof(si)) != sizeof(si))
		return 0;
	*signo = (int)si.ssi_signo;
	return 1;
}

int tandem_agent_client_line(struct tandem_agent_client *c, uint64_t deadline, size_t *n,
			     int *signo)
{
	static const size_t cap = sizeof(c->buf);

	for (;;) {
		struct pollfd p[2] = { { .fd = c->fd, .events = POLLIN },
				       { .fd = c->sfd, .events = POLLIN } };
		char *lf = memchr(c->buf, '\n', c->len);
		uint64_t now = tandem_agent_mono_ms();
		ssize_t r;

		if (lf) {
			*n = (size_t)(lf - c->buf);
			return 1;
		}
		if (c->len == cap)
			return -EMSGSIZE;
		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(p, c->sfd >= 0 ? 2 : 1, (int)(deadline - now)) < 0 && errno != EINTR)
			return -errno;
		if (c->sfd >= 0 && (p[1].revents & POLLIN) && client_signal(c, signo))
			return -EINTR;
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = recv(c->fd, c->buf + c->len, cap - c->len, 0);
		if (r == 0)
			return 0;
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (r > 0)
			c->len += (size_t)r;
	}
}

void tandem_agent_client_consume(struct tandem_agent_client *c, size_t n)
{
	memmove(c->buf, c->buf + n + 1, c->len - n - 1);
	c->len -= n + 1;
}

void tandem_agent_client_close(struct tandem_agent_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
