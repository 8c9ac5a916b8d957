"""The Job controller's Prometheus metrics, with Kubernetes' names, help texts and labels
(pkg/controller/job/metrics/metrics.go), plus kjobs' own under the `kjobs_` prefix.

Each help text starts with the metric's stability level in brackets, as component-base writes it
(`annotateStabilityLevel` in staging/src/k8s.io/component-base/metrics/opts.go: ALPHA unless the metric says).

Each controller instance owns a `JobMetrics` on its own registry (tests and `kjobs run` get a fresh one;
`kjobs up` serves the default one at /metrics).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from kjobs.api.types import Obj
from kjobs.job.context import completion_mode, has_backoff_limit_per_index, is_indexed
from kjobs.job.intervals import count_indexes
from kjobs.job.status import counter
from kjobs.metrictally import Deferred

_NS = "job_controller"


class JobMetrics:
    """All job_controller_* metrics registered on one registry."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        reg = self.registry
        self.sync_duration = Histogram(
            "job_sync_duration_seconds",
            "[STABLE] The time it took to sync a job",
            ["completion_mode", "result", "action"],
            namespace=_NS,
            registry=reg,
            buckets=[0.004 * 2**i for i in range(15)],
        )
        self.syncs = Counter(
            "job_syncs",
            "[STABLE] The number of job syncs",
            ["completion_mode", "result", "action"],
            namespace=_NS,
            registry=reg,
        )
        self.jobs_finished = Counter(
            "jobs_finished",
            "[STABLE] The number of finished jobs",
            ["completion_mode", "result", "reason"],
            namespace=_NS,
            registry=reg,
        )
        self.pods_finished = Counter(
            "job_pods_finished",
            "[STABLE] The number of finished Pods that are fully tracked",
            ["completion_mode", "result"],
            namespace=_NS,
            registry=reg,
        )
        self.pod_failures_handled = Counter(
            "pod_failures_handled_by_failure_policy",
            "[BETA] The number of failed Pods handled by failure policy with respect to the failure policy action "
            "applied based on the matched rule. Possible values of the action label correspond to the possible "
            'values for the failure policy rule action, which are: "FailJob", "Ignore" and "Count".',
            ["action"],
            namespace=_NS,
            registry=reg,
        )
        self.policy_decisions = Counter(
            "kjobs_job_pod_failure_policy_decisions",
            "The number of failed Pods the Job controller accounted for, by the podFailurePolicy action decided "
            '(FailJob, FailIndex, Ignore, Count, or "NoRuleMatched", "NoPolicy") and the rule that matched (its '
            'name, else its index, else "none"). kjobs-specific; see kjobs.job.decisions.',
            ["action", "rule"],
            registry=reg,
        )
        self.tracking_finalizer = Counter(
            "terminated_pods_tracking_finalizer",
            "[BETA] The number of terminated pods (phase=Failed|Succeeded) that have the finalizer "
            'batch.kubernetes.io/job-tracking. The event label can be "add" or "delete".',
            ["event"],
            namespace=_NS,
            registry=None,
        )
        # Counted for every terminated pod: tallied, added when collected (`kjobs.metrictally`).
        self.tracking_finalizer_counts = Deferred(self.tracking_finalizer, reg)
        self.finished_indexes = Counter(
            "job_finished_indexes",
            "[ALPHA] The number of finished indexes. Possible values for the\n\t\t\tstatus label are: "
            '"succeeded", "failed". Possible values for the\n\t\t\tbackoffLimit label are: "perIndex" and "global"',
            ["status", "backoffLimit"],
            namespace=_NS,
            registry=reg,
        )
        self.pods_creation = Counter(
            "job_pods_creation",
            "[ALPHA] The number of Pods created by the Job controller labelled with a reason for the Pod creation.\n"
            "This metric also distinguishes between Pods created using different PodReplacementPolicy settings.\n"
            'Possible values of the "reason" label are:\n"new", "recreate_terminating_or_failed", "recreate_failed".\n'
            'Possible values of the "status" label are:\n"succeeded", "failed".',
            ["reason", "status"],
            namespace=_NS,
            registry=reg,
        )
        self.by_external_controller = Counter(
            "jobs_by_external_controller",
            "[ALPHA] The number of Jobs managed by an external controller",
            ["controller_name"],
            namespace=_NS,
            registry=reg,
        )

    def value(self, name: str, labels: dict[str, str]) -> float:
        """The current value of a sample (0 when never set); `name` may omit the `_total` suffix."""
        for candidate in (name, f"{name}_total"):
            sample = self.registry.get_sample_value(candidate, labels)
            if sample is not None:
                return float(sample)
        return 0.0

    def record_pods_finished(self, job: Obj, old: Obj, new: Obj) -> None:
        """Count pods moved into the counters between two written statuses (`recordJobPodFinished`). As there, the
        `succeeded` and `failed` series (and an Indexed Job's succeeded indexes) are added to on every status write,
        by 0 if nothing finished: a scrape shows them at 0 from a Job's first status write on."""
        mode = completion_mode(job)
        if is_indexed(job):
            total = int((job.get("spec") or {}).get("completions") or 0)
            diff = 0
            if new.get("completedIndexes", "") != old.get("completedIndexes", ""):
                diff = count_indexes(new.get("completedIndexes", ""), total) - count_indexes(
                    old.get("completedIndexes", ""), total
                )
            label = "perIndex" if has_backoff_limit_per_index(job) else "global"
            self.finished_indexes.labels("succeeded", label).inc(max(diff, 0))
            if has_backoff_limit_per_index(job) and new.get("failedIndexes") != old.get("failedIndexes"):
                failed_diff = count_indexes(new.get("failedIndexes"), total) - count_indexes(
                    old.get("failedIndexes"), total
                )
                if failed_diff > 0:
                    self.finished_indexes.labels("failed", label).inc(failed_diff)
        else:
            diff = counter(new, "succeeded") - counter(old, "succeeded")
        self.pods_finished.labels(mode, "succeeded").inc(max(diff, 0))
        self.pods_finished.labels(mode, "failed").inc(max(counter(new, "failed") - counter(old, "failed"), 0))
