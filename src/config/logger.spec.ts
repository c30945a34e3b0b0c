import { ServiceLogger } from './logger';

/** An ANSI escape sequence (ESC [ … m), as colours are written. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[\\d*m`);

/** What the logger writes, with process.stdout captured. */
function written(logger: ServiceLogger, message: string): string {
  const chunks: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (chunks.push(String(chunk)), true));
  try {
    logger.log(message, 'JobService');
  } finally {
    write.mockRestore();
  }
  return chunks.join('');
}

describe('ServiceLogger', () => {
  const noColor = process.env.NO_COLOR;
  afterEach(() => (noColor === undefined ? delete process.env.NO_COLOR : (process.env.NO_COLOR = noColor)));

  it('writes plain lines when its output is not a terminal, coloured ones on a terminal', () => {
    delete process.env.NO_COLOR;
    const plain = written(new ServiceLogger('log', false), 'job 1 submitted');
    expect(plain).toContain('[JobService] job 1 submitted');
    expect(plain).not.toMatch(ANSI);
    expect(written(new ServiceLogger('log', true), 'job 1 submitted')).toMatch(ANSI);
  });

  it('is plain on a terminal too when NO_COLOR is set', () => {
    process.env.NO_COLOR = '1';
    expect(written(new ServiceLogger('log', true), 'job 1 submitted')).not.toMatch(ANSI);
  });

  it('takes its default from whether standard output is a terminal', () => {
    delete process.env.NO_COLOR;
    const tty = process.stdout.isTTY;
    try {
      Object.defineProperty(process.stdout, 'isTTY', { value: false, configurable: true });
      expect(written(new ServiceLogger('log'), 'to a file')).not.toMatch(ANSI);
    } finally {
      Object.defineProperty(process.stdout, 'isTTY', { value: tty, configurable: true });
    }
  });
});
