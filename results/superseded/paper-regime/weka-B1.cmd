build/exp/fg-frozen2 kv --trace ../shared/traces/weka-claude-code --model paper-kimi-k3 --dram 15158692946 --ssd 151586929460 --device none --policy P --sweep [--param V]
