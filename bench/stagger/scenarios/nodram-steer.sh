# As nodram (400 MiB: more than DRAM's free memory, less than DRAM + the
# CPU-less node) with tandem.ko steering the dataset to the CPU-less node
NAME=nodram-steer
NODE0=384 NODE1=256 BPS=26214400
NFILES=400 FSIZE_MIB=1
EPOCHS_A=2 STEP_A=30ms ORDER_A=indep SEED_A=1 SEED_B=2
GRID="0 8 16 24"
REPS=1 STEER=1
