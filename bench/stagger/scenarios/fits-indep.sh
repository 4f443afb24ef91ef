# Dataset fits in the page cache; independent shuffles; equal jobs
NAME=fits-indep
NODE0=384 NODE1=256 BPS=26214400
NFILES=200 FSIZE_MIB=1
EPOCHS_A=2 STEP_A=30ms ORDER_A=indep SEED_A=1 SEED_B=2
GRID="0 2 4 6 8 12 16"
REPS=2
