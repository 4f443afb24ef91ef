// SPDX-License-Identifier: GPL-2.0
/* The request engine (nl.h) and the connection (module.h, struct tnl). */
#include <errno.h>
#include <limits.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/log.h"
#include "module/nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct tnl {
	struct nl_sock *sk;
	int family;
	char extack[512];	/* of the last request */
};

struct tnl_ctx {
	struct tnl *nl;
	const struct tnl_req *req;
	struct nl_msg *sent;
	int kerr;		/* the kernel's error, -errno */
	int perr;		/* the parser's error, -errno */
	int done;
	char bad[PATH_MAX + 64];	/* the offending attribute, when known */
};

int tnl_open(struct tnl **out, bool quiet)
{
	struct tnl *nl = calloc(1, sizeof(*nl));
	int one = 1, err;

	if (!nl)
		return -ENOMEM;
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		err = -ENOMEM;
		goto free_nl;
	}
	err = genl_connect(nl->sk);
	if (err) {
		if (!quiet)
			ctl_err("cannot open a generic netlink socket: %s", nl_geterror(err));
		err = -EIO;
		goto free_sock;
	}
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	nl_socket_set_msg_buf_size(nl->sk, 65536);
	nl->family = genl_ctrl_resolve(nl->sk, TANDEM_GENL_NAME);
	if (nl->family < 0) {
		if (!quiet)
			ctl_err("tandem.ko is not loaded (no generic netlink family '%s')",
				TANDEM_GENL_NAME);
		err = -ENOENT;
		goto free_sock;
	}
	*out = nl;
	return 0;

free_sock:
	nl_socket_free(nl->sk);
free_nl:
	free(nl);
	return err;
}

void tnl_close(struct tnl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}

int tnl_put_id(struct nl_msg *msg, const void *in)
{
	return nla_put_u32(msg, TANDEM_A_DATASET_ID, *(const uint32_t *)in) ? -EMSGSIZE : 0;
}

int tnl_put_name(struct nl_msg *msg, const void *in)
{
	return nla_put_string(msg, TANDEM_A_DATASET_NAME, in) ? -EMSGSIZE : 0;
}

/* Name the request attribute at byte offset offs, with its value. */
static void describe_bad_attr(struct tnl_ctx *ctx, uint32_t offs)
{
	struct nlmsghdr *hdr = nlmsg_hdr(ctx->sent);
	struct nlattr *a;

	if (offs < NLMSG_HDRLEN + GENL_HDRLEN || offs + sizeof(*a) > hdr->nlmsg_len)
		return;
	a = (struct nlattr *)((char *)hdr + offs);
	if (offs + a->nla_len > hdr->nlmsg_len || a->nla_len <= NLA_HDRLEN)
		return;
	switch (nla_type(a)) {
	case TANDEM_A_FILE_PATH:
	case TANDEM_A_DATASET_NAME:
		snprintf(ctx->bad, sizeof(ctx->bad), ": '%.*s'",
			 (int)strnlen(nla_data(a), nla_len(a)), (char *)nla_data(a));
		break;
	case TANDEM_A_DATASET_ID:
		snprintf(ctx->bad, sizeof(ctx->bad), ": dataset id %u", nla_get_u32(a));
		break;
	case TANDEM_A_CXL_NODE:
		snprintf(ctx->bad, sizeof(ctx->bad), ": cxl_node %d", (int)nla_get_u32(a));
		break;
	}
}

/* Extended-ack TLVs that follow an error (or a dump's DONE) payload. */
static void parse_ext_ack(struct tnl_ctx *ctx, struct nlattr *attrs, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1] = { 0 };

	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, len, NULL))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(ctx->nl->extack, sizeof(ctx->nl->extack), "%.*s",
			 (int)strnlen(nla_data(tb[NLMSGERR_ATTR_MSG]),
				      nla_len(tb[NLMSGERR_ATTR_MSG])),
			 (char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	if (tb[NLMSGERR_ATTR_OFFS])
		describe_bad_attr(ctx, nla_get_u32(tb[NLMSGERR_ATTR_OFFS]));
	if (tb[NLMSGERR_ATTR_MISS_TYPE] && !ctx->nl->extack[0])
		snprintf(ctx->nl->extack, sizeof(ctx->nl->extack), "missing attribute %u",
			 nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]));
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *hdr = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct tnl_ctx *ctx = arg;
	int off = sizeof(*e);

	(void)nla;
	if (!(hdr->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (hdr->nlmsg_flags & NLM_F_ACK_TLVS)
		parse_ext_ack(ctx, (struct nlattr *)((char *)e + off),
			      (int)hdr->nlmsg_len - NLMSG_HDRLEN - off);
	ctx->kerr = e->error;
	ctx->done = 1;
	return NL_STOP;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *hdr = nlmsg_hdr(msg);
	struct tnl_ctx *ctx = arg;
	int *code = nlmsg_data(hdr);

	/* a dump that failed part-way reports its error in DONE */
	if (hdr->nlmsg_len >= NLMSG_HDRLEN + sizeof(int) && *code < 0) {
		ctx->kerr = *code;
		if (hdr->nlmsg_flags & NLM_F_ACK_TLVS)
			parse_ext_ack(ctx, (struct nlattr *)(code + 1),
				      (int)hdr->nlmsg_len - NLMSG_HDRLEN - (int)sizeof(int));
	}
	ctx->done = 1;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct tnl_ctx *ctx = arg;

	(void)msg;
	ctx->done = 1;
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[TANDEM_A_MAX + 1];
	struct tnl_ctx *ctx = arg;
	int err;

	if (!ctx->req->parse || ctx->perr)
		return NL_OK;
	err = genlmsg_parse(nlmsg_hdr(msg), 0, tb, TANDEM_A_MAX, NULL);
	if (err) {
		ctx->perr = -EBADMSG;
		return NL_SKIP;
	}
	err = ctx->req->parse(tb, ctx->req->out);
	if (err)
		ctx->perr = err;
	return NL_OK;
}

static void report(const struct tnl_ctx *ctx)
{
	if (ctx->nl->extack[0])
		ctl_err_raw("kernel reports: %s%s", ctx->nl->extack, ctx->bad);
	else
		ctl_err_raw("kernel reports: %s%s", strerror(-ctx->kerr), ctx->bad);
}

static int send_and_receive(struct tnl_ctx *ctx)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int err;

	if (!cb)
		return -ENOMEM;
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, ctx);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, ctx);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, ctx);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, ctx);
	err = nl_send_auto(ctx->nl->sk, ctx->sent);
	if (err < 0) {
		ctl_err("netlink send: %s", nl_geterror(err));
		err = -EIO;
		goto out;
	}
	err = 0;
	while (!ctx->done) {
		int r = nl_recvmsgs(ctx->nl->sk, cb);

		if (r < 0 && !ctx->done) {
			ctl_err("netlink receive: %s", nl_geterror(r));
			err = -EIO;
			break;
		}
	}
out:
	nl_cb_put(cb);
	return err;
}

int tnl_request(struct tnl *nl, const struct tnl_req *req)
{
	struct tnl_ctx ctx = { .nl = nl, .req = req };
	int err;

	nl->extack[0] = 0;
	ctx.sent = req->size ? nlmsg_alloc_size(req->size) : nlmsg_alloc();
	if (!ctx.sent)
		return -ENOMEM;
	if (!genlmsg_put(ctx.sent, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 req->dump ? NLM_F_DUMP : NLM_F_ACK, req->cmd, TANDEM_GENL_VERSION)) {
		err = -ENOMEM;
		goto out;
	}
	err = req->build ? req->build(ctx.sent, req->in) : 0;
	if (err) {
		ctl_err("request too large or malformed: %s", strerror(-err));
		goto out;
	}
	err = send_and_receive(&ctx);
	if (!err && ctx.kerr) {
		err = ctx.kerr;
		report(&ctx);
	} else if (!err && ctx.perr) {
		/* the parser's errors are the caller's to print */
		err = ctx.perr;
		if (err == -EBADMSG)
			ctl_err("malformed reply from the kernel");
	}
out:
	nlmsg_free(ctx.sent);
	return err;
}
