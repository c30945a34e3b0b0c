// Submits a job spec through the API and follows it to the end: the service's main job, run
// by `npm run up`. Usage: node scripts/demo.js <base url> <api key> <spec.json>
const { readFileSync } = require('node:fs');

// The evaluation success series, by protocol: RAGEN's sampled evaluation first.
const EVAL_SUCCESS = ['eval/sampled/success', 'eval/greedy/success', 'eval/success'];
const evalName = (metrics) => EVAL_SUCCESS.find((name) => metrics[name] !== undefined);

async function main() {
  const [base, key, specPath] = process.argv.slice(2);
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const spec = readFileSync(specPath, 'utf8');
  const submitted = await fetch(`${base}/v1/jobs`, { method: 'POST', headers, body: spec });
  const job = await submitted.json();
  if (!submitted.ok) throw new Error(`submission failed: ${JSON.stringify(job)}`);
  console.log(`submitted ${job.name} as job ${job.id}; following ${base}/v1/jobs/${job.id}`);
  let last = -1;
  for (;;) {
    const current = await (await fetch(`${base}/v1/jobs/${job.id}`, { headers })).json();
    if (current.currentStep !== last) {
      last = current.currentStep;
      const m = current.latestMetrics ?? {};
      const show = (name) => (m[name] === undefined ? '' : ` ${name}=${m[name].toFixed(3)}`);
      console.log(`  ${current.status} step ${current.currentStep}/${current.totalSteps}${show('success/rate')}${evalName(m) ? show(evalName(m)) : ''}`);
    }
    if (['succeeded', 'failed', 'cancelled'].includes(current.status)) {
      const evals = await (await fetch(`${base}/v1/jobs/${job.id}/metrics?names=${EVAL_SUCCESS.join(',')}`, { headers })).json();
      const series = evals.data.filter((row) => evalName(row.metrics));
      console.log(`job ${current.status}; eval success by step: ${series.map((row) => `${row.step}:${row.metrics[evalName(row.metrics)].toFixed(3)}`).join('  ')}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
