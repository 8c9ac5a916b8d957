"""Child process for the kill -9 test: writes pods from several threads and prints each acknowledged write.

Usage: `python writer_child.py DATA_DIR THREADS`. Each line on stdout is `<resourceVersion> <name>`, printed
(and flushed) only after the store acknowledged the write, so the parent knows exactly what was promised.
Runs until killed.
"""

from __future__ import annotations

import sys
import threading

from kjobs.store import open_store


def main() -> None:
    data_dir, threads = sys.argv[1], int(sys.argv[2])
    store = open_store(data_dir)
    out = threading.Lock()
    print("ready", flush=True)

    def write(worker: int) -> None:
        i = 0
        while True:
            name = f"w{worker}-{i}"
            obj = {"kind": "Pod", "metadata": {"name": name, "namespace": "ns"}, "spec": {"pad": "x" * 3000}}
            if i % 3 == 2:  # mix in CAS updates of an earlier object
                prev = f"w{worker}-{i - 1}"
                cur = store.get("pods", "ns", prev)
                cur["spec"]["pad"] = "y" * 3000
                done = store.update("pods", "ns", prev, cur, expected_rv=cur["metadata"]["resourceVersion"])
                name = prev
            else:
                done = store.create("pods", "ns", name, obj)
            with out:
                sys.stdout.write(f"{done['metadata']['resourceVersion']} {name}\n")
                sys.stdout.flush()
            i += 1

    for worker in range(threads):
        threading.Thread(target=write, args=(worker,), daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
