# libtandem-predict: GHN-2 training-time predictor (Documentation/predictor.md).
#
#   $(B)/predictor/libtandem-predict.{a,so}   the library (objects built -fPIC)
#   $(B)/asan/predictor/libtandem-predict.a   sanitized, for the host tests
#   $(B)/predictor/fuzz_onnx                  libFuzzer target of the ONNX reader
#
# The CUDA backend (predictor/cuda/encoder.cu) is built when nvcc exists;
# otherwise predictor/cuda_none.c stands in and the CPU backend is used.

NVCC          ?= /usr/local/cuda/bin/nvcc
CUDA_LIBDIR   ?= /usr/local/cuda/lib64
PRED_SRCS     := $(filter-out predictor/cuda_none.c,$(wildcard predictor/*.c))
PRED_HDRS     := $(wildcard predictor/*.h predictor/include/*.h)
PRED_CFLAGS   := -Ipredictor -Ipredictor/include -fPIC
PRED_OBJS     := $(patsubst predictor/%.c,$(B)/predictor/%.o,$(PRED_SRCS)) \
		 $(B)/predictor/default_model.o
PRED_ASANOBJS := $(patsubst predictor/%.c,$(B)/asan/predictor/%.o,$(PRED_SRCS)) \
		 $(B)/predictor/default_model.o

ifneq ($(wildcard $(NVCC)),)
PRED_CUDA_OBJ      := $(B)/predictor/cuda/encoder.o
PRED_ASAN_CUDA_OBJ := $(PRED_CUDA_OBJ)
# nvcc links the CUDA runtime statically by default; do the same here
PRED_LDLIBS        := -L$(CUDA_LIBDIR) -lcudart_static -ldl -lrt -lpthread -lstdc++ -lm
else
PRED_CUDA_OBJ      := $(B)/predictor/cuda_none.o
PRED_ASAN_CUDA_OBJ := $(B)/asan/predictor/cuda_none.o
PRED_LDLIBS        := -lm
endif

PRED_LIB      := $(B)/predictor/libtandem-predict.a
PRED_SO       := $(B)/predictor/libtandem-predict.so
PRED_ASAN_LIB := $(B)/asan/predictor/libtandem-predict.a
PRED_FUZZ     := $(B)/predictor/fuzz_onnx

PRED_TEST_SRCS := $(wildcard selftests/host/test_predict_*.c)
PRED_TEST_BINS := $(patsubst selftests/host/%.c,$(B)/selftests/host/%,$(PRED_TEST_SRCS))

ALL_TARGETS += $(PRED_LIB) $(PRED_SO) $(PRED_ASAN_LIB) $(PRED_FUZZ)
# the test binaries are already in HOST_TESTS (selftests/host/*.c); the rule
# below, being explicit, takes precedence over selftests.mk's pattern rule

# tandemctl predict
CTL_CFLAGS  += -Ipredictor/include
CTL_LDLIBS  += $(PRED_LIB) $(PRED_LDLIBS)
$(B)/tandemctl $(B)/asan/libtandemctl.a: $(PRED_LIB)

# the encoder's loops need -O3's vectoriser (after CFLAGS' -O2)
PRED_OPT :=
$(B)/predictor/nn.o $(B)/asan/predictor/nn.o $(B)/predictor/ghn_model.o: PRED_OPT := -O3
# the probe's kernels too (their clones are compiled for AVX2+FMA and the baseline)
$(B)/predictor/probe.o $(B)/asan/predictor/probe.o: PRED_OPT := -O3

$(B)/predictor/%.o: predictor/%.c $(PRED_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PRED_CFLAGS) $(PRED_OPT) -c -o $@ $<

$(B)/asan/predictor/%.o: predictor/%.c $(PRED_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) $(PRED_CFLAGS) $(PRED_OPT) -c -o $@ $<

# the default model is assembled in with .incbin (path relative to the top)
$(B)/predictor/default_model.o: predictor/default_model.S predictor/data/default.tpm \
				 predictor/data/default224.tpm
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ $<

$(B)/predictor/cuda/encoder.o: predictor/cuda/encoder.cu $(PRED_HDRS)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -Xcompiler -fPIC,-Wall,-Wextra,-Werror -Ipredictor/include -c -o $@ $<

$(PRED_LIB): $(PRED_OBJS) $(PRED_CUDA_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(PRED_SO): $(PRED_OBJS) $(PRED_CUDA_OBJ)
	$(CC) -shared -Wl,-soname,libtandem-predict.so -o $@ $^ $(PRED_LDLIBS)

$(PRED_ASAN_LIB): $(PRED_ASANOBJS) $(PRED_ASAN_CUDA_OBJ)
	@rm -f $@
	ar rcs $@ $^

# libFuzzer needs clang; the reader and importer are compiled into it directly
PRED_FUZZ_SRCS := predictor/fuzz/fuzz_onnx.c predictor/onnx.c predictor/import.c predictor/import_ctx.c \
		  predictor/shape.c predictor/fold.c \
		  predictor/graph.c predictor/util.c
$(PRED_FUZZ): $(PRED_FUZZ_SRCS) $(PRED_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -O1 -g -D_GNU_SOURCE -std=gnu11 $(WFLAGS) -Ipredictor -Ipredictor/include \
		-fsanitize=fuzzer,address,undefined -o $@ $(PRED_FUZZ_SRCS) -lm

$(PRED_TEST_BINS): $(B)/selftests/host/%: selftests/host/%.c $(PRED_ASAN_LIB) $(KSFT_DIR)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-sign-compare -Wno-unused-parameter $(SANFLAGS) $(PRED_CFLAGS) \
		$(KSFT_CFLAGS) -Iselftests/lib -o $@ $< \
		$(PRED_ASAN_LIB) $(PRED_LDLIBS)

# The GPU checks' kit (bench/predictor/gpu_check.sh): tandemctl and
# test_predict_golden without sanitizers (a GPU machine has no libasan), with
# the shared libraries they need beside them (glibc excepted).
GPU_KIT := $(B)/gpu-kit
.PHONY: gpu-kit
gpu-kit: $(B)/tandemctl $(PRED_LIB) $(KSFT_DIR)/.stamp
	@mkdir -p $(GPU_KIT)/lib
	$(CC) $(CFLAGS) -Wno-sign-compare -Wno-unused-parameter $(PRED_CFLAGS) $(KSFT_CFLAGS) \
		-Iselftests/lib -o $(GPU_KIT)/test_predict_golden selftests/host/test_predict_golden.c \
		$(PRED_LIB) $(PRED_LDLIBS)
	cp $(B)/tandemctl $(GPU_KIT)/
	ldd $(GPU_KIT)/tandemctl $(GPU_KIT)/test_predict_golden | \
		awk '$$3 ~ /^\// && $$1 !~ /^(libc|libm|libpthread|libdl|librt|ld-linux)[.-]/ {print $$3}' | \
		sort -u | xargs -r cp -L -t $(GPU_KIT)/lib
