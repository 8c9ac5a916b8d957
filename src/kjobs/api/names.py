"""Well-known Kubernetes names used by the Job machinery (labels, annotations, finalizers, conditions)."""

JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
JOB_COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
JOB_INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-ignored-failure-count"
JOB_COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"

# Pod condition set by every component that terminates a pod on purpose.
DISRUPTION_TARGET = "DisruptionTarget"

# Job condition types.
COND_COMPLETE = "Complete"
COND_FAILED = "Failed"
COND_FAILURE_TARGET = "FailureTarget"
COND_SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"
COND_SUSPENDED = "Suspended"

MAX_INT32 = 2147483647
