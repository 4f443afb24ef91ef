/* SPDX-License-Identifier: GPL-2.0 */
/* The built-in models, so that `tandemctl predict` works without a model
 * file: default.tpm (32x32 inputs, trained on predictor/data/runs.csv) and
 * default224.tpm (ImageNet-sized inputs, trained on
 * predictor/data/r224-2026-12-03/runs.csv); tp_model_load_builtin picks by
 * the graph's input resolution. */
	.section .rodata
	.balign 16
	.globl tp_default_model_start
	.hidden tp_default_model_start
tp_default_model_start:
	.incbin "predictor/data/default.tpm"
	.globl tp_default_model_end
	.hidden tp_default_model_end
tp_default_model_end:
	.balign 16
	.globl tp_default224_model_start
	.hidden tp_default224_model_start
tp_default224_model_start:
	.incbin "predictor/data/default224.tpm"
	.globl tp_default224_model_end
	.hidden tp_default224_model_end
tp_default224_model_end:
	.section .note.GNU-stack,"",@progbits
