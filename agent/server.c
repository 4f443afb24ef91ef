// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's socket and event loop: one epoll over the listening socket, a
 * signalfd, every connection and the pidfds of running instances. One
 * request per connection; a REGISTER that is held keeps its connection open
 * until the agent pushes RELEASE or CANCEL, or the task goes away. At the
 * top of the protocol server: calls state.c, conn.c, metrics.c and base.c,
 * and none of them calls back into it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"

static const struct src listen_src = { SRC_LISTEN }, signal_src = { SRC_SIGNAL },
			policy_src = { SRC_POLICY };

void tandem_agent_opts_default(struct tandem_agent_opts *o)
{
	*o = (struct tandem_agent_opts){
		.socket_path = TANDEM_AGENT_SOCKET,
		.max_hold_s = 3600,
		.max_conns = 4096,
		.max_user_conns = 16,
		.request_timeout_ms = 2000,
	};
}

/* write what is queued; 1 when the connection was closed */
static int conn_flush(struct tandem_agent *a, struct tandem_agent_conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			tandem_agent_ep_mod(a, EPOLL_CTL_MOD, c->fd, EPOLLOUT | EPOLLRDHUP, &c->src);
			return 0;
		}
		if (n <= 0) {
			if (c->inst)
				tandem_agent_inst_left(a, c->inst);
			tandem_agent_conn_close(a, c);
			return 1;
		}
		c->out_off += (size_t)n;
	}
	c->out_off = c->out_len = 0;
	if (c->final) {
		tandem_agent_conn_close(a, c);
		return 1;
	}
	tandem_agent_ep_mod(a, EPOLL_CTL_MOD, c->fd, EPOLLIN | EPOLLRDHUP, &c->src);
	return 0;
}

static void conn_request(struct tandem_agent *a, struct tandem_agent_conn *c, size_t len)
{
	struct tandem_agent_msg *m = malloc(sizeof(*m));
	const char *code;
	char err[256];
	int ret;

	if (!m) {
		tandem_agent_conn_close(a, c);
		return;
	}
	ret = tandem_agent_parse(c->in, len, 0, m, err, sizeof(err), &code);
	/* one request per connection: from now on EPOLLIN means "peer closed" */
	free(c->in);
	c->in = NULL;
	if (ret)
		tandem_agent_send_err(a, c, code, "%s", err);
	else
		tandem_agent_request(a, c, m, c->peer.uid, c->peer.pid);
	free(m);
}

/* bytes on a connection that has not sent its request yet */
static void conn_read(struct tandem_agent *a, struct tandem_agent_conn *c)
{
	char *lf;
	ssize_t n;

	if (!c->in) {
		/* one request per connection: a held task never writes again */
		if (c->inst)
			tandem_agent_inst_left(a, c->inst);
		tandem_agent_conn_close(a, c);
		return;
	}
	n = recv(c->fd, c->in + c->in_len, TANDEM_AGENT_LINE_MAX - c->in_len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		tandem_agent_conn_close(a, c);
		return;
	}
	lf = memchr(c->in + c->in_len, '\n', (size_t)n);
	c->in_len += (size_t)n;
	if (!lf) {
		if (c->in_len >= TANDEM_AGENT_LINE_MAX)
			tandem_agent_send_err(a, c, "proto", "message longer than %d bytes",
					      TANDEM_AGENT_LINE_MAX - 1);
		return;
	}
	/* stop reading requests; EPOLLIN now means the peer closed */
	conn_request(a, c, (size_t)(lf - c->in));
}

static void conn_event(struct tandem_agent *a, struct tandem_agent_conn *c, uint32_t ev)
{
	if (ev & EPOLLOUT) {
		if (conn_flush(a, c))
			return;
	}
	if (c->final) {
		if (ev & (EPOLLHUP | EPOLLERR))
			tandem_agent_conn_close(a, c);
		return;
	}
	if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		conn_read(a, c);
}

/* a non-root peer's open connections */
static unsigned int uid_conns(const struct tandem_agent *a, uid_t uid)
{
	const struct tandem_agent_conn *c;
	unsigned int n = 0;

	for (c = a->conns; c; c = c->next)
		n += c->peer.uid == uid;
	return n;
}

/*
 * Out of file descriptors (or kernel memory): the listening socket stays
 * readable, so stop watching it for 100 ms instead of spinning on accept().
 */
static void accept_pause(struct tandem_agent *a, int err)
{
	if (a->accept_paused_until)
		return;
	a->accept_paused_until = tandem_agent_now_ms() + 100;
	tandem_agent_ep_mod(a, EPOLL_CTL_MOD, a->lfd, 0, &listen_src);
	tandem_agent_log(a, "error", "code=busy what=accept err=%d open=%u msg=\"%s; not accepting for 100 ms\"",
			 err, a->nconns, strerror(err));
}

static void accept_one(struct tandem_agent *a)
{
	struct tandem_agent_conn *c;
	socklen_t sl = sizeof(struct ucred);
	int fd = accept4(a->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	unsigned int mine;

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				accept_pause(a, errno);
		}
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->in = malloc(TANDEM_AGENT_LINE_MAX)) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->peer, &sl)) {
		if (c)
			free(c->in);
		free(c);
		close(fd);
		return;
	}
	c->src.kind = SRC_CONN;
	c->fd = fd;
	c->t_accept = tandem_agent_now_ms();
	/* counted before it is linked: uid_conns() sees the others only */
	mine = c->peer.uid != 0 ? uid_conns(a, c->peer.uid) : 0;
	c->next = a->conns;
	a->conns = c;
	a->nconns++;
	if (c->peer.uid != 0)
		a->nconns_user++;
	if (tandem_agent_ep_mod(a, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLRDHUP, &c->src)) {
		tandem_agent_conn_close(a, c);
		return;
	}
	/*
	 * Users cannot crowd out the plugin (root, one connection per held
	 * task): each uid gets max_user_conns, all of them max_conns / 2.
	 */
	if (a->nconns > a->o.max_conns)
		tandem_agent_send_err(a, c, "busy", "agent has %u connections open", a->nconns - 1);
	else if (c->peer.uid != 0 && mine >= a->o.max_user_conns)
		tandem_agent_send_err(a, c, "busy", "uid %u has %u connections open (--max-user-conns)",
				      (unsigned int)c->peer.uid, mine);
	else if (c->peer.uid != 0 && a->nconns_user > a->o.max_conns / 2)
		tandem_agent_send_err(a, c, "busy", "users have %u connections open (--max-conns / 2)",
				      a->nconns_user - 1);
}

static void pid_event(struct tandem_agent *a, struct pid_src *ps)
{
	struct tandem_agent_inst *in = ps->inst;

	tandem_agent_unwatch_pid(a, in);
	tandem_agent_inst_exited(a, in);
}

static void signal_event(struct tandem_agent *a)
{
	struct signalfd_siginfo si;

	while (read(a->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			tandem_agent_log(a, "signal", "signo=%u", si.ssi_signo);
			a->stop = 1;
		}
	}
}

/* a stale socket file is replaced; a live agent on the path is an error */
static int bind_socket(struct tandem_agent *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = a->o.socket_path;
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(path, 0666) || listen(fd, 128)) {
		err = -errno;
		close(fd);
		unlink(path);
		return err;
	}
	a->lfd = fd;
	return 0;
}

static int setup_signals(struct tandem_agent *a)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	a->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return a->sigfd < 0 ? -errno : 0;
}

/*
 * Every connection is an fd, every running task a pidfd: make room for
 * max_conns of each (the soft limit up to the hard one), or lower max_conns
 * to what fits, so that the cap, not accept()'s EMFILE, is what users meet.
 */
static void raise_nofile(struct tandem_agent *a)
{
	rlim_t want = 2 * (rlim_t)a->o.max_conns + 256;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < want && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < want) {
		unsigned int fit = rl.rlim_cur > 512 ? (unsigned int)((rl.rlim_cur - 256) / 2) : 64;

		if (fit < a->o.max_conns) {
			tandem_agent_log(a, "limit", "nofile=%llu max_conns=%u was=%u",
					 (unsigned long long)rl.rlim_cur, fit, a->o.max_conns);
			a->o.max_conns = fit;
		}
	}
}

int tandem_agent_init(struct tandem_agent *a, const struct tandem_agent_opts *o,
		      const struct tandem_agent_policy *policy)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->o = *o;
	a->policy = policy;
	a->lfd = a->epfd = a->sigfd = -1;
	a->next_id = 1;
	if (o->node)
		snprintf(a->node, sizeof(a->node), "%s", o->node);
	else if (gethostname(a->node, sizeof(a->node) - 1))
		snprintf(a->node, sizeof(a->node), "localhost");
	if (o->log_path && !strcmp(o->log_path, "-")) {
		a->log = stderr;
	} else if (o->log_path) {
		a->log = fopen(o->log_path, "ae");
		if (!a->log)
			return -errno;
	}
	raise_nofile(a);
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (a->epfd < 0) {
		err = -errno;
		goto err_log;
	}
	err = setup_signals(a);
	if (err)
		goto err_epoll;
	err = bind_socket(a);
	if (err)
		goto err_sig;
	err = tandem_agent_ep_mod(a, EPOLL_CTL_ADD, a->lfd, EPOLLIN, &listen_src);
	if (!err)
		err = tandem_agent_ep_mod(a, EPOLL_CTL_ADD, a->sigfd, EPOLLIN, &signal_src);
	/* the policy's fd: readable means poll() has something to do */
	if (!err && policy->poll && policy->poll_fd >= 0)
		err = tandem_agent_ep_mod(a, EPOLL_CTL_ADD, policy->poll_fd, EPOLLIN, &policy_src);
	if (err)
		goto err_sock;
	tandem_agent_log(a, "start", "socket=%s policy=%s max_hold=%u node=%s pid=%d",
			 o->socket_path, policy->name, o->max_hold_s, a->node, (int)getpid());
	return 0;
err_sock:
	close(a->lfd);
	unlink(o->socket_path);
err_sig:
	close(a->sigfd);
err_epoll:
	close(a->epfd);
err_log:
	if (a->log && a->log != stderr)
		fclose(a->log);
	a->log = NULL;
	return err;
}

/* requests that did not arrive in time; ms until the next such deadline */
static int expire_requests(struct tandem_agent *a, uint64_t now)
{
	struct tandem_agent_conn *c, *next;
	int wait = -1;

	for (c = a->conns; c; c = next) {
		uint64_t due = c->t_accept + a->o.request_timeout_ms;

		next = c->next;
		/*
		 * An answer (not a held task's connection) that its peer does
		 * not read: gone after twice the request timeout.
		 */
		if (!c->in && !c->inst && c->out_off < c->out_len) {
			due += a->o.request_timeout_ms;
			if (due <= now) {
				tandem_agent_log(a, "error", "code=timeout pid=%d uid=%u msg=\"answer not read within %u ms; closed\"",
						 (int)c->peer.pid, (unsigned int)c->peer.uid,
						 2 * a->o.request_timeout_ms);
				tandem_agent_conn_close(a, c);
				continue;
			}
		} else if (!c->in || c->final) {
			continue;
		}
		if (due <= now) {
			tandem_agent_send_err(a, c, "timeout", "no request within %u ms",
					      a->o.request_timeout_ms);
			continue;
		}
		if (wait < 0 || due - now < (uint64_t)wait)
			wait = (int)(due - now);
	}
	return wait;
}

static int next_wait(struct tandem_agent *a)
{
	uint64_t now = tandem_agent_now_ms();
	int w1 = tandem_agent_tick(a, now), w2 = expire_requests(a, now), w3 = -1, w4 = -1, w5 = -1;

	if (a->accept_paused_until) {
		if (now >= a->accept_paused_until) {
			a->accept_paused_until = 0;
			tandem_agent_ep_mod(a, EPOLL_CTL_MOD, a->lfd, EPOLLIN, &listen_src);
		} else {
			w5 = (int)(a->accept_paused_until - now);
		}
	}

	if (a->policy->poll) {
		w4 = a->policy->poll(a->policy->priv, a, now);
		/* it may have released tasks or changed what is due */
		now = tandem_agent_now_ms();
		w1 = tandem_agent_tick(a, now);
	}
	if (a->metrics_dirty && a->o.metrics_dir) {
		if (now >= a->metrics_at + 500) {
			tandem_agent_write_metrics(a);
			a->metrics_dirty = 0;
			a->metrics_at = now;
		} else {
			w3 = (int)(a->metrics_at + 500 - now);
		}
	}
	if (w1 < 0 || (w2 >= 0 && w2 < w1))
		w1 = w2;
	if (w1 < 0 || (w3 >= 0 && w3 < w1))
		w1 = w3;
	if (w1 < 0 || (w4 >= 0 && w4 < w1))
		w1 = w4;
	if (w1 < 0 || (w5 >= 0 && w5 < w1))
		w1 = w5;
	return w1;
}

int tandem_agent_run(struct tandem_agent *a)
{
	struct epoll_event ev[1];	/* one at a time: a handler may free another source */

	while (!a->stop) {
		int n = epoll_wait(a->epfd, ev, 1, next_wait(a));

		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < n && !a->stop; i++) {
			struct src *s = ev[i].data.ptr;

			if (s->kind == SRC_LISTEN)
				accept_one(a);
			else if (s->kind == SRC_SIGNAL)
				signal_event(a);
			else if (s->kind == SRC_PID)
				pid_event(a, (struct pid_src *)s);
			else if (s->kind == SRC_POLICY)
				;	/* next_wait() calls its poll() */
			else
				conn_event(a, (struct tandem_agent_conn *)s, ev[i].events);
		}
	}
	tandem_agent_release_all(a, "shutdown");
	/* flush what the released tasks are owed, briefly */
	for (int i = 0; i < 20 && a->conns; i++) {
		struct tandem_agent_conn *c, *next;

		for (c = a->conns; c; c = next) {
			next = c->next;
			if (!c->out_len)
				tandem_agent_conn_close(a, c);
			else
				conn_flush(a, c);
		}
		if (a->conns)
			usleep(10000);
	}
	return 0;
}

void tandem_agent_fini(struct tandem_agent *a)
{
	while (a->conns)
		tandem_agent_conn_close(a, a->conns);
	if (a->o.metrics_dir)
		tandem_agent_write_metrics(a);
	tandem_agent_state_free(a);
	if (a->lfd >= 0) {
		close(a->lfd);
		unlink(a->o.socket_path);
	}
	if (a->sigfd >= 0)
		close(a->sigfd);
	if (a->epfd >= 0)
		close(a->epfd);
	tandem_agent_log(a, "stop", "pid=%d", (int)getpid());
	if (a->log && a->log != stderr)
		fclose(a->log);
	a->log = NULL;
}

