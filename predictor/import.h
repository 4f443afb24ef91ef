/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ONNX importer's entry points for the tests: its flags, the import
 * with them, and the shapes it infers. The state it shares with shape.c
 * and fold.c is import_ctx.h's.
 */
#ifndef TANDEM_PREDICT_IMPORT_H
#define TANDEM_PREDICT_IMPORT_H

#include <stdbool.h>

#include "import_ctx.h"

/* builder flags */
#define TP_IMPORT_NO_VALUE_INFO	0x1	/* ignore value_info/output shapes (tests) */

/* tp_graph_from_onnx with TP_IMPORT_* flags (tests) */
int tp_import_onnx(const void *buf, size_t len, unsigned flags, struct tp_graph **out);
/* Node-output shapes of a model as import infers them (tests). */
int tp_onnx_infer_shapes(const struct onnx_model *m, unsigned flags, struct onnx_value **out,
			 uint32_t *n);

#endif
