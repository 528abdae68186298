//! Wired network: packets with real header sizes, links, queues, loss models, Mahimahi trace links, IPv4 fragmentation, pcap, static routing
