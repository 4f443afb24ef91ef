# Dataset larger than everything the page cache can use (DRAM + the CPU-less
# node, about 450 MiB); independent shuffles; equal jobs
NAME=nofit
NODE0=384 NODE1=256 BPS=26214400
NFILES=600 FSIZE_MIB=1
EPOCHS_A=2 STEP_A=30ms ORDER_A=indep SEED_A=1 SEED_B=2
GRID="0 6 12 18 24 30"
REPS=1
