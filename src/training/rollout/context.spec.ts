import { Tokenizer } from '../policy/tokenizer';
import { ContextBuilder, HistoryTurn } from './context';

describe('ContextBuilder', () => {
  const tokenizer = new Tokenizer(['P', '_', 'G', '\n'], ['Up', 'Down']);
  const words = (ids: number[]) => ids.map((i) => tokenizer.tokens[i]).join(' ');
  const turn = (observation: string, response: string, reward: number): HistoryTurn => ({
    observation,
    responseTokens: [...tokenizer.encode(response), tokenizer.id('<eos>')],
    reward,
  });

  it('lays out history turns with their reward sign, then the current observation', () => {
    const builder = new ContextBuilder(tokenizer, 100, 5);
    const context = builder.build([turn('P_', '<answer> Up </answer>', -0.1)], '_P');
    expect(words(context)).toBe('<bos> <obs> P _ <resp> <answer> Up </answer> <r-> <obs> _ P <resp>');
  });

  it('keeps at most historyTurns past turns, newest first', () => {
    const builder = new ContextBuilder(tokenizer, 100, 1);
    const context = builder.build([turn('P_', '<answer> Up </answer>', 0), turn('_P', '<answer> Down </answer>', 1)], 'G_');
    expect(words(context)).toBe('<bos> <obs> _ P <resp> <answer> Down </answer> <r+> <obs> G _ <resp>');
  });

  it('drops the oldest turns that do not fit the budget', () => {
    const history = [turn('P_', '<answer> Up </answer>', 0), turn('_P', '<answer> Down </answer>', 0)];
    // <bos> + current block (<obs> G _ <resp>: 4) + one history block (8) = 13; two would need 21.
    const builder = new ContextBuilder(tokenizer, 20, 5);
    const context = builder.build(history, 'G_');
    expect(context.length).toBe(1 + 8 + 4);
    expect(words(context)).toBe('<bos> <obs> _ P <resp> <answer> Down </answer> <r0> <obs> G _ <resp>');
  });

  it('cuts the oldest tokens of an observation that alone exceeds the budget, never throwing', () => {
    const builder = new ContextBuilder(tokenizer, 6, 5);
    const context = builder.build([], 'P_G_\n__');
    expect(context.length).toBe(6);
    expect(words(context)).toBe('<bos> _ \n _ _ <resp>');
  });
});
