"""Eight threads, each with its own session, use the library at the same time."""

import json
import threading
import unittest

from herdr_link import LinkError, Style, Verdict

import support
from support import TIER1, World, tool_names

THREADS = 8
ROUNDS = 5


class Threads(unittest.TestCase):
    def setUp(self):
        self.world = World()
        self.addCleanup(self.world.close)
        self.link = support.link()

    def test_eight_sessions_in_parallel(self):
        barrier = threading.Barrier(THREADS)
        errors = []
        sent = []
        lock = threading.Lock()

        def worker(n):
            try:
                barrier.wait(timeout=30)
                with self.link.session(f"thread-{n}") as s:
                    self.assertFalse(s.is_active())
                    self.assertEqual(s.bash_guard("herdr agent wait reviewer"), Verdict.ALLOW)
                    self.assertEqual(tool_names(s.presentation(Style.DEFERRED)), ["herdr_link"])
                    s.tool_call("herdr_link", {})
                    self.assertTrue(s.is_active())
                    for r in range(ROUNDS):
                        self.assertEqual(tool_names(s.presentation(Style.DEFERRED)), TIER1)
                        peers = s.tool_call("herdr_link_peers")
                        self.assertEqual([p["name"] for p in peers["peers"]], ["reviewer"])
                        message = f"from thread {n} round {r}"
                        result = s.tool_call("herdr_link_send", {"to": "reviewer", "message": message})
                        self.assertEqual(result["status"], "sent")
                        with lock:
                            sent.append(message)
                        self.assertEqual(s.bash_guard("herdr agent wait reviewer"), Verdict.BLOCK_END_TURN)
                        with self.assertRaises(LinkError):
                            s.tool_call("herdr_link_send", {"to": "ghost", "message": "x"})
                        with self.assertRaises(ValueError):
                            s.tool_call("no_such_tool")
                self.assertFalse(self.link.is_active(f"thread-{n}"))
            except BaseException as e:  # noqa: BLE001 - reported below
                with lock:
                    errors.append(f"thread {n}: {e!r}")

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
            self.assertFalse(t.is_alive(), "a thread hung")
        self.assertEqual(errors, [])
        self.assertEqual(len(sent), THREADS * ROUNDS)
        delivered = sorted(
            json.loads(p["text"].strip().split("\n")[-1])["message"] for p in self.world.prompts()
        )
        self.assertEqual(delivered, sorted(sent))

    def test_calls_run_without_the_gil(self):
        # While one thread sits in a slow library call (the fake sleeps 1 s in `agent list`),
        # other Python threads keep running: the ticker counts only while the call is in
        # flight. With the GIL held it would count at most once (at the edges); free, it
        # counts about a hundred times, so a loaded machine cannot make this flaky.
        self.world._fake("fake", "fault", "agent", "list", "--delay-ms", "1000")
        ticks = []
        in_call = threading.Event()
        done = threading.Event()

        def ticker():
            while not done.is_set():
                if in_call.is_set():
                    ticks.append(1)
                done.wait(0.01)

        t = threading.Thread(target=ticker)
        with self.link.session() as s:
            t.start()
            try:
                in_call.set()
                s.tool_call("herdr_link_peers")
                in_call.clear()
            finally:
                done.set()
                t.join()
        self.assertGreaterEqual(len(ticks), 5, f"{len(ticks)} ticks during a 1 s call")

if __name__ == "__main__":
    unittest.main()
