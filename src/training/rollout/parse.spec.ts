import { formatResponse, parseResponse } from './parse';

describe('parseResponse', () => {
  it('reads think, answer and ||-separated actions', () => {
    const parsed = parseResponse('<think> t1 t2 </think> <answer> Up || Left </answer>', true);
    expect(parsed).toEqual({ formatValid: true, think: 't1 t2', answer: 'Up || Left', actions: ['Up', 'Left'] });
  });

  it('rejects a missing think block in think mode, and accepts it without', () => {
    expect(parseResponse('<answer> Up </answer>', true).formatValid).toBe(false);
    expect(parseResponse('<answer> Up </answer>', false)).toEqual({ formatValid: true, think: null, answer: 'Up', actions: ['Up'] });
  });

  it.each([
    ['trailing text', '<think> t1 </think> <answer> Up </answer> Left'],
    ['unclosed answer', '<think> t1 </think> <answer> Up'],
    ['empty answer', '<think> t1 </think> <answer> </answer>'],
    ['only separators', '<think> t1 </think> <answer> || </answer>'],
    ['answer before think', '<answer> Up </answer> <think> t1 </think>'],
  ])('treats %s as a format error', (_, text) => {
    expect(parseResponse(text, true).formatValid).toBe(false);
  });

  it('formats what it parses', () => {
    expect(parseResponse(formatResponse('t3', ['Down', 'Right'], true), true).actions).toEqual(['Down', 'Right']);
    expect(parseResponse(formatResponse('', ['Down'], false), false).actions).toEqual(['Down']);
  });
});
