// SPDX-License-Identifier: GPL-2.0
/* The CUDA backend when the library is built without nvcc. */
#include "ghn.h"

int tp_cuda_probe(void)
{
	return 0;
}

int tp_cuda_device(struct tp_device *dev)
{
	(void)dev;
	return tp_fail(-ENODEV, "built without CUDA");
}

int tp_cuda_embed(struct tp_model *m, const struct tp_graph *g, float *gvec)
{
	(void)m, (void)g, (void)gvec;
	return tp_fail(-ENODEV, "built without CUDA");
}

float tp_cuda_regress(struct tp_model *m, const float *x, int *err)
{
	(void)m, (void)x;
	*err = tp_fail(-ENODEV, "built without CUDA");
	return 0.0f;
}

void tp_cuda_release(struct tp_model *m)
{
	(void)m;
}
