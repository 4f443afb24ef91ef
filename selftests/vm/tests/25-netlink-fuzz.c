// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the "tandem" generic netlink family: mutated and malformed requests
 * to every command (and to commands that do not exist), interleaved with
 * random sequences of valid ones that build real state (datasets, files,
 * prefetches, steering, knob changes). Wrong attribute types and lengths,
 * strings without a NUL, huge values, bad nesting and nesting flags,
 * attributes of other commands, missing and repeated attributes, lengths
 * that overrun the message, truncated netlink and genetlink headers, bad
 * versions, dump flags on do-only commands.
 *
 * First as root, then as nobody (uid/gid 65534, no capabilities, its own
 * socket opened after dropping privileges): there every well-formed request
 * to an admin command must fail with EPERM and nothing may change. The rig
 * fails the run on any oops, WARNING or BUG in dmesg; here: a request that
 * does not return within 10 s (hung command), a reply that is not an error,
 * ack or answer to the request, and a live-object count that does not
 * return to 0 once every dataset is deleted (leak).
 *
 *   FUZZ_N=N      messages as root (default 90000; nobody sends a third)
 *   FUZZ_SEED=S   PRNG seed (default fixed, printed)
 */
#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/tandem.h>

#include "kselftest_harness.h"
#include "dataset.h"
#include "genl.h"

#define DIR_		"/mnt/data/fuzz"
#define NOBODY		65534
#define HANG_S		10
#define NPATHS		(sizeof(paths) / sizeof(paths[0]))

static const char *const paths[] = {
	DIR_ "/a", DIR_ "/b", DIR_ "/c", DIR_ "/link", DIR_ "/dir", DIR_ "/missing",
	"relative/path", "/", "/dev/null", "/proc/self/status", DIR_ "/loop", "",
	DIR_ "/../fuzz/a", "/sys/kernel/tandem/version",
};

/* what the run saw, shared with the parent (which survives a hang) */
struct fuzz_stats {
	long sent, replies, errors[140], eperm_bad, bad_reply, malformed_hdr;
	long by_cmd[TANDEM_CMD_MAX + 3];
	char last[160];		/* the request in flight, for a hang report */
};

static struct fuzz_stats *st;
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static const char *ko(void)
{
	return getenv("TANDEM_KO") ?: "/lib/tandem/tandem.ko";
}

/* ---- building requests ---- */

struct req {
	char buf[GENL_T_BUF];
	uint32_t len;
};

static void put_raw(struct req *q, uint16_t type, uint16_t alen, const void *data, size_t n)
{
	struct nlattr *a = (struct nlattr *)(q->buf + q->len);

	if (q->len + NLA_HDRLEN + NLA_ALIGN(n) + 64 > sizeof(q->buf))
		return;
	a->nla_type = type;
	a->nla_len = alen;
	memcpy(q->buf + q->len + NLA_HDRLEN, data, n);
	memset(q->buf + q->len + NLA_HDRLEN + n, 0, NLA_ALIGN(n) - n);
	q->len += NLA_HDRLEN + NLA_ALIGN(n);
}

static void put(struct req *q, uint16_t type, const void *data, size_t n)
{
	put_raw(q, type, NLA_HDRLEN + n, data, n);
}

static uint32_t interesting_u32(uint32_t valid)
{
	static const uint32_t v[] = {
		0, 1, 2, 3, 7, 63, 64, 65, 1023, 1024, 4096, 0x7fffffff, 0x80000000,
		0xfffffffe, 0xffffffff, (uint32_t)-2, (uint32_t)-3, 104857600, 104857601,
	};

	return rnd_below(3) ? valid : v[rnd_below(sizeof(v) / sizeof(v[0]))];
}

/* a value for attribute type t: well-typed, or not */
static void put_value(struct req *q, uint16_t t, uint32_t id)
{
	char s[5000];
	uint64_t big = rnd();
	uint32_t u;
	uint16_t flag = 0;
	size_t n;

	if (!rnd_below(16))
		flag = rnd_below(2) ? NLA_F_NESTED : NLA_F_NET_BYTEORDER;
	switch (rnd_below(9)) {
	case 0:	/* a string: a path, a name or junk, short or long, maybe no NUL */
		if (rnd_below(3)) {
			n = snprintf(s, sizeof(s), "%s", paths[rnd_below(NPATHS)]);
		} else {
			n = rnd_below(2) ? rnd_below(80) : rnd_below(sizeof(s) - 1);
			for (size_t i = 0; i < n; i++)
				s[i] = "ab._-/Z9 \x01\xff"[rnd_below(12)];
			s[n] = 0;
		}
		put(q, t | flag, s, rnd_below(5) ? n + 1 : n);
		return;
	case 1: case 2: case 3:	/* a u32 near the valid ones */
		u = interesting_u32(rnd_below(2) ? id : rnd_below(4));
		put(q, t | flag, &u, 4);
		return;
	case 4:	/* u8, u16, u64, or any length */
		n = (size_t[]){ 0, 1, 2, 3, 5, 8, 12, 16 }[rnd_below(8)];
		put(q, t | flag, &big, n > 8 ? 8 : n);
		return;
	case 5: {	/* a nest of random attributes, maybe nested again */
		struct req inner = { .len = 0 };

		for (int i = rnd_below(4); i-- > 0;) {
			u = interesting_u32(id);
			put(&inner, rnd_below(40), &u, 1 + rnd_below(8));
		}
		put(q, t | (rnd_below(2) ? NLA_F_NESTED : 0), inner.buf, inner.len);
		return;
	}
	case 6:	/* a length that lies: beyond the message, or below the header */
		u = id;
		put_raw(q, t, rnd_below(2) ? 0xfff0 : rnd_below(NLA_HDRLEN), &u, 4);
		return;
	default: {	/* s32 node values */
		int32_t v = (int32_t[]){ -1, -2, -3, 0, 1, 2, 1023, 1024, INT32_MIN }[rnd_below(9)];

		put(q, t | flag, &v, 4);
		return;
	}
	}
}

static void req_init(struct req *q, uint16_t family, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *h = (struct nlmsghdr *)q->buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(q->buf + NLMSG_HDRLEN);

	memset(q->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	q->len = NLMSG_HDRLEN + GENL_HDRLEN;
	h->nlmsg_type = family;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	g->cmd = cmd;
	g->version = rnd_below(16) ? 1 : rnd_below(256);
}

/*
 * A mutated request for cmd. *hdr_ok: the kernel will answer it (an error,
 * an ack or a dump); *perm: it reaches the family's permission check, so an
 * admin command must fail with EPERM for nobody (not a dump of a do-only
 * command, not a bad genetlink header).
 */
static void mutate(struct req *q, uint16_t family, uint8_t cmd, uint32_t id, bool *hdr_ok,
		   bool *perm)
{
	struct nlmsghdr *h = (struct nlmsghdr *)q->buf;
	int nattr = rnd_below(7);

	req_init(q, family, cmd, rnd_below(5) ? 0 : NLM_F_DUMP);
	while (nattr-- > 0)
		put_value(q, rnd_below(8) ? 1 + rnd_below(TANDEM_A_MAX + 3) : 0, id);
	h->nlmsg_len = q->len;
	*hdr_ok = true;
	*perm = !(h->nlmsg_flags & NLM_F_DUMP);
	switch (rnd_below(24)) {
	case 0:	/* genetlink header cut short: the family answers EINVAL */
		h->nlmsg_len = q->len = NLMSG_HDRLEN + rnd_below(GENL_HDRLEN);
		*perm = false;
		break;
	case 1:	/* netlink header cut or overrunning: the core drops it silently */
		if (rnd_below(2))
			q->len = rnd_below(NLMSG_HDRLEN);
		else
			h->nlmsg_len = q->len + 4 + rnd_below(64);
		*hdr_ok = *perm = false;
		break;
	case 2:	/* the message ends inside an attribute */
		if (q->len > NLMSG_HDRLEN + GENL_HDRLEN + 2)
			h->nlmsg_len = q->len = q->len - 1 - rnd_below(3);
		break;
	case 3:	/* not a request: the core acks it and does nothing */
		h->nlmsg_flags &= ~NLM_F_REQUEST;
		*perm = false;
		break;
	case 4:	/* genetlink's reserved bytes set */
		((struct genlmsghdr *)(q->buf + NLMSG_HDRLEN))->reserved = 1 + rnd_below(0xfffe);
		*perm = false;
		break;
	}
}

/* ---- valid requests, for random sequences that build state ---- */

static void valid(struct req *q, uint16_t family, uint32_t id, uint8_t *cmd)
{
	struct nlmsghdr *h = (struct nlmsghdr *)q->buf;
	char name[32];
	uint32_t u;
	int32_t s;

	*cmd = 1 + rnd_below(TANDEM_CMD_MAX - 1);	/* not the event */
	req_init(q, family, *cmd, 0);
	((struct genlmsghdr *)(q->buf + NLMSG_HDRLEN))->version = 1;
	switch (*cmd) {
	case TANDEM_CMD_DATASET_ADD:
		snprintf(name, sizeof(name), "fz%u", rnd_below(80));
		put(q, TANDEM_A_DATASET_NAME, name, strlen(name) + 1);
		break;
	case TANDEM_CMD_FILE_ADD:
	case TANDEM_CMD_PREFETCH:
		put(q, TANDEM_A_DATASET_ID, &id, 4);
		for (int i = rnd_below(4); i-- > 0;) {
			const char *p = paths[rnd_below(6)];

			put(q, TANDEM_A_FILE_PATH, p, strlen(p) + 1);
		}
		break;
	case TANDEM_CMD_DATASET_GET:
	case TANDEM_CMD_FILE_GET:
		h->nlmsg_flags |= NLM_F_DUMP;
		put(q, TANDEM_A_DATASET_ID, &id, 4);
		break;
	case TANDEM_CMD_STATS_GET:
		break;
	case TANDEM_CMD_CONFIG_SET:
		s = (int32_t)rnd_below(4) - 2;
		if (rnd_below(2))
			put(q, TANDEM_A_CXL_NODE, &s, 4);
		u = rnd_below(2);
		put(q, TANDEM_A_STEER, &u, 1);
		u = rnd_below(3) * 4096;
		put(q, TANDEM_A_PREFETCH_KBPS, &u, 4);
		break;
	case TANDEM_CMD_STEER:
		s = (int32_t)rnd_below(3) - 1;
		put(q, TANDEM_A_DATASET_ID, &id, 4);
		if (rnd_below(2))
			put(q, TANDEM_A_DATASET_NODE, &s, 4);
		break;
	default:	/* DATASET_DEL, PREFETCH_CANCEL */
		put(q, TANDEM_A_DATASET_ID, &id, 4);
	}
	h->nlmsg_len = q->len;
}

/* ---- talking ---- */

static void on_alarm(int sig)
{
	(void)sig;
	_exit(100);	/* hung command: st->last says which */
}

static int open_sock(uint16_t *family)
{
	struct genl_t s;

	if (genl_t_open(&s, TANDEM_GENL_NAME))
		return -1;
	*family = s.family;
	return s.fd;
}

static uint32_t seen_id;

/* read until the answer to seq; its error (0: ack/done), 1: answered otherwise */
static int await(int fd, uint32_t seq, uint8_t cmd)
{
	static char rbuf[1 << 16];
	int n;

	for (;;) {
		n = recv(fd, rbuf, sizeof(rbuf), 0);
		if (n < 0)
			return errno == EINTR ? 0 : -errno;
		for (struct nlmsghdr *h = (void *)rbuf; NLMSG_OK(h, (unsigned int)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq) {
				st->bad_reply++;
				continue;
			}
			st->replies++;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (cmd == TANDEM_CMD_DATASET_ADD || cmd == TANDEM_CMD_DATASET_GET) {
				struct nlattr *tb[GENL_T_MAXATTR + 1];

				genl_t_parse(tb, (char *)NLMSG_DATA(h) + GENL_HDRLEN,
					     h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN);
				if (tb[TANDEM_A_DATASET_ID])
					seen_id = genl_t_u32(tb[TANDEM_A_DATASET_ID]);
			}
		}
	}
}

/* send q (cmd), wait for its answer when the kernel gives one; its error */
static int xfer(int fd, struct req *q, uint8_t cmd, bool answered)
{
	static uint32_t seq;
	struct nlmsghdr *h = (struct nlmsghdr *)q->buf;
	int err;

	if (q->len >= sizeof(*h))
		h->nlmsg_seq = ++seq;
	snprintf(st->last, sizeof(st->last), "cmd %u flags 0x%x len %u/%u", cmd,
		 q->len >= sizeof(*h) ? h->nlmsg_flags : 0, q->len >= 4 ? h->nlmsg_len : 0, q->len);
	alarm(HANG_S);
	st->sent++;
	st->by_cmd[cmd < TANDEM_CMD_MAX + 3 ? cmd : TANDEM_CMD_MAX + 2]++;
	if (send(fd, q->buf, q->len, 0) < 0) {
		alarm(0);
		return -errno;
	}
	err = answered ? await(fd, seq, cmd) : 0;
	alarm(0);
	if (err < 0 && -err < 140)
		st->errors[-err]++;
	return err;
}

static bool is_admin(uint8_t cmd)
{
	switch (cmd) {
	case TANDEM_CMD_DATASET_ADD: case TANDEM_CMD_DATASET_DEL: case TANDEM_CMD_FILE_ADD:
	case TANDEM_CMD_CONFIG_SET: case TANDEM_CMD_STEER: case TANDEM_CMD_PREFETCH:
	case TANDEM_CMD_PREFETCH_CANCEL:
		return true;
	}
	return false;
}

/* n messages to every command, as the current user; admin: EPERM expected */
static void fuzz(long n, bool nobody)
{
	static struct req q;
	uint16_t family;
	struct timeval tv = { .tv_sec = HANG_S };
	int fd = open_sock(&family);
	uint32_t id = 1;
	bool ok;

	if (fd < 0)
		_exit(2);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (long i = 0; i < n; i++) {
		uint8_t cmd = rnd_below(TANDEM_CMD_MAX + 3);
		bool perm = false;
		int err;

		if (!nobody && rnd_below(4) == 0) {
			valid(&q, family, id, &cmd);
			ok = true;
		} else {
			mutate(&q, family, cmd, id, &ok, &perm);
		}
		err = xfer(fd, &q, cmd, ok);
		if (err == -EAGAIN)	/* SO_RCVTIMEO: no answer in time */
			_exit(101);
		if (nobody && perm && is_admin(cmd) && err != -EPERM) {
			st->eperm_bad++;
			fprintf(stderr, "# nobody: %s got %d, not EPERM\n", st->last, err);
		}
		if (seen_id && rnd_below(3) == 0)
			id = seen_id;
	}
	close(fd);
}

static void drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(3);
}

/* run fuzz() in a child; its exit status (100/101: a hung command) */
static int run_child(long n, bool nobody, uint64_t seed)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		signal(SIGALRM, on_alarm);
		rng_state = seed;
		if (nobody)
			drop_to_nobody();
		fuzz(n, nobody);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void files_setup(void)
{
	sh("rm -rf " DIR_ "; mkdir -p " DIR_ "/dir");
	for (int k = 0; k < 3; k++) {
		char p[64];

		snprintf(p, sizeof(p), DIR_ "/%c", 'a' + k);
		ds_write(p, 7, k, 64 << 10);
	}
	sh("ln -s a " DIR_ "/link; ln -s loop " DIR_ "/loop; chmod -R a+rX " DIR_);
}

static void list_cb(struct nlattr **tb, void *arg)
{
	uint32_t *ids = arg;

	if (tb[TANDEM_A_DATASET_ID] && ids[0] < 127)
		ids[++ids[0]] = genl_t_u32(tb[TANDEM_A_DATASET_ID]);
}

/* delete every dataset (as root), from a dump of them */
static void delete_all(void)
{
	static struct genl_t s;
	static struct genl_t_msg m;
	struct genl_t_result r;
	uint32_t ids[128];

	if (genl_t_open(&s, TANDEM_GENL_NAME))
		return;
	do {
		ids[0] = 0;
		genl_t_init(&m, s.family, TANDEM_CMD_DATASET_GET, NLM_F_DUMP);
		genl_t_xfer(&s, &m, &r, list_cb, ids);
		for (uint32_t i = 1; i <= ids[0]; i++) {
			genl_t_init(&m, s.family, TANDEM_CMD_DATASET_DEL, 0);
			genl_t_put_u32(&m, TANDEM_A_DATASET_ID, ids[i]);
			genl_t_xfer(&s, &m, &r, NULL, NULL);
		}
	} while (ids[0]);
	genl_t_close(&s);
}

static long live_after_delete(void)
{
	double t0 = mono_s();
	long live;

	delete_all();
	while ((live = read_long("/sys/kernel/tandem/live_objects")) != 0 && mono_s() - t0 < 10)
		usleep(20000);
	return live;
}

FIXTURE(fz) {
	uint64_t seed;
	long n;
};

FIXTURE_SETUP(fz)
{
	if (geteuid())
		SKIP(return, "needs root");
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, st);
	self->seed = getenv("FUZZ_SEED") ? strtoull(getenv("FUZZ_SEED"), NULL, 0) : 0x7a6d46757a7aULL;
	self->n = getenv("FUZZ_N") ? atol(getenv("FUZZ_N")) : 90000;
	files_setup();
	sh("rmmod tandem 2>/dev/null");
	ASSERT_EQ(0, sh("insmod %s", ko()));
}

FIXTURE_TEARDOWN(fz)
{
	sh("rmmod tandem 2>/dev/null");
	sh("rm -rf " DIR_);
}

static void report(struct __test_metadata *_metadata, const char *who, double secs)
{
	TH_LOG("%s: %ld messages in %.1f s, %ld answers; EINVAL %ld ERANGE %ld ENOENT %ld "
	       "EPERM %ld EEXIST %ld EBUSY %ld ENOSPC %ld EOPNOTSUPP %ld", who, st->sent, secs,
	       st->replies, st->errors[EINVAL], st->errors[ERANGE], st->errors[ENOENT],
	       st->errors[EPERM], st->errors[EEXIST], st->errors[EBUSY], st->errors[ENOSPC],
	       st->errors[EOPNOTSUPP]);
	int missed = -1;

	for (int c = 0; c < TANDEM_CMD_MAX + 3; c++)
		if (!st->by_cmd[c])
			missed = c;
	EXPECT_EQ(-1, missed) TH_LOG("%s: no message to command %d", who, missed);
}

TEST_F_TIMEOUT(fz, root_then_nobody, 300)
{
	double t0 = mono_s();
	long ds0, files0;
	int rc;

	rc = run_child(self->n, false, self->seed);
	report(_metadata, "root", mono_s() - t0);
	ASSERT_EQ(0, rc) TH_LOG("root fuzzer: %s (last request: %s)",
				rc >= 100 && rc <= 101 ? "hung command" : "exited", st->last);
	EXPECT_EQ(0, st->bad_reply);
	EXPECT_GE(st->sent, self->n);

	/* nobody: the same mutations, never a state change */
	ds0 = read_long("/sys/kernel/tandem/nr_datasets");
	files0 = read_long("/sys/kernel/tandem/nr_files");
	memset(st, 0, sizeof(*st));
	t0 = mono_s();
	rc = run_child(self->n / 3, true, self->seed ^ 0x5a5a);
	report(_metadata, "nobody", mono_s() - t0);
	ASSERT_EQ(0, rc) TH_LOG("unprivileged fuzzer: %s (last request: %s)",
				rc >= 100 && rc <= 101 ? "hung command" : "exited", st->last);
	EXPECT_EQ(0, st->eperm_bad);
	EXPECT_GT(st->errors[EPERM], 0);
	EXPECT_EQ(ds0, read_long("/sys/kernel/tandem/nr_datasets"));
	EXPECT_EQ(files0, read_long("/sys/kernel/tandem/nr_files"));

	/* no object left behind once every dataset is gone */
	EXPECT_EQ(0, live_after_delete());
	EXPECT_EQ(0, sh("rmmod tandem"));
}

TEST_HARNESS_MAIN
