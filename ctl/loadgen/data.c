// SPDX-License-Identifier: GPL-2.0
/*
 * Loadgen datasets: the per-epoch order of a dataset's samples (lib/samples.h),
 * and synthetic datasets with verifiable content.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "loadgen/loadgen.h"

#define LG_MAGIC	"TNDMLG01"
#define LG_HDR		32
#define LG_BUF		(1u << 20)

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void lg_order(uint64_t n, uint64_t seed, uint32_t epoch, bool shuffle, uint32_t *out)
{
	uint64_t x = mix64(seed ^ mix64(epoch + 0x1000));

	for (uint64_t i = 0; i < n; i++)
		out[i] = i;
	if (!shuffle)
		return;
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j;
		uint32_t t;

		x = mix64(x);
		j = x % i;
		t = out[i - 1];
		out[i - 1] = out[j];
		out[j] = t;
	}
}

int lg_first_needs(const struct sample_set *ds, const uint64_t *seeds, unsigned int nseeds,
		   uint32_t epoch, bool shuffle, uint32_t *files, uint32_t *nfiles)
{
	uint32_t *ord = calloc(ds->nsamples * nseeds + 1, sizeof(*ord));
	bool *seen = calloc(ds->files.n + 1, sizeof(*seen));
	int err = ord && seen ? 0 : -ENOMEM;

	*nfiles = 0;
	for (unsigned int j = 0; !err && j < nseeds; j++)
		lg_order(ds->nsamples, seeds[j], epoch, shuffle, ord + j * ds->nsamples);
	for (uint64_t i = 0; !err && i < ds->nsamples; i++)
		for (unsigned int j = 0; j < nseeds; j++) {
			uint32_t f = ds->samples[ord[j * ds->nsamples + i]].file;

			if (!seen[f]) {
				seen[f] = true;
				files[(*nfiles)++] = f;
			}
		}
	free(ord);
	free(seen);
	return err;
}

/* ---- content ---- */

static void put_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static unsigned char byte_at(uint64_t key, uint64_t o)
{
	return mix64(key ^ (o / 8)) >> (8 * (o % 8));
}

/* Bytes [off, off+len) of file (seed, index, size). */
static void lg_fill(unsigned char *buf, uint64_t off, uint64_t len,
		    uint64_t seed, uint32_t index, uint64_t size)
{
	uint64_t key = mix64(seed * 0x100000001b3ULL ^ index), i = 0;
	unsigned char hdr[LG_HDR] = { 0 };

	for (; i < len && (off + i) % 8; i++)
		buf[i] = byte_at(key, off + i);
	for (; i + 8 <= len; i += 8)
		put_le64(buf + i, mix64(key ^ ((off + i) / 8)));
	for (; i < len; i++)
		buf[i] = byte_at(key, off + i);
	if (off >= LG_HDR)
		return;
	memcpy(hdr, LG_MAGIC, 8);
	put_le64(hdr + 8, seed);
	put_le64(hdr + 16, index);
	put_le64(hdr + 24, size);
	memcpy(buf, hdr + off, len < LG_HDR - off ? len : LG_HDR - off);
}

bool lg_check(const unsigned char *buf, uint64_t off, uint64_t len,
	      uint64_t seed, uint32_t index, uint64_t size)
{
	unsigned char tmp[4096];

	for (uint64_t done = 0; done < len; done += sizeof(tmp)) {
		uint64_t n = len - done < sizeof(tmp) ? len - done : sizeof(tmp);

		lg_fill(tmp, off + done, n, seed, index, size);
		if (memcmp(tmp, buf + done, n))
			return false;
	}
	return true;
}

/* ---- generation ---- */

int lg_dist_parse(const char *s, enum lg_dist *d)
{
	static const char *const names[] = { "fixed", "uniform", "lognormal" };

	for (int i = 0; i < 3; i++) {
		if (!strcmp(s, names[i])) {
			*d = i;
			return 0;
		}
	}
	return -EINVAL;
}

static uint64_t gen_size(const struct lg_gen_opts *o, uint32_t i)
{
	uint64_t x = mix64(o->seed ^ mix64(i ^ 0x5153));
	double u1 = ((x >> 11) + 0.5) / 9007199254740992.0, u2, z;

	switch (o->dist) {
	case LG_DIST_UNIFORM:	/* [size/2, 3 size/2] */
		return o->size / 2 + (uint64_t)(u1 * o->size);
	case LG_DIST_LOGNORMAL:	/* sigma 0.5, mean size */
		u2 = ((mix64(x) >> 11) + 0.5) / 9007199254740992.0;
		z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		return (uint64_t)exp(log((double)o->size) - 0.125 + 0.5 * z);
	default:
		return o->size;
	}
}

static int write_file(const char *path, const struct lg_gen_opts *o, uint32_t idx,
		      uint64_t size, unsigned char *buf)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err = 0;

	if (fd < 0)
		return -errno;
	for (uint64_t off = 0; off < size && !err;) {
		uint64_t n = size - off < LG_BUF ? size - off : LG_BUF;
		ssize_t w;

		lg_fill(buf, off, n, o->seed, idx, size);
		w = write(fd, buf, n);
		if (w < 0)
			err = -errno;
		else
			off += w;
	}
	/* the dataset must be on disk, not in the cache, for cold reads */
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int lg_gen(const char *dir, const struct lg_gen_opts *o, uint64_t *total)
{
	size_t plen = strlen(dir) + 32;
	unsigned char *buf = malloc(LG_BUF);
	char *path = malloc(plen);
	int err = 0;

	*total = 0;
	if (!buf || !path) {
		err = -ENOMEM;
		goto free_bufs;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		err = -errno;
		goto free_bufs;
	}
	for (uint32_t i = 0; i < o->files && !err; i++) {
		uint64_t size = gen_size(o, i);

		snprintf(path, plen, "%s/sample-%06u.bin", dir, i);
		err = write_file(path, o, i, size, buf);
		*total += size;
	}
	if (!err)
		err = fsync_dir(dir);
free_bufs:
	free(buf);
	free(path);
	return err;
}
