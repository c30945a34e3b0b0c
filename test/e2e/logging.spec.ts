import { TestStack } from '../support/stack';

/** What an operator sees when the API starts: its own lines, not one line per mapped route. */
describe('API process logs', () => {
  const start = async (apiEnv: Record<string, string>) => {
    const stack = new TestStack({ api: 'process', apiEnv });
    await stack.start();
    await stack.request('GET', '/v1/jobs');
    return stack;
  };

  it('are quiet about framework start-up and route mapping by default', async () => {
    const stack = await start({});
    try {
      await stack.stopApi();
      const output = stack.api!.output;
      expect(output).toContain('StarLab API listening on');
      expect(output).not.toMatch(/RouterExplorer|RoutesResolver|InstanceLoader|Mapped \{/);
      expect(output).not.toContain('DEBUG');
    } finally {
      await stack.stop();
    }
  }, 60_000);

  it('show them with STARLAB_LOG_LEVEL=debug', async () => {
    const stack = await start({ STARLAB_LOG_LEVEL: 'debug' });
    try {
      await stack.stopApi();
      expect(stack.api!.output).toMatch(/Mapped \{\/v1\/jobs, POST\} route/);
    } finally {
      await stack.stop();
    }
  }, 60_000);
});
