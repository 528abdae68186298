"""A corpus of malformed scenarios and command lines run through the ``celltcp`` command (issue
17): every category a user can get wrong — encodings, syntax, nesting, sizes, unknown keys at
every level, units, numbers, types, array lengths, names, routes, radio, handover, mobility,
traces, Wi-Fi, ``--set``/``--seed``, output directories. Each is refused with exit status 2 and
one line on stderr that names the key (no traceback, no usage block), and nothing is left on
disk. The Rust corpus (crates/celltcp-scenario/tests/malformed.rs) checks the messages in more
detail; this one checks what the user sees, process and files included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def ex(name: str) -> str:
    return (EXAMPLES / f"{name}.toml").read_text()


def rep(name: str, old: str, new: str) -> str:
    text = ex(name)
    assert old in text, (name, old)
    return text.replace(old, new, 1)


def add(name: str, extra: str) -> str:
    return ex(name) + "\n" + extra + "\n"


# (id, scenario text or bytes, extra arguments, a word the one-line error must contain)
CASES: list[tuple[str, str | bytes, list[str], str]] = [
    # encodings and syntax
    ("nul-byte", rep("single-link", "seed = 1", "seed = 1\x00"), [], "line"),
    ("unterminated-string", rep("single-link", '"10Mbps"', '"10Mbps'), [], "line 8"),
    ("duplicate-key", rep("single-link", "seed = 1", "seed = 1\nseed = 2"), [], "seed"),
    ("duplicate-table", add("handover", "[lte.rlc]\nmode = 'um'"), [], "rlc"),
    ("array-of-tables-as-table", rep("single-link", "[[flow]]", "[flow]"), [], "flow"),
    ("empty-file", "", [], "duration"),
    ("utf16", ex("single-link").encode("utf-16"), [], "UTF-16"),
    # nesting and sizes
    ("deep-arrays", "x = " + "[" * 5000 + "]" * 5000, [], "nested"),
    ("megabyte-key", add("single-link", "k" * (1 << 20) + " = 1"), [], "unknown field"),
    ("count-huge", rep("lte-cell", "count = 14", "count = 10000000"), [], "count"),
    # unknown keys at every level
    ("unknown-top", add("single-link", "durration = '1s'"), [], "durration"),
    ("unknown-event", rep("mptcp-coverage", 'state = "down"', 'state = "down"\nwhen = 1'), [], "when"),
    # events
    ("event-interface", rep("mptcp-coverage", 'interface = "wifi"', 'interface = "wlan0"'), [], "event[0].interface"),
    ("event-at", rep("mptcp-coverage", 'at = "8s"', 'at = "30s"'), [], "event[0].at"),
    ("event-state", rep("mptcp-coverage", 'state = "down"', 'state = "off"'), [], "state"),
    ("unknown-link", rep("single-link", 'rate = "10Mbps"', 'rate = "10Mbps"\nrat = 1'), [], "rat"),
    ("unknown-flow", rep("single-link", 'cc = "newreno"', 'cc = "newreno"\nccc = 1'), [], "ccc"),
    ("unknown-lte", rep("handover", 'bandwidth = "10MHz"', 'bandwidth = "10MHz"\nbandwith = 1'), [], "bandwith"),
    ("unknown-rlc", rep("handover", 'mode = "am"', 'mode = "am"\nmod = 1'), [], "mod"),
    ("unknown-handover", rep("handover", 'x2_delay = "6ms"', 'x2_delay = "6ms"\nx2delay = 1'), [], "x2delay"),
    ("unknown-enb", rep("handover", 'name = "source"', 'name = "source"\npower = 3'), [], "power"),
    ("unknown-ue", rep("handover", 'name = "ue"', 'name = "ue"\nspeed = 3'), [], "speed"),
    ("unknown-mobility", rep("handover", "heading_deg = 0.0", "heading_deg = 0.0, foo = 1"), [], "mobility.foo"),
    ("unknown-speed", rep("handover", "sigma_kmh = 5.0", "sigma_kmh = 5.0, bar = 2"), [], "speed.bar"),
    ("unknown-placement", rep("lte-cell", 'radius = "500m"', 'radius = "500m", rad = 2'), [], "placement.rad"),
    ("unknown-wifi", rep("wifi", "ampdu = true", "ampdu = true\nchanel = 3"), [], "chanel"),
    ("unknown-cc-param", rep("handover", 'cc = "cubic"', 'cc = { name = "cubic", gamma = 0.5 }'), [], "gamma"),
    # units
    ("unit-rate", rep("single-link", '"10Mbps"', '"10Mbs"'), [], "link[0].rate"),
    ("unit-delay", rep("single-link", '"25ms"', '"25 parsecs"'), [], "link[0].delay"),
    ("unit-queue", rep("single-link", '"100p"', '"100q"'), [], "link[0].queue"),
    ("unit-window", rep("single-link", '"64KB"', '"64KQ"'), [], "flow[0].window"),
    ("unit-duration", rep("single-link", '"60s"', '"-1s"'), [], "duration"),
    ("unit-bandwidth", rep("handover", '"10MHz"', '"11MHz"'), [], "bandwidth"),
    ("unit-x2-delay", rep("handover", '"6ms"', '"6"'), [], "x2_delay"),
    ("unit-hysteresis", rep("handover", '"3dB"', '"3"'), [], "hysteresis"),
    ("unit-time-to-trigger", rep("handover", '"256ms"', '"257ms"'), [], "time_to_trigger"),
    ("unit-pdcp-buffer", rep("handover", '"1MB"', '"1MiBB"'), [], "pdcp.buffer"),
    ("unit-radius", rep("lte-cell", '"500m"', '"500"'), [], "placement.radius"),
    # numbers and types
    ("seed-text", rep("single-link", "seed = 1", "seed = 'one'"), [], "seed"),
    ("seed-negative", rep("single-link", "seed = 1", "seed = -1"), [], "seed"),
    ("loss-above-1", rep("single-link", "loss = 0.001", "loss = 2"), [], "loss"),
    ("loss-nan", rep("single-link", "loss = 0.001", "loss = nan"), [], "loss"),
    ("mss-zero", rep("handover", "mss = 1400", "mss = 0"), [], "mss"),
    ("mss-fraction", rep("handover", "mss = 1400", "mss = 1400.5"), [], "mss"),
    ("count-zero", rep("lte-cell", "count = 14", "count = 0"), [], "count"),
    ("position-nan", rep("handover", "[750.0, 0.0]", "[nan, 0.0]"), [], "position"),
    ("speed-negative", rep("handover", "mean_kmh = 40.0", "mean_kmh = -40.0"), [], "mean_kmh"),
    ("heading-text", rep("handover", "heading_deg = 0.0", "heading_deg = 'north'"), [], "mobility.heading_deg"),
    ("rate-zero", rep("single-link", '"10Mbps"', '"0Mbps"'), [], "rate"),
    ("queue-zero", rep("single-link", '"100p"', '"0p"'), [], "queue"),
    ("cc-param-range", rep("handover", 'cc = "cubic"', 'cc = { name = "cubic", beta = 7 }'), [], "beta"),
    # array lengths
    ("between-three", rep("single-link", '["sender", "receiver"]', '["sender", "receiver", "x"]'), [], "between"),
    ("between-one", rep("single-link", '["sender", "receiver"]', '["sender"]'), [], "between"),
    ("position-three", rep("handover", "[750.0, 0.0]", "[750.0, 0.0, 1.0]"), [], "position"),
    ("start-three", rep("handover", "start = [50.0, 0.0]", "start = [50.0, 0.0, 2.0]"), [], "mobility.start"),
    # names and routes
    ("link-to-itself", rep("single-link", '["sender", "receiver"]', '["sender", "sender"]'), [], "between"),
    ("flow-to-nobody", rep("single-link", 'to = "receiver"', 'to = "nobody"'), [], "to"),
    ("flow-to-itself", rep("single-link", 'to = "receiver"', 'to = "sender"'), [], "to"),
    ("flow-without-route", add("single-link", '[[link]]\nbetween = ["a", "b"]\nrate = "1Mbps"\ndelay = "1ms"\n'
                               '[[flow]]\napp = "bulk"\nfrom = "sender"\nto = "a"'), [], "no route"),
    ("flow-name-twice", add("handover", '[[flow]]\nname = "dl"\napp = "bulk"\nfrom = "server"\nto = "ue"'), [], "name"),
    ("flow-name-empty", rep("handover", 'name = "dl"', 'name = ""'), [], "flow[0].name"),
    ("flow-name-path", rep("handover", 'name = "dl"', 'name = "../x"'), [], "flow[0].name"),
    ("enb-name-twice", rep("handover", 'name = "target"', 'name = "source"'), [], "name"),
    ("ue-unknown-enb", rep("handover", 'enb = "source"', 'enb = "nowhere"'), [], "enb"),
    ("glob-matches-nothing", rep("lte-cell", 'to = "ue*"', 'to = "zz*"'), [], "to"),
    ("app-unknown", rep("single-link", '"bulk"', '"bulkk"'), [], "app"),
    ("cc-unknown", rep("single-link", '"newreno"', '"newrenoo"'), [], "cc"),
    # radio, handover, mobility, Wi-Fi
    ("rlc-mode", rep("handover", 'mode = "am"', 'mode = "tm"'), [], "mode"),
    ("forwarding", rep("handover", '"lossless"', '"lossy"'), [], "forwarding"),
    ("scheduler", rep("lte-cell", 'scheduler = "pf"', 'scheduler = "fifo"'), [], "scheduler"),
    ("mobility-model", rep("handover", '"constant_velocity"', '"teleport"'), [], "mobility.model"),
    ("speed-distribution", rep("handover", 'dist = "normal"', 'dist = "cauchy"'), [], "speed.dist"),
    ("placement-type", rep("lte-cell", 'type = "disc"', 'type = "square"'), [], "placement.type"),
    ("time-to-trigger-negative", rep("handover", '"256ms"', '"-256ms"'), [], "time_to_trigger"),
    ("every-cell-fails", rep("handover", 'time_to_trigger = "256ms"',
                             'time_to_trigger = "256ms"\ncell_failure = [{cell = "source", at = "1s"}, '
                             '{cell = "target", at = "2s"}]'), [], "every cell would fail"),
    ("wifi-mcs", rep("wifi", "mcs = 7", "mcs = 12"), [], "mcs"),
    ("wifi-standard", rep("wifi", '"802.11ac"', '"802.11zz"'), [], "standard"),
    ("wifi-distances", rep("wifi", '["5m", "10m", "15m", "20m"]', '["5m"]'), [], "distances"),
    # traces
    ("trace-missing", rep("single-link", 'rate = "10Mbps"', 'trace = "no-such-trace.up"'), [], "trace"),
    # --set and --seed
    ("set-unknown-list", ex("single-link"), ["--set", "lnk.0.rate=1Mbps"], "lnk"),
    ("set-index-out-of-range", ex("single-link"), ["--set", "link.5.rate=1Mbps"], "link"),
    ("set-bad-value", ex("single-link"), ["--set", "link.0.rate=fast"], "rate"),
    ("set-no-value", ex("single-link"), ["--set", "link.0.rate"], "link.0.rate"),
    ("set-unknown-name", ex("dumbbell"), ["--set", "link.nosuchlink.rate=1Mbps"], "nosuchlink"),
    ("set-too-deep", ex("single-link"), ["--set", ".".join(["a"] * 40) + "=1"], "--set"),
    ("seed-option-negative", ex("single-link"), ["--seed", "-5"], "--seed"),
    ("seed-option-text", ex("single-link"), ["--seed", "abc"], "--seed"),
]


@pytest.mark.parametrize(("text", "args", "word"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_input_is_refused_with_one_line_and_leaves_nothing(
        text: str | bytes, args: list[str], word: str, tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    if isinstance(text, bytes):
        scenario.write_bytes(text)
    else:
        scenario.write_text(text)
    out = tmp_path / "out"
    r = cli("run", scenario, "-o", out, "-q", *args)
    err = r.stderr.strip()
    assert r.returncode == 2, (r.returncode, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    assert len(err.splitlines()) == 1, err[:2000]
    assert len(err) < 1000, err[:2000]  # (the file path, then a message the core keeps under 600)
    assert word in err, err
    assert sorted(os.listdir(tmp_path)) == ["s.toml"], os.listdir(tmp_path)


def test_the_corpus_bases_run() -> None:
    # every case above is a one-key edit of a shipped example: the examples themselves validate
    for name in ["single-link", "handover", "lte-cell", "wifi", "dumbbell", "mptcp-coverage"]:
        r = cli("validate", EXAMPLES / f"{name}.toml")
        assert r.returncode == 0, (name, r.stderr)
