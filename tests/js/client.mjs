// The official JavaScript client against a kjobs server, with nothing but the kubeconfig kjobs wrote
// (KUBECONFIG). `node client.mjs SCENARIO NAME` runs one scenario on a Job named NAME and prints one JSON line of
// what it saw; exits 1 on error.
//   basics: list pods, create a Job, read it back, list events.k8s.io/v1 Events.
//   tty: exec `stty size` in the Job's running container with a terminal whose size the client sends (stdout a
//        stream with rows/columns, as process.stdout is on a terminal), then again after a resize.
//   jsonpatch: the client's default patch type (JSON patch) on a suspended Job: replace a label it does not
//        have yet, then a `test` that fails (the error's code and body).
//   microtime: Leases NAME-date and NAME-micro whose renewTime is a plain Date (serialized with three fraction
//        digits) and the client's V1MicroTime (six); an Event NAME whose firstTimestamp (a Time) is a Date.
import * as k8s from '@kubernetes/client-node';
import { PassThrough } from 'node:stream';

const kc = new k8s.KubeConfig();
kc.loadFromDefault();
const core = kc.makeApiClient(k8s.CoreV1Api);
const batch = kc.makeApiClient(k8s.BatchV1Api);
const events = kc.makeApiClient(k8s.EventsV1Api);
const namespace = 'default';
const [scenario, name] = process.argv.slice(2);

function job(command) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command }] } },
    },
  };
}

async function basics() {
  const pods = await core.listNamespacedPod({ namespace });
  await batch.createNamespacedJob({ namespace, body: job(['true']) });
  const created = await batch.readNamespacedJob({ namespace, name });
  const eventList = await events.listNamespacedEvent({ namespace });
  return {
    pods: pods.items.length,
    job: created.metadata.name,
    backoffLimit: created.spec.backoffLimit,
    events: eventList.apiVersion,
  };
}

async function runningPod() {
  for (;;) {
    const pods = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${name}` });
    const pod = pods.items.find((p) => p.status?.phase === 'Running');
    if (pod) return pod.metadata.name;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Runs `command` with a tty whose size is `rows` x `columns`; `then(stdout)` may resize it meanwhile.
async function withTerminal(pod, command, rows, columns, then = () => {}) {
  const stdout = new PassThrough();
  Object.assign(stdout, { rows, columns });
  let output = '';
  stdout.on('data', (chunk) => (output += chunk));
  const status = await new Promise((resolve, reject) => {
    const exec = new k8s.Exec(kc).exec(namespace, pod, 'main', command, stdout, null, null, true, resolve);
    exec.then(() => then(stdout), reject);
  });
  return { output: output.trim(), status: status.status };
}

async function tty() {
  await batch.createNamespacedJob({ namespace, body: job(['sleep', '60']) });
  const pod = await runningPod();
  // Each command waits (at most 20 s) for a size other than `not`, so a loaded machine that delivers the client's
  // size late still shows whether it arrived: a size that never comes leaves the one before.
  const until = (not) =>
    ['sh', '-c', `i=0; while [ "$(stty size)" = "${not}" ] && [ $i -lt 400 ]; do i=$((i+1)); sleep 0.05; done; stty size`];
  const first = await withTerminal(pod, until('0 0'), 30, 100);
  const resized = await withTerminal(pod, until('30 100'), 30, 100, (stdout) => {
    Object.assign(stdout, { rows: 40, columns: 120 });
    stdout.emit('resize');
  });
  return { first, resized };
}

async function jsonpatch() {
  const body = job(['true']);
  body.spec.suspend = true;
  await batch.createNamespacedJob({ namespace, body });
  const patched = await batch.patchNamespacedJob({
    namespace,
    name,
    body: [{ op: 'replace', path: '/metadata/labels/team', value: 'batch' }],
  });
  let failed = null;
  try {
    await batch.patchNamespacedJob({ namespace, name, body: [{ op: 'test', path: '/spec/parallelism', value: 5 }] });
  } catch (err) {
    failed = { code: err.code, body: JSON.parse(err.body) };
  }
  return { team: patched.metadata.labels.team, failed };
}

async function microtime() {
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const moment = Date.UTC(2026, 11, 5, 7, 49, 50, 143);
  const lease = (suffix, renewTime) => ({ metadata: { name: `${name}-${suffix}` }, spec: { holderIdentity: 'js', renewTime } });
  let refused = null;
  try {
    await coordination.createNamespacedLease({ namespace, body: lease('date', new Date(moment)) });
  } catch (err) {
    refused = { code: err.code, message: JSON.parse(err.body).message };
  }
  const created = await coordination.createNamespacedLease({ namespace, body: lease('micro', new k8s.V1MicroTime(moment)) });
  const involvedObject = { kind: 'Pod', namespace, name: 'somepod' };
  const event = await core.createNamespacedEvent({
    namespace,
    body: { metadata: { name }, involvedObject, reason: 'Tested', message: 'hi', type: 'Normal', count: 1, firstTimestamp: new Date(moment) },
  });
  return { refused, renewTime: created.spec.renewTime, firstTimestamp: event.firstTimestamp.toISOString() };
}

try {
  const scenarios = { basics, tty, jsonpatch, microtime };
  console.log(JSON.stringify(await scenarios[scenario]()));
} catch (err) {
  console.error(String(err?.body ? JSON.stringify(err.body) : err));
  process.exit(1);
}
