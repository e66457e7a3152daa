build/exp/fg-frozen2 kv --trace build/exp/aiperf-eq.jsonl --model paper-kimi-k3 --dram 1292097945 --ssd 51683917800 --device none --policy P --sweep [--param V]
