import { ExperimentService } from './experiment.service';
import type { Principal } from './auth.service';

const ADMIN: Principal = { userId: '00000000-0000-4000-8000-000000000001', name: 'admin', role: 'admin', teamId: null, teamSharesJobs: false, keyId: 'k' };
const ID = '00000000-0000-4000-8000-0000000000e1';
const SPEC = { environment: { id: 'bandit', config: {} }, algorithm: { id: 'starpo-s' }, training: { seed: 1 } };

/** ExperimentService with its repositories replaced: the references' failure path. */
describe('ExperimentService references', () => {
  function service(compute: () => Promise<unknown>) {
    let references: unknown = null;
    const experiment = () => ({ id: ID, ownerId: ADMIN.userId, owner: { id: ADMIN.userId, name: 'admin', teamId: null }, name: 'x', base: {}, grid: {}, cells: [{ index: 0, key: '{}', point: {}, label: 'base', seeds: [1] }], references, createdAt: new Date(0), archivedAt: null, purgedAt: null });
    const rows = {
      findById: jest.fn(async () => experiment()),
      jobsOf: jest.fn(async () => [{ id: 'j1', name: 'x-c1-s1', status: 'succeeded', spec: SPEC, currentStep: 2, totalSteps: 2, experimentCell: 0, archivedAt: null, experimentId: ID }]),
      endpointReadings: jest.fn(async () => []),
      setReferences: jest.fn(async (_id: string, value: unknown) => {
        references = value;
      }),
    };
    const svc = new ExperimentService(rows as never, {} as never, {} as never, {} as never, { compute } as never, { scheduling: { maxQueuedJobs: 100 } } as never, { definitionFor: async () => undefined, registrationFor: async () => null } as never);
    return { svc, rows };
  }

  it('reads "computing" while the child computes, then stores and serves them', async () => {
    const { svc, rows } = service(async () => [{ random: 0.5, optimal: null, expert: null }]);
    expect((await svc.get(ADMIN, ID)).references).toBe('computing');
    await svc.idle();
    expect(rows.setReferences).toHaveBeenCalledWith(ID, { '{}': { random: 0.5, optimal: null, expert: null } });
    const after = await svc.get(ADMIN, ID);
    expect([after.references, after.cells[0].random]).toEqual(['ready', 0.5]);
  });

  it('marks them failed when the child fails, and still serves the table', async () => {
    const { svc, rows } = service(async () => {
      throw new Error('references process exited (SIGKILL)');
    });
    await svc.get(ADMIN, ID);
    await svc.idle();
    expect(rows.setReferences).toHaveBeenCalledWith(ID, { '{}': { error: 'references process exited (SIGKILL)' } });
    const after = await svc.get(ADMIN, ID);
    expect([after.references, after.cells[0].random, after.cells[0].runs[0].jobId]).toEqual(['failed', null, 'j1']);
  });
});
