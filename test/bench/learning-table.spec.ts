import { COLUMNS, ROWS, SERVED_COLUMNS, SERVED_ROWS, columnsOf, specOf, runKey, withoutAddress } from '../../bench/learning-table';

/** Which runs the learning table trains for a row: a served row only the columns it names. */
describe('bench/learning-table rows and columns', () => {
  const guess = SERVED_ROWS.find((row) => row.name === 'guess-number')!;

  it('runs the example game from each warm-up with the default job (and the lever that became its default), three seeds, over its server’s address', () => {
    expect(columnsOf(guess).map((c) => [c.name, c.overrides, c.seeds])).toEqual([
      ['demonstrations/starpo-s', {}, [1, 2, 3]],
      ['format/starpo-s/default', {}, [1, 2, 3]],
      ['format/starpo-s/one action per turn', { rollout: { maxActionsPerTurn: 1 } }, [1, 2, 3]],
    ]);
    expect(guess.serve).toEqual(['python3', 'examples/environments/guess_number_server.py', '--port', '18765']);
    const spec = specOf(runKey(guess, columnsOf(guess)[1], 2));
    expect(spec.environment).toEqual({ id: 'http', config: { url: 'http://127.0.0.1:18765' } });
    expect(spec.algorithm).toEqual({ id: 'starpo-s' });
    expect(withoutAddress(spec).environment).toEqual({ id: 'http' });
  });

  it('keeps the built-in rows on COLUMNS: no served column, and from demonstrations only with an expert', () => {
    const bandit = ROWS.find((row) => row.name === 'bandit')!;
    const sokoban = ROWS.find((row) => row.name === 'sokoban')!;
    // Every column but those that name other rows (a curriculum's config is one environment's).
    const on = (row: string) => COLUMNS.filter((c) => !c.rows || c.rows.includes(row));
    expect(columnsOf(sokoban)).toEqual(on('sokoban'));
    expect(columnsOf(bandit)).toEqual(on('bandit').filter((c) => c.warmup === 'format'));
    expect(on('bandit').length).toBeLessThan(on('sokoban').length);
    const slippery = ROWS.find((row) => row.name === 'frozenlake-slippery')!;
    expect(columnsOf(slippery).filter((c) => c.rows).every((c) => c.rows!.includes('frozenlake-slippery'))).toBe(true);
    expect(columnsOf(slippery).some((c) => c.rows)).toBe(true);
    for (const row of ROWS) expect(columnsOf(row).some((c) => SERVED_COLUMNS.includes(c))).toBe(false);
  });
});
