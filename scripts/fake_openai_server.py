#!/usr/bin/env python3
"""Serve the scripted OpenAI Chat Completions fixture on 127.0.0.1 for trying agentcell by hand.

    scripts/fake_openai_server.py --port 8765
    # then, in a notebook:  %%agent --model openai-compat:fake-model@http://127.0.0.1:8765/v1

Every request gets a plausible streamed answer (thinking, one call of the first tool, then an answer
naming the prompt and the tool's result). `--flaky N` answers every N-th request with a 429 first, to
watch the widget's "retrying in … s after 429"; `--delay` sets the seconds between streamed words.
Each request is logged (status, outcome, and when the client disconnected).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.openai_server import Fail, FakeOpenAI, Scripted, demo_reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--delay", type=float, default=0.04, help="seconds between streamed words")
    parser.add_argument("--flaky", type=int, default=0, metavar="N", help="every N-th request first gets a 429")
    parser.add_argument("--retry-after", type=float, default=2.0, help="Retry-After of the --flaky 429s")
    parser.add_argument("--key", default=None, help="require this bearer key (others get a 401)")
    args = parser.parse_args()
    counter = itertools.count(1)

    def respond(body: dict[str, Any]) -> Scripted:
        if args.flaky and next(counter) % args.flaky == 0:
            return Fail(429, "Rate limit reached (fake server --flaky)", retry_after=args.retry_after)
        return demo_reply(body, delay=args.delay)

    server = FakeOpenAI(port=args.port, default=respond, require_key=args.key).start()
    print(f"fake OpenAI server on {server.base_url}  (model string: openai-compat:fake-model@{server.base_url})")
    seen = 0
    try:
        while True:
            time.sleep(0.2)
            for rec in server.requests[seen:]:
                if rec.outcome == "pending":
                    break
                seen += 1
                gone = f", client left {rec.disconnected_at - rec.received_at:.2f} s in" if rec.disconnected_at else ""
                problems = f"  PROBLEMS: {rec.problems}" if rec.problems else ""
                print(f"{rec.path} {rec.status} {rec.outcome} ({len(rec.messages)} messages{gone}){problems}")
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


if __name__ == "__main__":
    main()
