/**
 * A client as a user would write it: types generated from openapi.yaml by openapi-typescript,
 * calls through openapi-fetch. `npm run client:check` generates the types (into a gitignored
 * folder) and type-checks this file, so a contract that stops describing what a client sends or
 * reads fails CI. It is compiled, never run.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/starlab-api';

type Job = components['schemas']['Job'];
type Problem = components['schemas']['Problem'];

export async function submitAndFollow(baseUrl: string, apiKey: string): Promise<Job | Problem> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

  const submitted = await client.POST('/v1/jobs', {
    params: { header: { 'Idempotency-Key': 'nightly-bandit-1' } },
    body: { environment: { id: 'bandit', config: { variant: 'alt' } }, algorithm: { id: 'starpo-s' }, training: { steps: 20 } },
  });
  if (submitted.error) return submitted.error satisfies Problem;
  const job: Job = submitted.data;

  const page = await client.GET('/v1/jobs', { params: { query: { status: 'running', limit: 10 } } });
  const names: string[] = page.data?.data.map((j) => j.name) ?? [];
  const cursor: string | null | undefined = page.data?.next_cursor;

  const metrics = await client.GET('/v1/jobs/{id}/metrics', { params: { path: { id: job.id }, query: { names: 'success/rate', from: 0 } } });
  const rates = metrics.data?.data.map((row) => row.metrics['success/rate']);

  const evaluation = await client.POST('/v1/jobs/{id}/evaluations', {
    params: { path: { id: job.id } },
    body: { environment: { id: 'frozenlake', config: { slippery: true } }, episodes: 64, k: 4 },
  });
  const passAtK: number | null | undefined = evaluation.data?.passAtK;

  const fork = await client.POST('/v1/jobs/{id}/fork', { params: { path: { id: job.id } }, body: { overrides: { training: { learningRate: 0.0005, steps: 40 } } } });
  const rolledBack = await client.POST('/v1/jobs/{id}/rollback', { params: { path: { id: job.id } }, body: {} });

  // @ts-expect-error: environment ids are the registry's, not any string
  await client.POST('/v1/jobs', { body: { environment: { id: 'cartpole' }, algorithm: { id: 'starpo-s' } } });
  // @ts-expect-error: the job id is a path parameter the client must give
  await client.GET('/v1/jobs/{id}', {});

  void [names, cursor, rates, passAtK, fork.data?.id, rolledBack.data?.status];
  const final = await client.GET('/v1/jobs/{id}', { params: { path: { id: job.id } } });
  return final.data ?? (final.error as Problem);
}
