# bash selftests/vm/run-vm.sh --script bench/steer/vm-throughput.sh --files build/bench/steer-1205b/files --node0-mb 1024 --node1-mb 1024 --disk-mb 2048 --bps 0 --timeout 1500 --vm-timeout 1600 --quiet
# bash bench/steer/throughput.sh --rounds 5   (load before: 0.62 1-min, no other VM)
