"""The benchmark dumbbell as a celltcp scenario: the same topology, queues and TCP settings as
bench/ns3/dumbbell.cc (see bench/README.md)."""


def dumbbell_toml(flows: int, duration_s: float = 60.0, cc: str = "cubic", queue_pkts: int = 42,
                  record_rtt: bool = True) -> str:
    lines = [f'duration = "{duration_s}s"', f"record_rtt = {str(record_rtt).lower()}", ""]
    lines += ['[[node]]', 'name = "left"', 'kind = "router"', '', '[[node]]', 'name = "right"', 'kind = "router"', '']
    for i in range(flows):
        lines += ['[[link]]', f'between = ["s{i}", "left"]', 'rate = "100Mbps"', 'delay = "1ms"', 'queue = "1000p"', '']
    lines += ['[[link]]', 'name = "bottleneck"', 'between = ["left", "right"]', 'rate = "10Mbps"', 'delay = "23ms"',
              f'queue = "{queue_pkts}p"', '']
    lines += ['[[link]]', 'between = ["right", "receiver"]', 'rate = "100Mbps"', 'delay = "1ms"', 'queue = "1000p"', '']
    for i in range(flows):
        start_ms = i * 1000.0 / flows
        lines += ['[[flow]]', 'app = "bulk"', f'from = "s{i}"', 'to = "receiver"', f'cc = "{cc}"', 'window = "4MB"',
                  f'start = "{start_ms}ms"', '']
    return "\n".join(lines)


if __name__ == "__main__":
    import sys
    print(dumbbell_toml(int(sys.argv[1]) if len(sys.argv) > 1 else 1))
