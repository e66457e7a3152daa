build/exp/fg-frozen2 kv --trace ../shared/traces/weka-claude-code --model paper-kimi-k3 --dram 1078243246 --ssd 10782432460 --device none --policy P --sweep [--param V]
