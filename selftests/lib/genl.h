/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal generic-netlink client for the selftests: raw sockets, no libnl,
 * so tests can send exactly the (malformed) messages they mean to, and link
 * statically for the VM. Header-only.
 */
#ifndef TANDEM_SELFTEST_GENL_H
#define TANDEM_SELFTEST_GENL_H

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define GENL_T_BUF 65536
#define GENL_T_MAXATTR 63

struct genl_t {
	int fd;
	uint16_t family;
	uint32_t seq;
};

struct genl_t_msg {
	union {
		struct nlmsghdr nlh;
		char buf[GENL_T_BUF];
	};
};

struct genl_t_result {
	int error;			/* 0 or -errno from the kernel */
	char extack[256];		/* NLMSGERR_ATTR_MSG */
	int32_t bad_offs;		/* NLMSGERR_ATTR_OFFS or -1 */
	int32_t miss_type;		/* NLMSGERR_ATTR_MISS_TYPE or -1 */
	int replies;			/* reply messages seen */
};

/* per reply: attributes indexed by type (up to GENL_T_MAXATTR) */
typedef void (*genl_t_cb)(struct nlattr **tb, void *arg);

static inline struct nlattr *genl_t_attr_next(struct nlattr *a, int *rem)
{
	int len = NLA_ALIGN(a->nla_len);

	*rem -= len;
	return (struct nlattr *)((char *)a + len);
}

#define genl_t_for_each_attr(a, head, len, rem)				\
	for (a = (struct nlattr *)(head), rem = (len);			\
	     rem >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) &&	\
	     a->nla_len <= rem;						\
	     a = genl_t_attr_next(a, &rem))

static inline void genl_t_parse(struct nlattr **tb, void *head, int len)
{
	struct nlattr *a;
	int rem;

	memset(tb, 0, sizeof(*tb) * (GENL_T_MAXATTR + 1));
	genl_t_for_each_attr(a, head, len, rem)
		if ((a->nla_type & NLA_TYPE_MASK) <= GENL_T_MAXATTR)
			tb[a->nla_type & NLA_TYPE_MASK] = a;
}

static inline void *genl_t_data(struct nlattr *a) { return (char *)a + NLA_HDRLEN; }
static inline uint32_t genl_t_u32(struct nlattr *a) { uint32_t v; memcpy(&v, genl_t_data(a), 4); return v; }
static inline uint64_t genl_t_u64(struct nlattr *a) { uint64_t v; memcpy(&v, genl_t_data(a), 8); return v; }

static inline void genl_t_init(struct genl_t_msg *m, uint16_t family, uint8_t cmd, uint16_t flags)
{
	struct genlmsghdr *g;

	memset(m->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	m->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->nlh.nlmsg_type = family;
	m->nlh.nlmsg_flags = NLM_F_REQUEST | flags;
	g = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	g->cmd = cmd;
	g->version = 1;
}

/* returns the attribute's offset in the message */
static inline uint32_t genl_t_put(struct genl_t_msg *m, uint16_t type, const void *data, size_t len)
{
	uint32_t off = m->nlh.nlmsg_len;
	struct nlattr *a = (struct nlattr *)(m->buf + off);

	if (off + NLA_ALIGN(NLA_HDRLEN + len) > GENL_T_BUF)
		return 0;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy(genl_t_data(a), data, len);
	memset((char *)genl_t_data(a) + len, 0, NLA_ALIGN(a->nla_len) - a->nla_len);
	m->nlh.nlmsg_len += NLA_ALIGN(a->nla_len);
	return off;
}

static inline uint32_t genl_t_put_u32(struct genl_t_msg *m, uint16_t type, uint32_t v)
{
	return genl_t_put(m, type, &v, sizeof(v));
}

static inline uint32_t genl_t_put_u8(struct genl_t_msg *m, uint16_t type, uint8_t v)
{
	return genl_t_put(m, type, &v, sizeof(v));
}

static inline uint32_t genl_t_put_str(struct genl_t_msg *m, uint16_t type, const char *s)
{
	return genl_t_put(m, type, s, strlen(s) + 1);
}

static inline void genl_t_ext_ack(struct genl_t_result *r, void *head, int len)
{
	struct nlattr *tb[GENL_T_MAXATTR + 1];

	if (len <= 0)
		return;
	genl_t_parse(tb, head, len);
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(r->extack, sizeof(r->extack), "%s", (char *)genl_t_data(tb[NLMSGERR_ATTR_MSG]));
	if (tb[NLMSGERR_ATTR_OFFS])
		r->bad_offs = (int32_t)genl_t_u32(tb[NLMSGERR_ATTR_OFFS]);
	if (tb[NLMSGERR_ATTR_MISS_TYPE])
		r->miss_type = (int32_t)genl_t_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
}

/* 1 when h ends the exchange (error/ack/done) */
static inline int genl_t_handle(struct nlmsghdr *h, struct genl_t_result *r, genl_t_cb cb, void *arg)
{
	struct nlattr *tb[GENL_T_MAXATTR + 1];

	if (h->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(h);
		int off = sizeof(*e);

		if (!(h->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - NLMSG_HDRLEN;
		r->error = e->error;
		if (h->nlmsg_flags & NLM_F_ACK_TLVS)
			genl_t_ext_ack(r, (char *)e + off, (int)h->nlmsg_len - NLMSG_HDRLEN - off);
		return 1;
	}
	if (h->nlmsg_type == NLMSG_DONE) {
		int *code = NLMSG_DATA(h);

		if (h->nlmsg_len >= NLMSG_HDRLEN + sizeof(int))
			r->error = *code < 0 ? *code : 0;
		if (h->nlmsg_flags & NLM_F_ACK_TLVS)
			genl_t_ext_ack(r, code + 1, (int)h->nlmsg_len - NLMSG_HDRLEN - (int)sizeof(int));
		return 1;
	}
	r->replies++;
	if (cb) {
		genl_t_parse(tb, (char *)NLMSG_DATA(h) + GENL_HDRLEN,
			     (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN);
		cb(tb, arg);
	}
	return 0;
}

/* Send m, read until ack/error/done. Returns r->error (0 or -errno). */
static inline int genl_t_xfer(struct genl_t *s, struct genl_t_msg *m, struct genl_t_result *r,
			      genl_t_cb cb, void *arg)
{
	static char rbuf[1 << 17];
	int done = 0;
	ssize_t n;

	memset(r, 0, sizeof(*r));
	r->bad_offs = r->miss_type = -1;
	m->nlh.nlmsg_seq = ++s->seq;
	if (!(m->nlh.nlmsg_flags & NLM_F_DUMP))
		m->nlh.nlmsg_flags |= NLM_F_ACK;
	if (send(s->fd, m->buf, m->nlh.nlmsg_len, 0) < 0)
		return r->error = -errno;
	while (!done) {
		struct nlmsghdr *h;

		n = recv(s->fd, rbuf, sizeof(rbuf), 0);
		if (n < 0)
			return r->error = -errno;
		for (h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n))
			if (h->nlmsg_seq == s->seq && genl_t_handle(h, r, cb, arg))
				done = 1;
	}
	return r->error;
}

static inline void genl_t_family_cb(struct nlattr **tb, void *arg)
{
	if (tb[CTRL_ATTR_FAMILY_ID])
		*(uint16_t *)arg = *(uint16_t *)genl_t_data(tb[CTRL_ATTR_FAMILY_ID]);
}

/* 0, or -ENOENT when the family is not registered */
static inline int genl_t_open(struct genl_t *s, const char *family)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	static struct genl_t_msg m;
	struct genl_t_result r;
	int one = 1;

	memset(s, 0, sizeof(*s));
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	setsockopt(s->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(s->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	genl_t_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	genl_t_put_str(&m, CTRL_ATTR_FAMILY_NAME, family);
	if (genl_t_xfer(s, &m, &r, genl_t_family_cb, &s->family) || !s->family) {
		close(s->fd);
		s->fd = -1;
		return r.error ? r.error : -ENOENT;
	}
	return 0;
}

static inline void genl_t_close(struct genl_t *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

#endif
