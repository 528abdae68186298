//! Applications: bulk transfer, iperf-like TCP/UDP tests, ping
