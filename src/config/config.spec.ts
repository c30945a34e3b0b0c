import { ConfigError, loadConfig } from './config';

describe('loadConfig: STARLAB_LOG_LEVEL', () => {
  it('defaults to log and accepts the named levels', () => {
    expect(loadConfig({}).logLevel).toBe('log');
    expect(loadConfig({ STARLAB_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
  });

  it('names the variable and the allowed values when it is wrong', () => {
    expect(() => loadConfig({ STARLAB_LOG_LEVEL: 'chatty' })).toThrow(ConfigError);
    expect(() => loadConfig({ STARLAB_LOG_LEVEL: 'chatty' })).toThrow('STARLAB_LOG_LEVEL must be one of error, warn, log, debug, verbose (got "chatty")');
  });
});
