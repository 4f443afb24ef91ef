// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's connections as state.c sees them: queue a reply (the event
 * loop in server.c writes it), tie a held instance to its connection, watch
 * a running instance's pid, close. Below state.c and server.c; calls only
 * base.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "conn.h"

int tandem_agent_ep_mod(struct tandem_agent *a, int op, int fd, uint32_t events, const void *src)
{
	struct epoll_event ev = { .events = events, .data.ptr = (void *)src };

	return epoll_ctl(a->epfd, op, fd, &ev) ? -errno : 0;
}

void tandem_agent_conn_close(struct tandem_agent *a, struct tandem_agent_conn *c)
{
	struct tandem_agent_conn **pp;

	for (pp = &a->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->inst)
		c->inst->conn = NULL;
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->peer.uid != 0)
		a->nconns_user--;
	free(c->in);
	free(c->out);
	free(c);
	a->nconns--;
}

void tandem_agent_conn_attach(struct tandem_agent_conn *c, struct tandem_agent_inst *in)
{
	c->inst = in;
}

void tandem_agent_conn_detach(struct tandem_agent_conn *c)
{
	if (c->inst)
		c->inst->conn = NULL;
	c->inst = NULL;
}

static int conn_queue(struct tandem_agent_conn *c, const char *buf, size_t n)
{
	char *p = realloc(c->out, c->out_len + n);

	if (!p)
		return -ENOMEM;
	memcpy(p + c->out_len, buf, n);
	c->out = p;
	c->out_len += n;
	return 0;
}

/*
 * Queue one message; final: close after it. Nothing is written here: the
 * event loop writes (EPOLLOUT), so a failed write never re-enters state.c
 * in the middle of a request.
 */
int tandem_agent_send(struct tandem_agent *a, struct tandem_agent_conn *c,
		      const struct tandem_agent_msg *m, int final)
{
	char line[TANDEM_AGENT_LINE_MAX];
	int n = tandem_agent_format(m, line, sizeof(line));

	if (n < 0) {
		tandem_agent_log(a, "internal", "what=format verb=%s err=%d",
				 tandem_agent_verb_name(m->verb), n);
		return n;
	}
	if (conn_queue(c, line, (size_t)n))
		return -ENOMEM;
	if (final)
		c->final = 1;
	/* a closing connection no longer listens for input */
	tandem_agent_ep_mod(a, EPOLL_CTL_MOD, c->fd, c->final ? EPOLLOUT : EPOLLOUT | EPOLLRDHUP, &c->src);
	return 0;
}

void tandem_agent_send_err(struct tandem_agent *a, struct tandem_agent_conn *c,
			   const char *code, const char *fmt, ...)
{
	struct tandem_agent_msg m = { .verb = TANDEM_REP_ERR,
				      .have = 1u << TANDEM_F_CODE | 1u << TANDEM_F_MSG };
	va_list ap;

	for (int i = 0; i < 8; i++)
		if (!strcmp(tandem_agent_err_codes[i], code))
			a->proto_errors[i]++;
	a->metrics_dirty = 1;
	snprintf(m.code, sizeof(m.code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(m.msg, sizeof(m.msg), fmt, ap);
	va_end(ap);
	tandem_agent_log(a, "error", "code=%s pid=%d uid=%u msg=\"%s\"", code,
			 (int)c->peer.pid, (unsigned int)c->peer.uid, m.msg);
	tandem_agent_send(a, c, &m, 1);
}

int tandem_agent_watch_pid(struct tandem_agent *a, struct tandem_agent_inst *in)
{
	struct pid_src *ps;
	int fd;

#ifdef SYS_pidfd_open
	fd = (int)syscall(SYS_pidfd_open, (pid_t)in->pid, 0);
#else
	fd = (int)syscall(434, (pid_t)in->pid, 0);
#endif
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : 0;	/* -ESRCH: gone already */
	ps = malloc(sizeof(*ps));
	if (!ps) {
		close(fd);
		return 0;
	}
	*ps = (struct pid_src){ { SRC_PID }, in };
	if (tandem_agent_ep_mod(a, EPOLL_CTL_ADD, fd, EPOLLIN, ps)) {
		free(ps);
		close(fd);
		return 0;
	}
	in->pidfd = fd;
	in->watch = ps;
	return 0;
}

void tandem_agent_unwatch_pid(struct tandem_agent *a, struct tandem_agent_inst *in)
{
	if (in->pidfd < 0)
		return;
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, in->pidfd, NULL);
	close(in->pidfd);
	free(in->watch);
	in->pidfd = -1;
	in->watch = NULL;
}
