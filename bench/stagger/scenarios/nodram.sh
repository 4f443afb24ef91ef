# Dataset larger than the DRAM node's free memory (about 270 MiB), smaller than
# DRAM + the CPU-less node; independent shuffles; equal jobs
NAME=nodram
NODE0=384 NODE1=256 BPS=26214400
NFILES=400 FSIZE_MIB=1
EPOCHS_A=2 STEP_A=30ms ORDER_A=indep SEED_A=1 SEED_B=2
GRID="0 4 8 12 16 24"
REPS=2
