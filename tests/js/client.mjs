// The official JavaScript client against a kjobs server, with nothing but the kubeconfig kjobs wrote
// (KUBECONFIG): list pods, create a Job, read it back, list events.k8s.io/v1 Events. Prints one JSON line of what it saw; exits 1 on error.
import * as k8s from '@kubernetes/client-node';

const kc = new k8s.KubeConfig();
kc.loadFromDefault();
const core = kc.makeApiClient(k8s.CoreV1Api);
const batch = kc.makeApiClient(k8s.BatchV1Api);
const events = kc.makeApiClient(k8s.EventsV1Api);
const namespace = 'default';
const name = process.argv[2] ?? 'js-job';

try {
  const pods = await core.listNamespacedPod({ namespace });
  await batch.createNamespacedJob({
    namespace,
    body: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name },
      spec: {
        template: {
          spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['true'] }] },
        },
      },
    },
  });
  const job = await batch.readNamespacedJob({ namespace, name });
  const eventList = await events.listNamespacedEvent({ namespace });
  console.log(
    JSON.stringify({
      pods: pods.items.length,
      job: job.metadata.name,
      backoffLimit: job.spec.backoffLimit,
      events: eventList.apiVersion,
    }),
  );
} catch (err) {
  console.error(String(err?.body ? JSON.stringify(err.body) : err));
  process.exit(1);
}
