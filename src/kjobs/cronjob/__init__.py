"""The CronJob controller's pure core (`pkg/controller/cronjob`): when a CronJob is due (`timing`) and what its
Jobs are and which of them go (`jobs`). The controller (`kjobs.controllers.cronjob`) reads and writes."""
