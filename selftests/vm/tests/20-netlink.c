// SPDX-License-Identifier: GPL-2.0
/*
 * The "tandem" generic netlink family, spoken raw: strict policies, extack
 * messages, CAP_SYS_ADMIN on state changes, registry limits, batch atomicity.
 * Runs in the VM rig as root with tandem.ko available at $TANDEM_KO.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <linux/tandem.h>

#include "kselftest_harness.h"
#include "genl.h"

#define DIR_ "/mnt/data/nltest"

static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static const char *ko(void)
{
	const char *p = getenv("TANDEM_KO");

	return p ? p : "/lib/tandem/tandem.ko";
}

static void make_file(const char *path, size_t bytes)
{
	char buf[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	memset(buf, 'x', sizeof(buf));
	for (size_t done = 0; fd >= 0 && done < bytes; done += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
	if (fd >= 0)
		close(fd);
}

/*
 * Root without CAP_SYS_ADMIN, also for programs it runs: out of the bounding
 * set (or exec as root would grant it again) and out of the current sets.
 */
static int drop_sys_admin(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	int w = CAP_TO_INDEX(CAP_SYS_ADMIN);
	uint32_t bit = CAP_TO_MASK(CAP_SYS_ADMIN);

	if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0))
		return -errno;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[w].effective &= ~bit;
	data[w].permitted &= ~bit;
	data[w].inheritable &= ~bit;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

struct nlctx {
	struct genl_t s;
	struct genl_t_msg m;
	struct genl_t_result r;
};

FIXTURE(nl) {
	struct nlctx c;
};

FIXTURE_VARIANT(nl) {
	const char *params;
};

FIXTURE_VARIANT_ADD(nl, defaults) { .params = "" };

FIXTURE_SETUP(nl)
{
	if (geteuid())
		SKIP(return, "needs root");
	sh("rmmod tandem 2>/dev/null");
	ASSERT_EQ(0, sh("insmod %s %s", ko(), variant->params));
	ASSERT_EQ(0, genl_t_open(&self->c.s, TANDEM_GENL_NAME));
	mkdir(DIR_, 0755);
	make_file(DIR_ "/a", 8192);
	make_file(DIR_ "/b", 4096);
	mkdir(DIR_ "/dir", 0755);
}

FIXTURE_TEARDOWN(nl)
{
	genl_t_close(&self->c.s);
	sh("rmmod tandem");
}

static void id_cb(struct nlattr **tb, void *arg)
{
	if (tb[TANDEM_A_DATASET_ID])
		*(uint32_t *)arg = genl_t_u32(tb[TANDEM_A_DATASET_ID]);
}

/* DATASET_ADD name -> id (0 on error); returns the kernel's error */
static int ds_add(struct nlctx *self, const char *name, uint32_t *id)
{
	genl_t_init(&self->m, self->s.family, TANDEM_CMD_DATASET_ADD, 0);
	genl_t_put_str(&self->m, TANDEM_A_DATASET_NAME, name);
	*id = 0;
	return genl_t_xfer(&self->s, &self->m, &self->r, id_cb, id);
}

struct add_reply {
	uint32_t added, dups, nfiles;
};

static void add_cb(struct nlattr **tb, void *arg)
{
	struct add_reply *a = arg;

	if (tb[TANDEM_A_FILES_ADDED])
		a->added = genl_t_u32(tb[TANDEM_A_FILES_ADDED]);
	if (tb[TANDEM_A_FILES_DUPLICATE])
		a->dups = genl_t_u32(tb[TANDEM_A_FILES_DUPLICATE]);
	if (tb[TANDEM_A_DATASET_NFILES])
		a->nfiles = genl_t_u32(tb[TANDEM_A_DATASET_NFILES]);
}

/* FILE_ADD of n paths; the reply's counts in *a */
static int files_add(struct nlctx *self, uint32_t id, const char **paths, int n,
		     struct add_reply *a)
{
	genl_t_init(&self->m, self->s.family, TANDEM_CMD_FILE_ADD, 0);
	genl_t_put_u32(&self->m, TANDEM_A_DATASET_ID, id);
	for (int i = 0; i < n; i++)
		genl_t_put_str(&self->m, TANDEM_A_FILE_PATH, paths[i]);
	memset(a, 0, sizeof(*a));
	return genl_t_xfer(&self->s, &self->m, &self->r, add_cb, a);
}

static void count_cb(struct nlattr **tb, void *arg)
{
	(void)tb;
	(*(int *)arg)++;
}

TEST_F(nl, dataset_add_get_del)
{
	uint32_t id;
	int n = 0;

	ASSERT_EQ(0, ds_add(&self->c, "imagenet-1k_v2.0", &id));
	EXPECT_GT(id, 0);
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_DATASET_GET, NLM_F_DUMP);
	EXPECT_EQ(0, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, count_cb, &n));
	EXPECT_EQ(1, n);
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_DATASET_DEL, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_ID, id);
	EXPECT_EQ(0, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	/* deleting again: gone, with a message naming the attribute */
	EXPECT_EQ(-ENOENT, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_STREQ("no dataset with this id", self->c.r.extack);
	EXPECT_EQ(NLMSG_HDRLEN + GENL_HDRLEN, self->c.r.bad_offs);
}

TEST_F(nl, missing_name_reports_missing_attribute)
{
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_DATASET_ADD, 0);
	EXPECT_EQ(-EINVAL, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_EQ(TANDEM_A_DATASET_NAME, self->c.r.miss_type);
}

TEST_F(nl, bad_names_rejected)
{
	char longname[TANDEM_NAME_MAX + 1];
	uint32_t id;

	EXPECT_EQ(-EINVAL, ds_add(&self->c, "has space", &id));
	EXPECT_STREQ("dataset name must be 1-63 characters of A-Z a-z 0-9 . _ -", self->c.r.extack);
	EXPECT_EQ(-EINVAL, ds_add(&self->c, "..", &id));
	EXPECT_EQ(-EINVAL, ds_add(&self->c, "", &id));
	memset(longname, 'a', TANDEM_NAME_MAX);
	longname[TANDEM_NAME_MAX] = 0;
	EXPECT_EQ(-EINVAL, ds_add(&self->c, longname, &id));	/* policy: length */
	EXPECT_NE(0, self->c.r.extack[0]);
	longname[TANDEM_NAME_MAX - 1] = 0;			/* 63 characters: fits */
	EXPECT_EQ(0, ds_add(&self->c, longname, &id));
	EXPECT_EQ(-EEXIST, ds_add(&self->c, longname, &id));
	EXPECT_STREQ("a dataset with this name exists", self->c.r.extack);
}

TEST_F(nl, name_without_nul_rejected)
{
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_DATASET_ADD, 0);
	genl_t_put(&self->c.m, TANDEM_A_DATASET_NAME, "abcd", 4);
	EXPECT_EQ(-EINVAL, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
}

TEST_F(nl, policy_bounds)
{
	uint16_t small = 1;
	uint32_t off;

	/* id 0 is below the policy's minimum */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_DATASET_DEL, 0);
	off = genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_ID, 0);
	EXPECT_EQ(-ERANGE, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_EQ((int32_t)off, self->c.r.bad_offs);
	/* a u16 where a u32 belongs */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_DATASET_DEL, 0);
	genl_t_put(&self->c.m, TANDEM_A_DATASET_ID, &small, sizeof(small));
	EXPECT_EQ(-EINVAL, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	/* an attribute type beyond the family's maximum */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_STATS_GET, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_MAX + 5, 1);
	EXPECT_EQ(-EINVAL, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	/* an attribute that this command's policy does not take */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_DATASET_ADD, 0);
	genl_t_put_str(&self->c.m, TANDEM_A_DATASET_NAME, "x");
	genl_t_put_u8(&self->c.m, TANDEM_A_STEER, 1);
	EXPECT_EQ(-EINVAL, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	/* steer is a bool: 2 is out of range */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_CONFIG_SET, 0);
	genl_t_put_u8(&self->c.m, TANDEM_A_STEER, 2);
	EXPECT_EQ(-ERANGE, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_NE(0, self->c.r.extack[0]);
	/* an unknown command */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_MAX + 1, 0);
	EXPECT_NE(0, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
}

TEST_F(nl, config_set_validates_node)
{
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_CONFIG_SET, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_CXL_NODE, 7);
	EXPECT_EQ(-EINVAL, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->c.r.extack, "not an online NUMA node"));
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_CONFIG_SET, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_CXL_NODE, (uint32_t)-3);
	EXPECT_EQ(-ERANGE, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_CONFIG_SET, 0);
	EXPECT_EQ(-EINVAL, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_STREQ("nothing to set", self->c.r.extack);
	/* a valid change is visible in sysfs */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_CONFIG_SET, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_CXL_NODE, (uint32_t)-2);
	genl_t_put_u32(&self->c.m, TANDEM_A_PREFETCH_KBPS, 4096);
	EXPECT_EQ(0, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_EQ(0, sh("grep -qx -- -2 /sys/kernel/tandem/cxl_node"));
	EXPECT_EQ(0, sh("grep -qx 4096 /sys/kernel/tandem/prefetch_kbps"));
}

TEST_F(nl, file_add_errors)
{
	const char *missing[] = { DIR_ "/a", DIR_ "/does-not-exist" };
	const char *relative[] = { "nltest/a" };
	const char *dir[] = { DIR_ "/dir" };
	const char *ok[] = { DIR_ "/a" };
	struct add_reply a;
	uint32_t id;

	ASSERT_EQ(0, ds_add(&self->c, "errs", &id));
	EXPECT_EQ(-ENOENT, files_add(&self->c, id, missing, 2, &a));
	EXPECT_STREQ("no such file", self->c.r.extack);
	EXPECT_GT(self->c.r.bad_offs, 0);
	EXPECT_EQ(-EINVAL, files_add(&self->c, id, relative, 1, &a));
	EXPECT_STREQ("path must be absolute and name a regular file", self->c.r.extack);
	EXPECT_EQ(-EINVAL, files_add(&self->c, id, dir, 1, &a));
	EXPECT_EQ(-EINVAL, files_add(&self->c, id, NULL, 0, &a));
	EXPECT_STREQ("no file path given", self->c.r.extack);
	EXPECT_EQ(-ENOENT, files_add(&self->c, id + 100, ok, 1, &a));
	EXPECT_STREQ("no dataset with this id", self->c.r.extack);
	/* the failed batch with a good path in it left nothing behind */
	EXPECT_EQ(0, sh("grep -qx 0 /sys/kernel/tandem/datasets/%u/files", id));
}

TEST_F(nl, duplicates_counted_once)
{
	const char *paths[] = { DIR_ "/a", DIR_ "/b", DIR_ "/a", DIR_ "/alink" };
	struct add_reply a;
	uint32_t id;

	unlink(DIR_ "/alink");
	ASSERT_EQ(0, symlink(DIR_ "/a", DIR_ "/alink"));
	ASSERT_EQ(0, ds_add(&self->c, "dups", &id));
	EXPECT_EQ(0, files_add(&self->c, id, paths, 4, &a));
	EXPECT_EQ(2, a.added);
	EXPECT_EQ(2, a.dups);
	EXPECT_EQ(2, a.nfiles);
	EXPECT_EQ(0, files_add(&self->c, id, paths, 1, &a));
	EXPECT_EQ(0, a.added);
	EXPECT_EQ(1, a.dups);
}

TEST_F(nl, unprivileged_state_changes_refused)
{
	const char *ok[] = { DIR_ "/a" };
	struct add_reply a;
	uint32_t id, other;
	int n = 0;

	ASSERT_EQ(0, ds_add(&self->c, "mine", &id));
	ASSERT_EQ(0, drop_sys_admin());
	EXPECT_EQ(-EPERM, ds_add(&self->c, "other", &other));
	EXPECT_STREQ("CAP_SYS_ADMIN is required", self->c.r.extack);
	EXPECT_EQ(-EPERM, files_add(&self->c, id, ok, 1, &a));
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_DATASET_DEL, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_ID, id);
	EXPECT_EQ(-EPERM, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_CONFIG_SET, 0);
	genl_t_put_u8(&self->c.m, TANDEM_A_STEER, 0);
	EXPECT_EQ(-EPERM, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	for (int cmd = TANDEM_CMD_STEER; cmd <= TANDEM_CMD_PREFETCH_CANCEL; cmd++) {
		genl_t_init(&self->c.m, self->c.s.family, cmd, 0);
		genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_ID, id);
		EXPECT_EQ(-EPERM, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	}
	/* reading stays open to everyone */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_DATASET_GET, NLM_F_DUMP);
	EXPECT_EQ(0, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, count_cb, &n));
	EXPECT_EQ(1, n);
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_STATS_GET, 0);
	EXPECT_EQ(0, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	/* and sysfs knobs refuse writes without CAP_SYS_ADMIN, even for root */
	EXPECT_NE(0, sh("echo 0 > /sys/kernel/tandem/steer 2>/dev/null"));
	EXPECT_EQ(0, sh("grep -qx 1 /sys/kernel/tandem/steer"));
}

TEST_F(nl, steer_and_prefetch_requests_validated)
{
	const char *ok[] = { DIR_ "/a" };
	struct add_reply a;
	uint32_t id;

	ASSERT_EQ(0, ds_add(&self->c, "pf", &id));
	ASSERT_EQ(0, files_add(&self->c, id, ok, 1, &a));
	/* a node id below -1 is outside the policy */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_STEER, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_ID, id);
	genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_NODE, (uint32_t)-2);
	EXPECT_EQ(-ERANGE, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	/* an offline node */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_STEER, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_ID, id);
	genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_NODE, 9);
	EXPECT_EQ(-EINVAL, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_STREQ("not an online NUMA node with memory", self->c.r.extack);
	/* prefetch of a file that is not in the dataset */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_PREFETCH, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_ID, id);
	genl_t_put_str(&self->c.m, TANDEM_A_FILE_PATH, DIR_ "/b");
	EXPECT_EQ(-ENOENT, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_STREQ("file is not in this dataset", self->c.r.extack);
	/* nothing to cancel */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_PREFETCH_CANCEL, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_ID, id);
	EXPECT_EQ(-ENOENT, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
	EXPECT_STREQ("no prefetch of this dataset is running", self->c.r.extack);
	/* a steering pass of a known dataset is accepted */
	genl_t_init(&self->c.m, self->c.s.family, TANDEM_CMD_STEER, 0);
	genl_t_put_u32(&self->c.m, TANDEM_A_DATASET_ID, id);
	EXPECT_EQ(0, genl_t_xfer(&self->c.s, &self->c.m, &self->c.r, NULL, NULL));
}

FIXTURE(limits) {
	struct nlctx c;
};

FIXTURE_SETUP(limits)
{
	if (geteuid())
		SKIP(return, "needs root");
	sh("rmmod tandem 2>/dev/null");
	ASSERT_EQ(0, sh("insmod %s max_datasets=2 max_files=3", ko()));
	ASSERT_EQ(0, genl_t_open(&self->c.s, TANDEM_GENL_NAME));
	mkdir(DIR_, 0755);
	for (int i = 0; i < 5; i++) {
		char p[64];

		snprintf(p, sizeof(p), DIR_ "/lim%d", i);
		make_file(p, 4096);
	}
}

FIXTURE_TEARDOWN(limits)
{
	genl_t_close(&self->c.s);
	sh("rmmod tandem");
}

TEST_F(limits, registry_limits_are_clear_errors)
{
	const char *four[] = { DIR_ "/lim0", DIR_ "/lim1", DIR_ "/lim2", DIR_ "/lim3" };
	struct add_reply a;
	uint32_t id, id2;

	ASSERT_EQ(0, ds_add(&self->c, "one", &id));
	ASSERT_EQ(0, ds_add(&self->c, "two", &id2));
	EXPECT_EQ(-ENOSPC, ds_add(&self->c, "three", &id2));
	EXPECT_STREQ("dataset limit reached (module parameter max_datasets)", self->c.r.extack);
	/* four files into a dataset capped at three: none of the batch stays */
	EXPECT_EQ(-ENOSPC, files_add(&self->c, id, four, 4, &a));
	EXPECT_STREQ("dataset file limit reached (module parameter max_files)", self->c.r.extack);
	EXPECT_EQ(0, sh("grep -qx 0 /sys/kernel/tandem/datasets/%u/files", id));
	EXPECT_EQ(0, files_add(&self->c, id, four, 3, &a));
	EXPECT_EQ(3, a.added);
	EXPECT_EQ(0, sh("grep -qx 3 /sys/kernel/tandem/nr_files"));
}

TEST_HARNESS_MAIN
