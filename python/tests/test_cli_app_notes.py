"""The lines `celltcp run` prints under its flow table for web and video flows and Jain's index."""

import io
from types import SimpleNamespace

from celltcp.cli import print_flow_table


def test_web_video_and_jain_lines_follow_the_flow_table() -> None:
    summary = {
        "flows": [
            {"name": "browser", "app": "web", "cc": "cubic", "goodput_bps": 1e6, "pages": 4,
             "page_time_mean_s": 0.5123, "page_time_max_s": 0.9},
            {"name": "clip", "app": "video", "cc": "cubic", "goodput_bps": 2e6, "video_startup_s": 1.234,
             "video_stalls": 1, "video_stall_time_s": 2.5, "video_satisfied": False},
            {"name": "p", "app": "ping", "goodput_bps": 0.0},
        ],
        "jain_index": 0.9,
    }
    out = io.StringIO()
    print_flow_table(SimpleNamespace(summary=summary, manifest={}), out)  # type: ignore[arg-type]
    lines = out.getvalue().splitlines()
    assert "browser: 4 pages, page time mean 0.512 s, max 0.900 s" in lines
    assert "clip: start-up 1.23 s, 1 stalls (2.50 s), satisfied: no" in lines
    assert "Jain's fairness index (goodput, 2 flows): 0.900" in lines
