/* SPDX-License-Identifier: GPL-2.0 */
/* The default model (trained on predictor/data/runs.csv), built into the
 * library so that `tandemctl predict` works without a model file. */
	.section .rodata
	.balign 16
	.globl tp_default_model_start
	.hidden tp_default_model_start
tp_default_model_start:
	.incbin "predictor/data/default.tpm"
	.globl tp_default_model_end
	.hidden tp_default_model_end
tp_default_model_end:
	.section .note.GNU-stack,"",@progbits
