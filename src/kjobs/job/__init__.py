"""The Job controller's semantics as pure functions: classify pods, decide, plan writes.

`sync.plan_sync` is the heart: from (job, pods, now, bookkeeping) it returns the pod creations and deletions to
make and, once their outcome is known, the status writes and finalizer removals (`tracking.plan_tracking`).
Nothing here performs I/O; `execute` runs a plan against a pod-control and status-writer seam.
"""
