// SPDX-License-Identifier: GPL-2.0
/*
 * Profile plumbing: profile save/load round trip, instance descriptions,
 * and the calibration measurements against the kernel's own view
 * (fincore(1) for residency, tandemctl's independent NUMA parser and
 * /proc/meminfo for memory).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "calibrate/calibrate.h"
#include "lib/json.h"
#include "lib/numa.h"
#include "loadgen/loadgen.h"
#include "model/model.h"
#include "lib/units.h"

TEST(profile_round_trip)
{
	char path[] = "/tmp/tandem-prof-XXXXXX";
	struct profile p, q;
	char err[128];
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	close(fd);
	profile_init(&p);
	p.dataset_path = strdup("/data/\"quoted\"");
	p.dataset_bytes = 629145600;
	p.files = 600;
	p.nbw = 2;
	p.bw[0] = 52428800;
	p.bw[1] = 26214400;
	p.cxl_node = 1;
	p.cache_dram = 300e6;
	p.cache_cxl = 200e6;
	p.ncpu = 2;
	p.ninst = 2;
	profile_inst_default(&p.inst[0].m, 0);
	profile_inst_default(&p.inst[1].m, 1);
	p.inst[0].m.rate = 1e8;
	p.inst[1].m.rate = 3e7;
	p.inst[1].m.order = MODEL_ORDER_SAME;
	p.inst[1].m.epochs = 3;
	p.inst[1].m.exit = 0.42;
	p.inst[1].m.cpu_task_per_byte = 3e-8;
	p.inst[1].warm.exit_measured = true;
	snprintf(p.inst[1].warm.method, sizeof(p.inst[1].warm.method), "tracker");
	p.inst[1].cmd = strdup("train.py --lr 0.1");
	ASSERT_EQ(0, profile_save(path, &p));
	ASSERT_EQ(0, profile_load(path, &q, err, sizeof(err)));
	EXPECT_STREQ(p.dataset_path, q.dataset_path);
	EXPECT_TRUE(q.dataset_bytes == p.dataset_bytes);
	EXPECT_EQ(2, q.nbw);
	EXPECT_TRUE(q.bw[1] == p.bw[1]);
	EXPECT_EQ(1, q.cxl_node);
	EXPECT_TRUE(profile_cache(&q, true, 0) == 200e6);	/* steered: the CXL node */
	EXPECT_TRUE(profile_cache(&q, true, 1) == 500e6);
	EXPECT_TRUE(profile_cache(&q, false, 0.5) == 400e6);
	EXPECT_EQ(2, q.ninst);
	EXPECT_TRUE(q.inst[0].m.rate == 1e8);
	EXPECT_EQ(MODEL_ORDER_SAME, q.inst[1].m.order);
	EXPECT_EQ(3, q.inst[1].m.epochs);
	EXPECT_TRUE(q.inst[1].m.exit == 0.42);
	EXPECT_TRUE(q.inst[1].m.cpu_task_per_byte == 3e-8);
	EXPECT_TRUE(q.inst[0].m.exit == 0);
	EXPECT_TRUE(q.inst[1].warm.exit_measured);
	EXPECT_STREQ("train.py --lr 0.1", q.inst[1].cmd);
	profile_free(&q);
	profile_free(&p);
	unlink(path);
}

TEST(profile_rejects_other_versions)
{
	char path[] = "/tmp/tandem-prof-XXXXXX";
	struct profile q;
	char err[128] = "";
	int fd = mkstemp(path);
	const char *doc = "{\"tandem_profile\": 2, \"dataset\": {\"bytes\": 1}}";

	ASSERT_GE(fd, 0);
	ASSERT_EQ((ssize_t)strlen(doc), write(fd, doc, strlen(doc)));
	close(fd);
	EXPECT_EQ(-EINVAL, profile_load(path, &q, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "version 1"));
	unlink(path);
}

TEST(instance_specs)
{
	struct model_inst in;
	char err[128];

	profile_inst_default(&in, 1);
	EXPECT_STREQ("B", in.name);
	ASSERT_EQ(0, profile_inst_parse("name=J,step=15ms,sample=1M,epochs=3,order=seq,"
					"window=4M,cpu=0.5,mem=1G,exit=300ms,cpu_task=0.25", &in, err,
					sizeof(err)));
	EXPECT_STREQ("J", in.name);
	EXPECT_LT(fabs(in.rate - 1048576 / 0.015), 1e-6);
	EXPECT_EQ(3, in.epochs);
	EXPECT_EQ(MODEL_ORDER_SEQ, in.order);
	EXPECT_TRUE(in.window == 4194304);
	EXPECT_TRUE(in.cpu_per_byte == 0.5 / 1048576);
	EXPECT_TRUE(in.mem == 1073741824.0);
	EXPECT_LT(fabs(in.exit - 0.3), 1e-9);
	EXPECT_TRUE(in.cpu_task_per_byte == 0.25 / 1048576);
	EXPECT_EQ(-EINVAL, profile_inst_parse("exit=-1s", &in, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, profile_inst_parse("rate", &in, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "KEY=VALUE"));
	EXPECT_EQ(-EINVAL, profile_inst_parse("speed=3", &in, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "unknown key 'speed'"));
	EXPECT_EQ(-EINVAL, profile_inst_parse("order=random", &in, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, profile_inst_parse("step=1s", &in, err, sizeof(err)));
}

TEST(units)
{
	double d;
	uint64_t u;

	EXPECT_EQ(0, units_parse_size("1.5M", &d));
	EXPECT_TRUE(d == 1.5 * 1048576);
	EXPECT_EQ(0, units_parse_size("2GiB", &d));
	EXPECT_TRUE(d == 2.0 * 1073741824);
	EXPECT_EQ(0, units_parse_bytes("64K", &u));
	EXPECT_EQ(65536, u);
	EXPECT_EQ(-EINVAL, units_parse_bytes("1.5", &u));
	EXPECT_EQ(-EINVAL, units_parse_size("-1M", &d));
	EXPECT_EQ(-EINVAL, units_parse_size("3X", &d));
	EXPECT_EQ(0, units_parse_duration("250ms", &d));
	EXPECT_TRUE(d == 0.25);
	EXPECT_EQ(0, units_parse_duration("2m", &d));
	EXPECT_TRUE(d == 120);
}

/* One rate convention: bytes/s, binary suffixes, "/s" optional (units.h). */
TEST(rates)
{
	static const struct {
		const char *s;
		double bps;
	} ok[] = {
		{ "100", 100 }, { "50M", 50 * 1048576.0 }, { "50M/s", 50 * 1048576.0 },
		{ "50MiB/s", 50 * 1048576.0 }, { "512K/s", 524288 }, { "1.5G", 1.5 * 1073741824 },
	};
	static const char *const bad[] = { "/s", "50Mb", "-1M", "M/s", "50M/h", "" };
	char b[32];
	double d;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		EXPECT_EQ(0, units_parse_rate(ok[i].s, &d)) TH_LOG("%s", ok[i].s);
		EXPECT_TRUE(d == ok[i].bps) TH_LOG("%s -> %f", ok[i].s, d);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, units_parse_rate(bad[i], &d)) TH_LOG("%s", bad[i]);
	}
	EXPECT_STREQ("50.0 MiB/s", units_fmt_rate(50 * 1048576.0, b, sizeof(b)));
}

/* Memory per node as tandemctl's NUMA parser (another author's code) reads it. */
TEST(calibrate_memory_matches_sysfs)
{
	struct numa_node nodes[NUMA_MAX_NODES];
	int n = numa_read_nodes(NULL, nodes, NUMA_MAX_NODES);
	struct profile p;

	if (n <= 0)
		SKIP(return, "no /sys/devices/system/node");
	profile_init(&p);
	ASSERT_EQ(0, cal_memory(&p));
	EXPECT_EQ(n, p.nnodes);
	for (int i = 0; i < p.nnodes; i++) {
		for (int k = 0; k < n; k++) {
			if (nodes[k].id != p.nodes[i].id)
				continue;
			EXPECT_TRUE(p.nodes[i].total == nodes[k].mem_total_kb * 1024.0);
			EXPECT_EQ(nodes[k].has_cpus, p.nodes[i].has_cpus);
		}
		EXPECT_LE(p.nodes[i].avail, p.nodes[i].total);
	}
	if (access("/sys/kernel/tandem/cxl_node", R_OK))
		EXPECT_EQ(numa_cpuless_node(nodes, n) >= 0, p.cxl_node >= 0);
	EXPECT_GT(p.mem_available, 0);
	EXPECT_GT(p.cache_dram + p.cache_cxl, 0);
	profile_free(&p);
}

/* fincore(1) counts resident pages with its own mincore() calls. */
static long fincore_pages(const char *dir)
{
	char cmd[256], line[128];
	long total = 0, v;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "fincore --noheadings --raw --output PAGES %s/* 2>/dev/null",
		 dir);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%ld", &v) == 1)
			total += v;
	return pclose(f) ? -1 : total;
}

TEST(calibrate_cold_read_and_bandwidth)
{
	char dir[] = "/tmp/tandem-cal-XXXXXX", cmd[96];
	struct lg_gen_opts g = { .files = 8, .size = 1 << 20, .seed = 1 };
	struct sample_set ds;
	struct cal_bw bw;
	uint64_t total;
	long pages;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, lg_gen(dir, &g, &total));
	ASSERT_EQ(0, sample_set_scan(dir, 0, &ds));
	if (fincore_pages(dir) < 0) {
		sample_set_free(&ds);
		SKIP(return, "fincore (util-linux) not usable");
	}
	ASSERT_EQ(0, cal_make_cold(&ds, ds.nsamples, CAL_COLD_FADVISE, NULL));
	pages = fincore_pages(dir);
	EXPECT_LT(pages, 8 * 256 / 20) TH_LOG("%ld pages resident after fadvise", pages);
	ASSERT_EQ(0, cal_bandwidth(&ds, ds.nsamples, 2, CAL_COLD_FADVISE, 0, &bw));
	EXPECT_GT(bw.bps, 0);
	EXPECT_GT(bw.bytes, 0);
	EXPECT_LE(bw.bytes, (double)total);
	EXPECT_LT(bw.resident_before, 0.05);
	/* what was read is now cached, as fincore sees it */
	EXPECT_GE(fincore_pages(dir), (long)(bw.bytes / 4096) - 256);
	sample_set_free(&ds);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
