import { NUMBER_HISTORY_TOKENS, Tokenizer } from '../policy/tokenizer';
import { ContextBuilder, HistoryTurn, formatHistoryNumber } from './context';

describe('ContextBuilder', () => {
  const tokenizer = new Tokenizer(['P', '_', 'G', '\n'], ['Up', 'Down'], NUMBER_HISTORY_TOKENS);
  const words = (ids: number[]) => ids.map((i) => tokenizer.tokens[i]).join(' ');
  const turn = (observation: string, response: string, reward: number, actionsLeft: number): HistoryTurn => ({
    observation,
    responseTokens: [...tokenizer.encode(response), tokenizer.id('<eos>')],
    reward,
    actionsLeft,
  });

  describe('ragen history', () => {
    it('lays out each past turn with its actions left, whole response and numeric reward', () => {
      const builder = new ContextBuilder(tokenizer, 100, 5);
      const context = builder.build([turn('P_', '<answer> Up </answer>', -0.1, 10)], '_P', 9);
      expect(words(context)).toBe('<bos> <obs> P _ <left> 1 0 <resp> <answer> Up </answer> <eos> <rwd> - 0 . 1 <obs> _ P <left> 9 <resp>');
    });

    it("extends the previous turn's context with its response: a whole episode is one sequence", () => {
      const builder = new ContextBuilder(tokenizer, 200, 20);
      const first = turn('P_', '<answer> Up || Up </answer>', 0, 10);
      const second = turn('_P', '<answer> Down </answer>', 1, 8);
      const contextOne = builder.build([], 'P_', 10);
      const contextTwo = builder.build([first], '_P', 8);
      const contextThree = builder.build([first, second], 'G_', 7);
      expect(contextTwo.slice(0, contextOne.length + first.responseTokens.length)).toEqual([...contextOne, ...first.responseTokens]);
      expect(contextThree.slice(0, contextTwo.length + second.responseTokens.length)).toEqual([...contextTwo, ...second.responseTokens]);
    });

    it('keeps at most historyTurns past turns, newest first', () => {
      const builder = new ContextBuilder(tokenizer, 100, 1);
      const context = builder.build([turn('P_', '<answer> Up </answer>', 0, 2), turn('_P', '<answer> Down </answer>', 1, 1)], 'G_', 0);
      expect(words(context)).toBe('<bos> <obs> _ P <left> 1 <resp> <answer> Down </answer> <eos> <rwd> 1 <obs> G _ <left> 0 <resp>');
    });

    it('drops the oldest turns that do not fit the budget', () => {
      const history = [turn('P_', '<answer> Up </answer>', 0, 2), turn('_P', '<answer> Down </answer>', 0, 1)];
      // <bos> + current block (<obs> G _ <left> 0 <resp>: 6) + one history block (6 + 4 + <rwd> 0 = 12) = 19; two need 31.
      const builder = new ContextBuilder(tokenizer, 30, 5);
      const context = builder.build(history, 'G_', 0);
      expect(context.length).toBe(1 + 12 + 6);
      expect(words(context)).toBe('<bos> <obs> _ P <left> 1 <resp> <answer> Down </answer> <eos> <rwd> 0 <obs> G _ <left> 0 <resp>');
    });

    it('cuts the oldest tokens of an observation that alone exceeds the budget, never throwing', () => {
      const builder = new ContextBuilder(tokenizer, 6, 5);
      const context = builder.build([], 'P_G_\n__', 10);
      expect(context.length).toBe(6);
      expect(words(context)).toBe('<bos> _ <left> 1 0 <resp>');
    });
  });

  describe('sign history (jobs submitted before the ragen history)', () => {
    it('writes the reward sign, no actions left, and drops the EOS', () => {
      const builder = new ContextBuilder(tokenizer, 100, 5, 'sign');
      const context = builder.build([turn('P_', '<answer> Up </answer>', -0.1, 10)], '_P', 9);
      expect(words(context)).toBe('<bos> <obs> P _ <resp> <answer> Up </answer> <r-> <obs> _ P <resp>');
    });
  });

  it('writes numbers rounded to two decimals in their shortest form', () => {
    expect([0.30000000000000004, -0.1 * 3, 10.9, -0, 1, -1.605, 100].map(formatHistoryNumber)).toEqual(['0.3', '-0.3', '10.9', '0', '1', '-1.6', '100']);
  });

  it('never lets the policy emit the history-only tokens', () => {
    const forbidden = tokenizer.forbiddenIds.map((i) => tokenizer.tokens[i]);
    expect(forbidden).toEqual(expect.arrayContaining(['<left>', '<rwd>', '0', '9', '-', '.']));
    expect(forbidden).not.toContain('<answer>');
  });
});
