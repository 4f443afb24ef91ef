// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes through the ONNX reader and the GHN-2
 * graph import. Any input must give a graph or an error with a message;
 * ASan/UBSan catch the rest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tandem_predict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_graph *g = NULL;
	int err = tp_graph_from_onnx(data, size, &g);

	if (err) {
		if (!tp_errmsg()[0] || err >= 0)
			abort();	/* every failure must explain itself */
		return 0;
	}
	if (tp_graph_num_nodes(g) < 1)
		abort();
	tp_graph_free(g);
	return 0;
}
