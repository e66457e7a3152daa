build/exp/fg-frozen2 kv --trace ../shared/traces/mooncake/conversation_trace.jsonl --model paper-kimi-k3 --dram 2709545287 --ssd 27095452870 --device none --policy P --sweep [--param V]
