import { Tokenizer } from './tokenizer';

describe('Tokenizer', () => {
  const tokenizer = new Tokenizer(['P', '_', 'O', 'G', '\n'], ['Up', 'Down', 'Left', 'Right']);

  it('splits a grid and a response by longest match, ignoring spaces', () => {
    const ids = tokenizer.encode('P_\nOG');
    expect(ids.map((i) => tokenizer.tokens[i])).toEqual(['P', '_', '\n', 'O', 'G']);
    const response = tokenizer.encode('<think> t1 </think><answer>Up || Left</answer>');
    expect(response.map((i) => tokenizer.tokens[i])).toEqual(['<think>', 't1', '</think>', '<answer>', 'Up', '||', 'Left', '</answer>']);
  });

  it('round-trips through decode', () => {
    const text = '<answer> Down || Right </answer>';
    expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    const grid = 'P_\nOG';
    expect(tokenizer.encode(tokenizer.decode(tokenizer.encode(grid)))).toEqual(tokenizer.encode(grid));
  });

  it('maps unknown characters to <unk> and forbids padding, start and unknown as outputs', () => {
    expect(tokenizer.encode('P?').map((i) => tokenizer.tokens[i])).toEqual(['P', '<unk>']);
    expect(tokenizer.forbiddenIds.map((i) => tokenizer.tokens[i]).sort()).toEqual(['<bos>', '<pad>', '<unk>']);
  });

  it('rebuilds the same ids from its own token list (checkpoints store the list)', () => {
    const restored = new Tokenizer(tokenizer.tokens, []);
    expect(restored.tokens).toEqual(tokenizer.tokens);
  });
});
