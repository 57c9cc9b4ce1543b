#!/usr/bin/env python3
"""ci/rerun_commands.py reads the documented commands and lines, and fails
a run whose line is not the documented one.

Run: python3 -m unittest discover -s ci -p 'test_*.py' (in .ci/run).
"""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rerun_commands  # noqa: E402

LINE = ("model queue::steal_races_pop_of_last_item backend=loom tier=pr preemption_bound=none "
        "executions=8 time=...s reached[thief_took_last_item=3 owner_popped_last_item=5] "
        "real_time_pass[preemption_bound=none executions=25 time=...s histories_checked=25]")
COMMAND = ('RUSTFLAGS="--cfg loom" cargo test --release --test models -- --exact '
           "queue::steal_races_pop_of_last_item")
EVIDENCE = f"""# Evidence

## Invariants

### Q-1

- [`queue::steal_races_pop_of_last_item`](#x): loom complete in scope: each model's own scenario; full

## Tests

### `queue::steal_races_pop_of_last_item`

```sh
{COMMAND}
```

prints:

```text
{LINE}
```

### `queue::prop_steal`

```sh
cargo test --test proptests -- --exact queue::prop_steal
```
"""


class Entries(unittest.TestCase):
    def test_an_entry_is_its_command_and_its_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "queue.md"
            path.write_text(EVIDENCE)
            found = rerun_commands.entries([path])
        self.assertEqual([(e.name, e.command, e.expected) for e in found],
                         [("queue::steal_races_pop_of_last_item", COMMAND, LINE),
                          ("queue::prop_steal",
                           "cargo test --test proptests -- --exact queue::prop_steal", None)])
        self.assertEqual((found[0].tier, found[0].kind()), ("pr", "complete"))


class Compare(unittest.TestCase):
    entry = rerun_commands.Entry("queue::steal_races_pop_of_last_item", COMMAND, LINE)

    def printed(self, line):
        return f"running 1 test\n{line}\ntest queue::steal_races_pop_of_last_item ... ok\n"

    def test_the_documented_line_passes_whatever_its_times(self):
        line = LINE.replace("time=...s", "time=0.01s", 1).replace("time=...s", "time=0.02s")
        self.assertEqual(rerun_commands.compare(self.entry, self.printed(line), 0), [])

    def test_another_count_fails(self):
        line = LINE.replace("executions=8 ", "executions=9 ")
        self.assertEqual(len(rerun_commands.compare(self.entry, self.printed(line), 0)), 1)

    def test_another_setting_fails(self):
        line = LINE.replace("preemption_bound=none executions=8", "preemption_bound=3 executions=8")
        self.assertEqual(len(rerun_commands.compare(self.entry, self.printed(line), 0)), 1)

    def test_no_line_or_a_failed_command_fails(self):
        self.assertEqual(len(rerun_commands.compare(self.entry, "error: no such test", 0)), 1)
        self.assertEqual(len(rerun_commands.compare(self.entry, self.printed(LINE), 101)), 1)

    def test_the_audit_runs_line_is_not_the_models(self):
        audit = LINE.replace("tier=pr ", "tier=pr accesses=all-read-modify-write ")
        self.assertEqual(rerun_commands.compare(self.entry, self.printed(LINE) + audit, 0), [])


if __name__ == "__main__":
    unittest.main()
