"""Every string the library returns is released with hl_free, exactly once."""

import ctypes
import os
import sys
import threading
import unittest

import herdr_link
from herdr_link import LinkError

import support
from support import World


class Ledger:
    """Wraps a Link's C functions: records each returned pointer and each hl_free."""

    def __init__(self, link):
        self.native = link._native
        self.lock = threading.Lock()
        self.outstanding = set()
        self.returned = 0
        self.freed = 0
        self.bad_frees = []
        n = self.native
        self._tool_call, self._presentation = n.hl_tool_call, n.hl_presentation
        self._guard, self._free = n.hl_bash_guard, n.hl_free
        n.hl_tool_call = self.wrap_returning(self._tool_call)
        n.hl_presentation = self.wrap_returning(self._presentation)
        n.hl_bash_guard = self.guard
        n.hl_free = self.free

    def note(self, address):
        if address:
            with self.lock:
                self.returned += 1
                self.outstanding.add(address)

    def wrap_returning(self, fn):
        def wrapper(*args):
            address = fn(*args)
            self.note(address)
            return address

        return wrapper

    def guard(self, session, command, reason_ref):
        verdict = self._guard(session, command, reason_ref)
        self.note(reason_ref._obj.value)
        return verdict

    def free(self, address):
        with self.lock:
            if address in self.outstanding:
                self.outstanding.remove(address)
                self.freed += 1
            else:
                self.bad_frees.append(address)
        self._free(address)


def mixed_calls(link, n):
    for i in range(n):
        with link.session(f"mem-{n}-{i}") as s:
            s.presentation("deferred")
            s.bash_guard("herdr agent wait reviewer")  # dormant: no reason string
            s.tool_call("herdr_link")
            s.presentation("mcp", catalog=True)
            s.bash_guard("herdr agent wait reviewer")
            s.bash_guard("herdr agent prompt reviewer hi --wait")
            s.bash_guard("ls")
            s.tool_call("herdr_link_peers")
            for bad in (lambda: s.tool_call("nope"), lambda: s.presentation("nope"),
                        lambda: s.tool_call("herdr_link_close", {"agent": "ghost"})):
                try:
                    bad()
                except (LinkError, ValueError):
                    pass
            link.call_raw("{broken")


class FreedExactlyOnce(unittest.TestCase):
    def setUp(self):
        self.world = World()
        self.addCleanup(self.world.close)

    def test_every_returned_string_is_freed(self):
        link = herdr_link.Link(support.LIB_PATH)
        ledger = Ledger(link)
        mixed_calls(link, 30)
        self.assertGreater(ledger.returned, 30 * 9)
        self.assertEqual(ledger.bad_frees, [])
        self.assertEqual(ledger.outstanding, set())
        self.assertEqual(ledger.freed, ledger.returned)

    def test_freed_even_when_decoding_fails(self):
        link = herdr_link.Link(support.LIB_PATH)
        ledger = Ledger(link)
        real_string_at = ctypes.string_at

        def broken(*args):
            raise MemoryError("simulated")

        ctypes.string_at = broken
        try:
            with self.assertRaises(MemoryError):
                link.presentation("s", "deferred")
        finally:
            ctypes.string_at = real_string_at
        self.assertEqual((ledger.returned, ledger.freed, ledger.outstanding), (1, 1, set()))


def rss_bytes():
    if sys.platform.startswith("linux"):
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    import resource

    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


class FlatMemory(unittest.TestCase):
    def test_ten_thousand_calls_keep_rss_flat(self):
        # Only calls that never run the fake Herdr: presentation, activation, INVALID_REQUEST.
        world = World()
        self.addCleanup(world.close)
        link = support.link()
        s = link.session("rss").start()
        self.addCleanup(s.end)
        s.tool_call("herdr_link")
        doc_size = len(str(link.presentation("rss", "deferred", catalog=True)))

        def loop(n):
            for _ in range(n):
                link.presentation("rss", "deferred", catalog=True)
                link.call_raw('{"session":"rss","tool":"herdr_link"}')
                try:
                    link.tool_call("rss", "no_such_tool")
                except ValueError:
                    pass

        loop(1000)  # warm up allocator pools
        before = rss_bytes()
        loop(10000)
        grown = rss_bytes() - before
        leaked_if_unfreed = 10000 * doc_size
        self.assertGreater(leaked_if_unfreed, 32 << 20, "the test would not notice a leak")
        self.assertLess(grown, 8 << 20, f"RSS grew by {grown} bytes over 10,000 calls")


if __name__ == "__main__":
    unittest.main()
