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
//   tour: what a user of the client's README and examples does (2.x, over undici's fetch): a list over 128 KiB
//        (gzipped), a Watch from a compacted resourceVersion (run with --history-size 5), an Informer with a
//        label selector, a sendInitialEvents watch's bookmark, the patch types, `Log` followed to the container's
//        end, `Exec` (exit code, stdin), the Metrics API, cordon, an Eviction, KubernetesObjectApi from YAML.
import * as k8s from '@kubernetes/client-node';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

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

async function podOf(jobName, phases = ['Running']) {
  for (;;) {
    const pods = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${jobName}` });
    const pod = pods.items.find((p) => phases.includes(p.status?.phase));
    if (pod) return pod.metadata.name;
    await sleep(100);
  }
}

async function captured(run) {
  let text = '';
  const sink = new PassThrough();
  sink.on('data', (chunk) => (text += chunk));
  const ended = new Promise((resolve) => sink.on('end', resolve));
  const result = await run(sink);
  return { text: () => text, ended, result };
}

// Resolves with what `done` is called with, and the events seen meanwhile.
function watched(path, query, until = () => false) {
  const seen = [];
  let controller;
  const done = new Promise((resolve) => {
    const callback = (type, obj) => {
      seen.push({ type, name: obj.metadata?.name ?? '', code: obj.code, reason: obj.reason, annotations: obj.metadata?.annotations });
      if (until(type, obj)) controller?.abort();
    };
    new k8s.Watch(kc).watch(path, query, callback, (err) => resolve(err ? err.name : null)).then((c) => (controller = c));
  });
  return done.then((end) => ({ seen, end }));
}

async function tour() {
  const out = {};
  const configmaps = `/api/v1/namespaces/${namespace}/configmaps`;
  const big = (i) => ({ metadata: { name: `${name}-big-${i}`, labels: { tour: name } }, data: { v: 'x'.repeat(40000) } });

  // A Watch from a resourceVersion the store no longer has (--history-size 5): one ERROR event, 410 Expired
  const listed = await core.listNamespacedConfigMap({ namespace });
  for (let i = 0; i < 4; i++) await core.createNamespacedConfigMap({ namespace, body: big(i) });
  for (let i = 0; i < 6; i++) await core.patchNamespacedConfigMap({ namespace, name: `${name}-big-0`, body: { metadata: { annotations: { n: `${i}` } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  const expired = await watched(configmaps, { resourceVersion: listed.metadata.resourceVersion });
  out.expired = { events: expired.seen.map((e) => `${e.type} ${e.code} ${e.reason}`), end: expired.end };

  // the four 40 kB ConfigMaps list to 160 kB: gzipped by the server, inflated by undici
  const list = await core.listNamespacedConfigMapWithHttpInfo({ namespace, labelSelector: `tour=${name}` });
  out.list = { encoding: list.headers['content-encoding'], items: list.data.items.length };

  // sendInitialEvents: the initial ADDED events, then the bookmark that ends them
  const initial = await watched(configmaps, { labelSelector: `tour=${name}`, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true }, (type) => type === 'BOOKMARK');
  out.initial = initial.seen.map((e) => (e.type === 'BOOKMARK' ? `BOOKMARK ${e.annotations?.['k8s.io/initial-events-end']}` : e.type));

  // an Informer on the Job's pods, by label, started before the Job
  const informed = [];
  const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`, () => core.listNamespacedPod({ namespace, labelSelector: `tour=${name}` }), `tour=${name}`);
  for (const verb of ['add', 'update', 'delete', 'error']) informer.on(verb, (obj) => informed.push(verb === 'error' ? `error ${obj}` : verb));
  await informer.start();

  // `main` runs on while `printer` prints three lines and ends
  const body = job(['sleep', '60']);
  body.spec.template.metadata = { labels: { tour: name } };
  body.spec.template.spec.terminationGracePeriodSeconds = 1;
  const printer = ['sh', '-c', 'for i in 1 2 3; do echo line$i; sleep 0.2; done'];
  body.spec.template.spec.containers.push({ name: 'printer', image: 'busybox', command: printer });
  await batch.createNamespacedJob({ namespace, body });
  const pod = await podOf(name);

  // Log followed until the server ends it with the container (an abort() of a followed log throws, in 2.0.1,
  // from a stream it gave no error handler: an uncaught AbortError)
  const followed = await captured((sink) => new k8s.Log(kc).log(namespace, pod, 'printer', sink, { follow: true }));
  await followed.ended;
  out.followed = followed.text();

  // Exec: a command's exit code as a NonZeroExitCode Status, stdin to `cat` ended by the client
  const failed = await captured((sink) => new Promise((resolve, reject) => new k8s.Exec(kc).exec(namespace, pod, 'main', ['sh', '-c', 'echo hi; exit 3'], sink, null, null, false, resolve).catch(reject)));
  out.exec = { stdout: failed.text(), reason: failed.result.reason, exitCode: failed.result.details?.causes?.[0]?.message };
  const stdin = new PassThrough();
  const piped = await captured((sink) => new Promise((resolve, reject) => new k8s.Exec(kc).exec(namespace, pod, 'main', ['cat'], sink, null, stdin, false, resolve).then(() => stdin.end('piped\n'), reject)));
  out.stdin = { stdout: piped.text(), status: piped.result.status };

  // the Metrics API (as metrics-server serves it): the running pod, once it has figures
  for (let i = 0; i < 200 && !out.metrics; i++) {
    const metrics = await new k8s.Metrics(kc).getPodMetrics(namespace);
    const mine = metrics.items.find((m) => m.metadata.name === pod);
    if (mine) out.metrics = { kind: metrics.kind, main: typeof mine.containers.find((c) => c.name === 'main')?.usage.cpu };
    else await sleep(100);
  }

  // patches, each content type through setHeaderOptions
  const patch = (type, patchBody, extra = {}) => batch.patchNamespacedJob({ namespace, name, body: patchBody, ...extra }, k8s.setHeaderOptions('Content-Type', type));
  await patch(k8s.PatchStrategy.MergePatch, { metadata: { labels: { merge: '1' } } });
  await patch(k8s.PatchStrategy.StrategicMergePatch, { metadata: { labels: { strategic: '1' } } });
  await patch(k8s.PatchStrategy.JsonPatch, [{ op: 'add', path: '/metadata/labels/json', value: '1' }]);
  const applied = await patch(k8s.PatchStrategy.ServerSideApply, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, labels: { apply: '1' } } }, { fieldManager: 'tour', force: true });
  out.labels = Object.keys(applied.metadata.labels).filter((key) => !key.includes('/') && !key.includes('-'));
  out.managers = applied.metadata.managedFields.map((f) => `${f.manager}/${f.operation}`).sort();

  // cordon the pod's node, evict the pod (DisruptionTarget, then the Job replaces it), uncordon
  const node = (await core.readNamespacedPod({ namespace, name: pod })).spec.nodeName;
  const cordoned = await core.patchNode({ name: node, body: { spec: { unschedulable: true } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch));
  await core.createNamespacedPodEviction({ namespace, name: pod, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace } } });
  const evicted = await core.readNamespacedPod({ namespace, name: pod });
  await core.patchNode({ name: node, body: { spec: { unschedulable: null } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  out.evicted = { unschedulable: cordoned.spec.unschedulable, deleting: Boolean(evicted.metadata.deletionTimestamp), conditions: evicted.status.conditions.filter((c) => c.type === 'DisruptionTarget').map((c) => c.reason) };
  for (let i = 0; i < 100 && !informed.includes('delete'); i++) await sleep(100);
  await informer.stop();
  out.informed = [...new Set(informed)].sort();

  // KubernetesObjectApi (discovery) from YAML: create, read, patch (strategic by default), delete in the foreground
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const spec = k8s.loadYaml(`apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: ${name}-yaml\n  namespace: ${namespace}\nspec:\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: busybox\n        command: ["true"]\n`);
  const ref = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: `${name}-yaml`, namespace } };
  const made = await objects.create(spec);
  const read = await objects.read(ref);
  const patched = await objects.patch({ ...ref, metadata: { ...ref.metadata, labels: { yaml: '1' } } });
  const deleted = await objects.delete(ref, undefined, undefined, undefined, undefined, 'Foreground');
  out.objects = { made: made.constructor.name, read: read.spec.suspend, label: patched.metadata.labels.yaml, deleted: deleted.kind };
  return out;
}

try {
  const scenarios = { basics, tty, jsonpatch, microtime, tour };
  console.log(JSON.stringify(await scenarios[scenario]()));
} catch (err) {
  console.error(String(err?.body ? JSON.stringify(err.body) : err));
  process.exit(1);
}
