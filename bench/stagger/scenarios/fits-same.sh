# Dataset fits in the page cache; same order (same seed); equal jobs
NAME=fits-same
NODE0=384 NODE1=256 BPS=26214400
NFILES=200 FSIZE_MIB=1
EPOCHS_A=2 STEP_A=30ms ORDER_A=same SEED_A=1 SEED_B=1
GRID="0 2 4 6 8 12 16"
REPS=2
